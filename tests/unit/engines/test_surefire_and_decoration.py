"""Maven surefire's passing test classes are counted, not kept; a filter's decoration lines
go into the view.

The surefire lines follow what ``mvn -B test`` printed on this machine (Maven 3.8,
surefire 3.5.2, JUnit 5) for the corpus project of :func:`workers.bench.toolchains.maven_captures`;
the older spelling (``Time elapsed: 0.05 sec``, no ``in``) is surefire 2's.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.sound import compress_soundly, tool_output
from workers.core.tokens import TokenCounter
from workers.engines._filters import FilterError, builtin_filters, load_file
from workers.engines.toolfilter.plan import DROP, Plan
from workers.engines.toolfilter.render import _silent, filter_text
from workers.fidelity.facts import critical_lines
from workers.markers.structured_view import HEADER_LINE

SEPARATOR = "[INFO] " + "-" * 72
CLASSES = [f"shop.Module{k}Test" for k in range(24)]


def surefire_report(classes: list[str] = CLASSES, failing: str = "shop.Module7Test") -> str:
    """``mvn -B test`` of a project whose test classes pass except ``failing``'s."""
    out = [
        "[INFO] Scanning for projects...",
        "[INFO] ",
        "[INFO] -------------------------< example.shop:shop >--------------------------",
        "[INFO] Building shop 1.4.0",
        "[INFO] --------------------------------[ jar ]---------------------------------",
        "[INFO] ",
        "[INFO] --- maven-surefire-plugin:3.5.2:test (default-test) @ shop ---",
        "[INFO] ",
        "[INFO] -------------------------------------------------------",
        "[INFO]  T E S T S",
        "[INFO] -------------------------------------------------------",
    ]
    for k, name in enumerate(classes):
        out.append(f"[INFO] Running {name}")
        if name == failing:
            out += [
                f"[ERROR] Tests run: 8, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.085 s"
                f" <<< FAILURE! -- in {name}",
                f"[ERROR] {name}.total2 -- Time elapsed: 0.021 s <<< FAILURE!",
                "org.opentest4j.AssertionFailedError: expected: <2129> but was: <2130>",
                "\tat org.junit.jupiter.api.AssertEquals.assertEquals(AssertEquals.java:150)",
                f"\tat {name}.total2({name.split('.')[-1]}.java:7)",
                "",
            ]
        elif k == 11:  # surefire logs a class with skipped tests as a warning
            out.append(
                f"[WARNING] Tests run: 6, Failures: 0, Errors: 0, Skipped: 2, "
                f"Time elapsed: 0.031 s -- in {name}"
            )
        else:
            out.append(
                f"[INFO] Tests run: {5 + k % 4}, Failures: 0, Errors: 0, Skipped: 0, "
                f"Time elapsed: 0.0{k % 10}1 s -- in {name}"
            )
    out += [
        "[INFO] ",
        "[INFO] Results:",
        "[INFO] ",
        "[ERROR] Failures: ",
        f"[ERROR]   {failing.split('.')[-1]}.total2:7 expected: <2129> but was: <2130>",
        "[INFO] ",
        "[ERROR] Tests run: 170, Failures: 1, Errors: 0, Skipped: 12",
        "[INFO] ",
        SEPARATOR,
        "[INFO] BUILD FAILURE",
        SEPARATOR,
    ]
    return "\n".join(out) + "\n"


def test_a_passing_test_class_is_not_a_fact_and_a_failing_one_is() -> None:
    text = surefire_report()
    facts = {line for _, line in critical_lines(text, "tool_result", "mvn -B test")}
    assert not any(line.startswith("[INFO] Tests run:") for line in facts)
    # a class with skipped tests is a warning: which tests did not run is news
    assert any("Skipped: 2" in line for line in facts)
    for line in (
        "[ERROR] Tests run: 8, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.085 s"
        " <<< FAILURE! -- in shop.Module7Test",
        "[ERROR] shop.Module7Test.total2 -- Time elapsed: 0.021 s <<< FAILURE!",
        "[ERROR] Tests run: 170, Failures: 1, Errors: 0, Skipped: 12",
        "[ERROR]   Module7Test.total2:7 expected: <2129> but was: <2130>",
    ):
        assert line in facts, line


@pytest.mark.parametrize(
    ("line", "passing"),
    [
        ("Tests run: 5, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.05 sec", True),
        (
            "Tests run: 5, Failures: 0, Errors: 0, Skipped: 1, Time elapsed: 0.5 s - in a.BTest",
            True,
        ),
        ("[INFO] Tests run: 9, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 1.2 s", True),
        ("Tests run: 5, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.05 sec", False),
        ("Tests run: 5, Failures: 0, Errors: 2, Skipped: 0, Time elapsed: 0.05 sec", False),
        ("[WARNING] Tests run: 5, Failures: 0, Errors: 0, Skipped: 5, Time elapsed: 0.1 s", False),
        ("[INFO] Tests run: 61, Failures: 0, Errors: 0, Skipped: 0", False),  # the totals
    ],
)
def test_surefire_passing_lines_in_each_spelling(line: str, passing: bool) -> None:
    facts = critical_lines(line + "\n", "tool_result", "mvn test")
    assert (facts == frozenset()) is passing, facts


@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_passing_test_classes_collapse_to_a_count(mode: str) -> None:
    text = surefire_report()
    compressed, saved = compress_soundly(tool_output(text, "mvn -B test"), mode)
    assert "passing tests" in compressed
    assert "-- in shop.Module3Test" not in compressed
    assert "Failures: 1" in compressed and "<<< FAILURE! -- in shop.Module7Test" in compressed
    assert "\tat shop.Module7Test.total2(Module7Test.java:7)" in compressed
    assert "Skipped: 2, Time elapsed: 0.031 s -- in shop.Module11Test" in compressed
    assert "[ERROR] Tests run: 170, Failures: 1, Errors: 0, Skipped: 12" in compressed
    assert saved > 0.5, saved


def _maven_plan(text: str) -> Plan:
    filt = builtin_filters().select("mvn -B test", "bash", text)
    assert filt is not None and filt.name == "maven"
    plan = Plan(text, filt)
    plan.budget()
    return plan


def test_maven_rule_lines_are_decoration_and_its_downloads_are_not() -> None:
    text = "\n".join(
        [
            "[INFO] Scanning for projects...",
            "[INFO] Downloading from central: https://repo.maven.apache.org/maven2/a/b/1/b-1.pom",
            SEPARATOR,
            "[INFO] ",
            "[INFO] BUILD SUCCESS",
        ]
    )
    plan = _maven_plan(text)
    assert [plan.cls[k] == DROP for k in range(5)] == [False, True, True, True, False]
    # downloads say which artifacts were fetched: a marker names them where they were
    assert [_silent(plan, k) for k in (1, 2, 3)] == [False, True, True]


def test_decoration_of_a_long_build_goes_into_the_view() -> None:
    modules = []
    for k in range(30):
        modules += [
            SEPARATOR,
            f"[INFO] Building module-{k} 1.0  [{k + 1}/30]",
            SEPARATOR,
            "[INFO] ",
        ]
    text = "\n".join(["[INFO] Scanning for projects...", *modules, "[INFO] BUILD SUCCESS"]) + "\n"
    result = filter_text(text, _maven_plan(text).filt, TokenCounter("cl100k_base"))
    assert result is not None
    assert HEADER_LINE in result.text
    assert "separator line" in result.text.split(HEADER_LINE)[1]
    assert SEPARATOR not in result.text
    # every module's line stays where it was, with no marker between them
    shown = result.text.split(HEADER_LINE)[0].splitlines()
    assert shown[1:31] == [f"[INFO] Building module-{k} 1.0  [{k + 1}/30]" for k in range(30)]


def _filter_file(tmp_path: Path, rule: str) -> Path:
    path = tmp_path / "f.json"
    path.write_text(
        '{"name": "f", "match": {"command": ["tool\\\\b"]}, ' + rule + "}", encoding="utf-8"
    )
    return path


def test_decoration_is_for_drop_rules_and_a_boolean(tmp_path: Path) -> None:
    ok = load_file(_filter_file(tmp_path, '"drop": [{"pattern": "^=+$", "decoration": true}]'))
    assert [r.decoration for r in ok.drop_rules] == [True]
    plain = load_file(_filter_file(tmp_path, '"drop": [{"pattern": "^=+$"}, "^-+$"]'))
    assert [r.decoration for r in plain.drop_rules] == [False, False]
    for bad in (
        '"keep": [{"pattern": "^=+$", "decoration": true}]',
        '"collapse": [{"pattern": "^=+$", "decoration": true}]',
        '"drop": [{"pattern": "^=+$", "decoration": "yes"}]',
    ):
        with pytest.raises(FilterError, match="decoration"):
            load_file(_filter_file(tmp_path, bad))


def test_counted_is_for_drop_rules_and_not_with_decoration(tmp_path: Path) -> None:
    ok = load_file(_filter_file(tmp_path, '"drop": [{"pattern": "^ok ", "counted": true}]'))
    assert [(r.counted, r.decoration) for r in ok.drop_rules] == [(True, False)]
    for bad in (
        '"keep": [{"pattern": "^ok ", "counted": true}]',
        '"drop": [{"pattern": "^ok ", "counted": 1}]',
        '"drop": [{"pattern": "^ok ", "counted": true, "decoration": true}]',
    ):
        with pytest.raises(FilterError, match=r"counted|decoration"):
            load_file(_filter_file(tmp_path, bad))


def _vitest_report() -> str:
    """``npx vitest run``: a file whose two failures split its passing tests into short runs,
    and a file of 30 passing tests in a row before its one failure."""
    out = [
        "",
        " RUN  v4.1.12 /home/dev/webshop",
        "",
        " ❯ test/cart.test.js (10 tests | 2 failed) 18ms",
    ]
    for k in range(10):
        mark = "×" if k in (3, 6) else "✓"
        out.append(f"     {mark} cart case {k} {k % 3}ms")
    out.append(" ❯ test/rates.test.js (31 tests | 1 failed) 40ms")
    out += [f"     ✓ rate of {k} units 0ms" for k in range(30)]
    out += ["     × rate of 30 units 2ms", ""]
    for name in ("test/cart.test.js > cart > cart case 3", "test/cart.test.js > cart > cart case 6",
                 "test/rates.test.js > rates > rate of 30 units"):  # fmt: skip
        out += [f" FAIL  {name}", "AssertionError: expected 2 to be 3 // Object.is equality", ""]
    out += [" Test Files  2 failed (2)", "      Tests  3 failed | 38 passed (41)", ""]
    return "\n".join(out)


@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_short_runs_of_passing_tests_go_into_the_view_a_long_run_keeps_its_marker(
    mode: str,
) -> None:
    text = _vitest_report()
    compressed, saved = compress_soundly(tool_output(text, "npx vitest run"), mode)
    view, _, note = compressed.partition(HEADER_LINE)
    assert "✓ cart case" not in view  # 8 passing tests in runs of 2 or 3: counted in the note
    assert "8 passing tests" in note
    # 30 in a row pay for a marker of their own where they were
    assert re.search(r"rates\.test\.js \(31 tests \| 1 failed\) 40ms\n… 30 \w", view)
    for k in (3, 6):
        assert f"     × cart case {k} {k % 3}ms" in view
    assert "      Tests  3 failed | 38 passed (41)" in view
    assert saved > 0.3, saved


def test_a_fact_on_a_decoration_line_stays_where_it_was() -> None:
    bar = "   " + "━" * 40
    lines = ["Collecting shop-core==2.1.0"]
    for k in range(20):
        lines += [
            f"Downloading lib{k}-1.0-py3-none-any.whl (62 kB)",
            f"{bar} 62.4/62.4 kB 8.9 MB/s",
        ]
    lines[21] = f"{bar} 0.0/3.2 MB connection failed"
    lines.append("Successfully installed " + " ".join(f"lib{k}-1.0" for k in range(20)))
    text = "\n".join(lines) + "\n"
    compressed, _ = compress_soundly(
        tool_output(text, "pip install -r requirements.txt"), "standard"
    )
    shown = compressed.split(HEADER_LINE)[0].splitlines()
    assert f"{bar} 0.0/3.2 MB connection failed" in shown
    assert shown.count(f"{bar} 62.4/62.4 kB 8.9 MB/s") == 0


def test_a_line_with_a_carriage_return_inside_is_never_silent() -> None:
    # npm redraws its progress bar with \r: what follows the last \r is what the terminal showed
    lines = []
    for k in range(25):
        lines += [f"npm WARN deprecated pkg{k}@1.0.0: use pkg{k}-next", "⸨##########⸩ ⠧ reify:pkg"]
    lines[13] += "\rnpm ERR! code E404"
    text = "\n".join(lines) + "\n"
    compressed, _ = compress_soundly(tool_output(text, "npm install"), "standard")
    assert "npm ERR! code E404" in compressed.split(HEADER_LINE)[0]


def test_indented_build_output_is_no_progress_bar() -> None:
    # pip's subprocess block indents what the build printed: it is not a progress bar
    text = "\n".join(
        [
            "  error: subprocess-exited-with-error",
            "  × Getting requirements to build wheel did not run successfully.",
            "  ╰─> [3 lines of output]",
            "      running egg_info",
            "      CMake must be installed to build myapp._native",
            "      [end of output]",
        ]
    )
    filt = builtin_filters().select("pip install .", "bash", text)
    assert filt is not None and filt.name == "pip"
    plan = Plan(text, filt)
    labels = [plan.labels[k].text if plan.labels[k] else "" for k in range(len(plan.lines))]
    assert "progress bars" not in labels


def _go_test_report() -> str:
    """``go test -v``: tables of subtests, two passing before each failing one, and a skip."""
    out = []
    for t in range(6):
        out.append(f"=== RUN   TestDiscountTable{t}")
        out += [f"=== RUN   TestDiscountTable{t}/case_{c}" for c in range(3)]
        out += [f"    pricing_test.go:{20 + t}: Discount(80, 25) = 60, want 61"]
        out.append(f"--- FAIL: TestDiscountTable{t} (0.00s)")
        out += [f"    --- PASS: TestDiscountTable{t}/case_{c} (0.00s)" for c in range(2)]
        out.append(f"    --- FAIL: TestDiscountTable{t}/case_2 (0.00s)")
    out += ["=== RUN   TestWindowsPaths", "    paths_test.go:9: needs Windows"]
    out += [
        "--- SKIP: TestWindowsPaths (0.00s)",
        "FAIL",
        "FAIL\texample.com/pricing\t0.005s",
        "FAIL",
    ]
    return "\n".join(out) + "\n"


def test_short_paid_runs_of_passing_tests_go_into_the_view_a_skip_stays() -> None:
    compressed, _ = compress_soundly(tool_output(_go_test_report(), "go test -v ./..."), "standard")
    view, _, note = compressed.partition(HEADER_LINE)
    assert "--- PASS" not in view and "passing tests" in note
    for t in range(6):
        assert f"    --- FAIL: TestDiscountTable{t}/case_2 (0.00s)" in view
    assert "--- SKIP: TestWindowsPaths (0.00s)" in view or "skipped test" in view


VITEST_RUN = (
    Path(__file__).resolve().parents[2] / "data" / "holdout-build" / "vitest-run.txt"
).read_text(encoding="utf-8")


@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_vitest_separators_between_failures_are_decoration(mode: str) -> None:
    # ``npx vitest run`` (vitest 2.1, default reporter) over six test files written for this
    # test on this machine, four failing tests: each failure ends in a ``⎯⎯⎯[1/4]⎯`` rule
    # of 80 tokens, a third of the report once its passing files are gone
    text, saved = compress_soundly(tool_output(VITEST_RUN, "npx vitest run"), mode)
    assert "[1/4]" not in text and "[4/4]" not in text
    assert "separator line" in text  # the view's note counts them
    assert "⎯⎯⎯⎯⎯⎯⎯ Failed Tests 4 ⎯⎯⎯⎯⎯⎯⎯" in text
    for line in VITEST_RUN.splitlines():
        if line.startswith((" FAIL ", "AssertionError")) or line.lstrip().startswith("❯ vt/"):
            assert line.strip() in text
    assert saved > 0.45  # 0.25 with them


MVN_TEST = (
    Path(__file__).resolve().parents[2] / "data" / "holdout-build" / "mvn-test.txt"
).read_text(encoding="utf-8")
ADVICE = (
    "[ERROR] -> [Help 1]",
    "[ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.",
    "[ERROR] Re-run Maven using the -X switch to enable full debug logging.",
    "[ERROR] [Help 1] http://cwiki.apache.org/confluence/display/MAVEN/MojoFailureException",
)


@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_maven_advice_after_a_failure_is_help_text(mode: str) -> None:
    # ``mvn -B test`` (surefire 3.5.2, JUnit 5) of eight classes written for this test on this
    # machine, 132 tests, five failing: after BUILD FAILURE maven says how to get more output,
    # the same ten lines after every failed build, each behind ``[ERROR]``
    facts = {line for _, line in critical_lines(MVN_TEST, "tool_result", "mvn -B test")}
    for line in ADVICE:
        assert line in MVN_TEST and line not in facts
    text, _ = compress_soundly(tool_output(MVN_TEST, "mvn -B test"), mode)
    for line in ADVICE:
        assert line not in text
    assert "maven help lines" in text
    goal = "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:3.5.2"
    assert goal in text
    assert "[ERROR]   HeatIndexTest.clamp8:13 expected: <67> but was: <66>" in text
    assert "[ERROR] Tests run: 132, Failures: 4, Errors: 1, Skipped: 0" in text


def test_a_few_passing_classes_between_failures_go_into_the_view_with_their_frames() -> None:
    # the same ``mvn -B test``: after a failing test's frame in user code, JUnit's three
    # frames, a blank line, then two classes that passed (``[INFO] Running X`` and its
    # ``Tests run:`` line each): eight lines, two passing tests; the run kept a marker of its
    # own (``… 3 library frames, 2 passing tests omitted``) as a run of 6 lines or more
    text, saved = compress_soundly(tool_output(MVN_TEST, "mvn -B test"), "standard")
    view = text.split(HEADER_LINE)[0]
    # no marker of its own for a run of frames and two passing classes
    assert not [line for line in view.splitlines() if "passing test" in line]
    assert "[ERROR]   HeatIndexTest.clamp8:13 expected: <67> but was: <66>" in view
    assert saved > 0.52  # 0.51 before
