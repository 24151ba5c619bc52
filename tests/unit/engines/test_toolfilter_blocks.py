"""Test reports and diagnostics recognised by their lines and compressed as blocks (issue 13).

The outputs are real: :mod:`tests.support.runner_samples` captured them once
from this machine's toolchains (pytest, unittest, go test -v, cargo test,
node --test, vitest, jest, mocha, ctest, cargo build, gcc, eslint, ...).
Each one, under its own command and under commands nobody wrote a filter
for, must keep its failing test ids, assertion lines, locations and summary
visible, lose no critical fact, expand back exactly, and save at least the
share measured when this test was written (a few points of slack).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.runner_samples import load
from tests.support.sound import compress_soundly, tool_output
from tests.unit.fidelity.test_facts_families import conversation
from tests.unit.fidelity.test_facts_families import run as run_conversation
from workers.core.offload import MemoryStore
from workers.core.settings import Settings
from workers.core.tokens import TokenCounter
from workers.engines._filters import builtin_filters
from workers.engines.toolfilter import filter_text
from workers.engines.toolfilter.blocks import analyse
from workers.fidelity.facts import critical_lines, line_shape
from workers.markers import ansi, structured_view
from workers.markers.stash import CX_MARKER, expand_offload
from workers.pipeline.runner import Pipeline
from workers.pipeline.visibility import lost_facts
from workers.testing import expanded_record

SAMPLES = {s["name"]: s for s in load()}
UNKNOWN = ("./run_tests.sh", "make check", "python3 x.py")
PIPELINES = {m: Pipeline(Settings(mode=m)) for m in ("standard", "aggressive")}

# standard-mode savings (%) at least, per sample (measured: see the module docstring)
MIN_SAVED = {
    "pytest": 50,
    "unittest": 65,
    "go-test-v": 78,
    "cargo-test": 65,
    "node-test": 68,
    "vitest": 40,
    "jest": 58,
    "mocha": 38,
    "ctest": 70,
    "cargo-build": 45,
    "gcc": 50,
    "eslint": 25,  # (its errors stay one per place: an error is never folded into another)
    "tsc-pretty": 18,
    "mvn-test": 50,
}
_LOCATION = re.compile(r"^(\S+?:\d+:\d+)|^(\d+:\d+)\s")


def _visible(fact: str, text: str) -> bool:
    """The fact is readable: as written, or (a repeated warning) folded into a shown one.

    A repeat of a warning kind counts when a visible line has its shape (the
    gate's rule) and its location is listed (the marker note lists them; a note that
    gathers one file's repeats names the file once, ``… main.c: warning ... at 4:33 5:33``).
    """
    if fact in text:
        return True
    fact = ansi.strip(fact)[0]  # the ansi engine shows the plain text
    if fact in text:
        return True
    if line_shape(fact) not in {line_shape(x.strip()[:600]) for x in text.splitlines()}:
        return False
    where = _LOCATION.match(fact)
    if where is None or (where.group(1) or where.group(2)) in text:
        return True
    if where.group(1) is None:
        return False
    file, _, place = where.group(1).partition(":")
    return any(line.startswith(f"… {file}: ") and f" {place}" in line for line in text.splitlines())


def _trimmed(text: str) -> str:
    """The text without trailing blanks (the whitespace engine's documented normalisation)."""
    return "\n".join(line.rstrip() for line in text.split("\n")).rstrip("\n")


def _record(sample: dict[str, Any], command: str) -> dict[str, Any]:
    return {"id": "r", "kind": "tool_output", "content": sample["output"], "command": command}


def test_the_fixture_holds_every_family() -> None:
    assert set(MIN_SAVED) <= set(SAMPLES)
    for name in MIN_SAVED:
        assert SAMPLES[name]["facts"], name


@pytest.mark.parametrize("name", sorted(MIN_SAVED))
@pytest.mark.parametrize("command", ["own", *UNKNOWN])
def test_facts_stay_and_savings_are_high_in_standard_mode(name: str, command: str) -> None:
    sample = SAMPLES[name]
    record = _record(sample, sample["command"] if command == "own" else command)
    out = PIPELINES["standard"].run_raw(record)
    assert out.rejections == []
    text = out.record["content"]
    assert [f for f in sample["facts"] if not _visible(f, text)] == []
    assert lost_facts(record, out.record) == []
    assert out.stats["saved_pct"] >= MIN_SAVED[name], out.stats["saved_pct"]
    assert _trimmed(expanded_record(out)["content"]) == _trimmed(sample["output"])


@pytest.mark.parametrize("name", sorted(MIN_SAVED))
def test_critical_facts_stay_in_an_old_message_in_aggressive_mode(name: str) -> None:
    sample = SAMPLES[name]

    class Shim:  # the shape test_facts_families' conversation reads
        output = sample["output"]
        command = "./run_tests.sh"

    shim: Any = Shim()
    shim.name = name
    outcome = run_conversation(conversation(shim, "aggressive"))
    text = outcome.record["messages"][3]["content"]
    critical = {line for _, line in critical_lines(sample["output"], "tool_result")}
    must = [f for f in sample["facts"] if f in critical]
    assert must, "every family has facts the gate knows"
    assert [f for f in must if not _visible(f, text)] == []
    assert len(text) < len(sample["output"]) * 0.7


def test_passing_tests_collapse_to_a_count() -> None:
    sample = SAMPLES["go-test-v"]
    out = PIPELINES["standard"].run_raw(_record(sample, "./run_tests.sh"))
    text = out.record["content"]
    notes = [m.group(0) for m in CX_MARKER.finditer(text)]
    assert any("passing tests" in n for n in notes), notes  # go-test's own label
    for case in range(40, 45):
        assert f"--- FAIL: TestDiscount/case_{case} (0.00s)" in text
    assert "--- PASS: TestDiscount/case_3 (0.00s)" not in text
    assert "=== RUN   TestDiscount/case_3\n" not in text


def test_a_runner_without_a_filter_gets_its_passing_tests_counted() -> None:
    sample = SAMPLES["ctest"]
    text = PIPELINES["standard"].run_raw(_record(sample, "./run_tests.sh")).record["content"]
    assert re.search(r"… \d+ passing tests omitted <<cx:", text), text
    assert " 8/25 Test  #8: vec_case_07 ......................***Failed    0.00 sec" in text
    assert "92% tests passed, 2 tests failed out of 25" in text
    assert "Passed" not in text


def test_cargo_test_keeps_the_panic_the_assertion_and_the_user_frames_only() -> None:
    text = (
        PIPELINES["standard"].run_raw(_record(SAMPLES["cargo-test"], "./ci.sh")).record["content"]
    )
    assert "  left: 501" in text and " right: 500" in text
    assert "             at ./src/lib.rs:161:9" in text  # the innermost frame in user code
    assert "/rustc/" not in text  # frames of the standard library are stashed
    # stashed behind a marker where they were, or (decoration) in the output's one view
    assert re.search(r"… \d+ library frames omitted <<cx:|<<cx:view>>… .*library frames", text)


def test_diagnostics_keep_headline_and_location_and_stash_the_snippet() -> None:
    text = PIPELINES["standard"].run_raw(_record(SAMPLES["cargo-build"], "make")).record["content"]
    assert "error[E0277]: cannot add `u32` to `u64`" in text
    assert " --> src/lib.rs:3:31" in text
    assert "  = help: the trait `Add<u32>` is not implemented for `u64`" not in text
    assert re.search(r"help lines omitted|<<cx:view>>… .*help lines", text)


def test_repeats_of_one_warning_kind_per_file_collapse_with_every_location() -> None:
    text = PIPELINES["standard"].run_raw(_record(SAMPLES["gcc"], "./build.sh")).record["content"]
    assert "main.c:3:33: warning: unused variable 'unused0' [-Wunused-variable]" in text
    assert "unused variable 'unused3'" not in text
    note = next(line for line in text.splitlines() if "-Wunused-variable 5 more times" in line)
    assert note.startswith("… warning -Wunused-variable 5 more times at main.c:4:33")
    for loc in ("4:33", "5:33", "6:33", "7:33", "8:33"):
        assert f" main.c:{loc}" in note  # each place as the compiler wrote it
    # an error is never folded into another
    assert "main.c:12:12: error: 'undefined_total' undeclared (first use in this function)" in text
    rust = PIPELINES["standard"].run_raw(_record(SAMPLES["cargo-build"], "make")).record["content"]
    for line in range(7, 17):
        assert f"--> src/lib.rs:{line}:9" in rust


def test_errors_at_two_places_stay_two_facts() -> None:
    lines = [
        "src/a.c:3:5: error: 'x' undeclared",
        "    3 |     x = 1;",
        "      |     ^",
        "src/a.c:9:5: error: 'x' undeclared",
        "    9 |     x = 2;",
        "      |     ^",
    ]
    found = analyse(lines, lambda i: False)
    assert found.family == "diagnostics"
    assert found.repeats == {}
    assert set(found.drop) == {1, 2, 4, 5}


def test_plain_output_has_no_structure() -> None:
    prose = [f"step {i}: copied file_{i}.txt" for i in range(50)]
    assert analyse(prose, lambda i: False).family == ""
    listing = [f"-rw-r--r-- 1 dev dev {i} Dec  1 09:00 test_{i}.py" for i in range(50)]
    assert analyse(listing).drop == {}


def test_a_report_under_the_generic_filter_is_stashed_exactly() -> None:
    sample = SAMPLES["node-test"]
    generic = builtin_filters().by_name["generic"]
    result = filter_text(sample["output"], generic, TokenCounter())
    assert result is not None
    assert "… 30 passing tests omitted <<cx:" in result.text
    store = MemoryStore()
    store.put_many(result.stash)
    missing: list[str] = []
    restored = structured_view.decode(expand_offload(result.text, store, missing))
    assert restored == sample["output"] and missing == []


def test_rustc_repeats_fold_across_files_gcc_repeats_per_file() -> None:
    # rustc's headline names no file: the one shown stands for its kind in every file (the
    # note lists each ``-->`` as written); a gcc headline holds its file: b.c is a fact of its own
    block = [
        "warning: unneeded `return` statement",
        "  --> src/{f}.rs:{n}:5",
        "   |",
        "{n} |     return x;",
        "   |     ^^^^^^^^^ help: remove `return`: `x`",
        "",
    ]
    lines = [line.format(f=f, n=n) for f, n in (("a", 10), ("a", 20), ("b", 30)) for line in block]
    found = analyse(lines, lambda i: False)
    assert sorted(found.repeats) == [6, 12]
    assert found.repeats[6].where == "--> src/a.rs:20:5"
    assert found.repeats[12].where == "--> src/b.rs:30:5"
    assert found.repeats[6].kind == "warning unneeded statement"
    gcc = [
        f"src/{f}.c:{n}:9: warning: unused variable 'tmp' [-Wunused-variable]"
        for f, n in (("a", 10), ("a", 20), ("b", 30))
    ]
    found = analyse(gcc, lambda i: False)
    assert sorted(found.repeats) == [1]
    assert found.repeats[1].where == "src/a.c:20:9"


def test_an_output_without_command_or_tool_is_filtered_when_it_is_a_report() -> None:
    sample = SAMPLES["ctest"]
    record = {"id": "r", "kind": "tool_output", "content": sample["output"]}
    assert builtin_filters().detect(None, None, sample["output"]).filter is None
    out = PIPELINES["standard"].run_raw(record)
    toolfilter = next(e for e in out.stats["engines"] if e["engine"] == "toolfilter")
    assert toolfilter["details"]["filters_hit"] == {"generic": 1}
    assert toolfilter["details"]["structures"] == {"report": 1}
    assert out.stats["saved_pct"] >= MIN_SAVED["ctest"]


@pytest.mark.parametrize(
    ("name", "family"),
    [("ctest", "test report"), ("node-test", "test report"), ("javac", "diagnostics")],
)
def test_explain_names_the_structure_of_an_output_with_no_filter(name: str, family: str) -> None:
    from workers.engines.toolfilter import output_family
    from workers.messages.model import Unit

    unit = Unit(
        uid="m1",
        index=1,
        role="tool",
        kind="tool_result",
        text=SAMPLES[name]["output"],
        path=("messages", 1, "content"),
        command="./run.sh",
        tool_name="bash",
    )
    assert output_family(unit).name == family


@pytest.mark.parametrize(
    "unit",
    [
        "a > ",
        "a::",
        "a.py::",
        "=== passed ",
        "a:1:",
        "\t",
        "  1:1  warning  a",
        "a(b)  Time elapsed: ",
    ],
)
def test_hostile_lines_take_linear_time(unit: str) -> None:
    import time

    from workers.engines.toolfilter.blocks import structure_probes

    one_line = unit * (200_000 // len(unit))
    many = "\n".join([unit * 40] * 5000)
    for text in (one_line, many, "test a ... ok\n" * 3 + many):
        start = time.process_time()
        structure_probes(text)
        analyse(text.split("\n"), lambda i: False)
        assert time.process_time() - start < 1.5, (unit, len(text))


def test_the_gate_folds_one_warning_kind_per_file_and_never_two_errors() -> None:
    from workers.fidelity.lossy import hidden_critical

    critical = sorted(critical_lines(SAMPLES["gcc"]["output"], "tool_result"))
    first = "main.c:3:33: warning: unused variable 'unused0' [-Wunused-variable]"
    assert ("error_line", first) in critical
    shown = [first]
    hidden = dict(hidden_critical(critical, shown))
    assert (
        "main.c:5:33: warning: unused variable 'unused2' [-Wunused-variable]" not in hidden.values()
    )
    # another kind, another file, or an error: facts of their own
    assert (
        "main.c:8:12: warning: 'helper5' defined but not used [-Wunused-function]"
        in hidden.values()
    )
    assert line_shape("b.c:4:33: warning: unused variable 'x' [-Wunused-variable]") != line_shape(
        "main.c:4:33: warning: unused variable 'x' [-Wunused-variable]"
    )
    assert line_shape("main.c:3:5: error: 'x' undeclared") != line_shape(
        "main.c:9:5: error: 'y' undeclared"
    )
    assert line_shape("main.c:3:5: error: 'x' undeclared") != line_shape(
        "main.c:9:5: error: 'x' undeclared"
    )
    # a log warning keeps its quoted names apart (only compiler warnings fold them)
    assert line_shape("WARNING user 'bob' is locked") != line_shape("WARNING user 'eve' is locked")


def test_jest_console_log_blocks_are_dropped_warn_and_error_blocks_are_not() -> None:
    lines = [
        "FAIL src/cart.test.js",
        "  ● Console",
        "",
        "    console.log",
        "      adding item 3",
        "",
        "      at Object.log (src/cart.test.js:5:13)",
        "",
        "    console.error",
        "      payment gateway refused the card",
        "",
        "      at Object.error (src/cart.test.js:9:13)",
        "",
        "  ● cart › totals the items",
        "",
        "    Expected: 10",
        "    Received: 9",
        "",
        "Tests:       1 failed, 4 passed, 5 total",
    ]
    found = analyse(lines)
    assert found.family == "report"
    console = {k for k, label in found.drop.items() if label == "console output lines"}
    assert {1, 3, 4, 6} <= console  # the section header and the console.log block
    assert not console & {8, 9, 11}  # console.error's block goes by the other rules
    assert 13 not in found.drop and 15 in found.keep  # the failure header, its Expected line


def test_cargo_should_panic_and_doc_test_lines_are_results() -> None:
    lines = [
        "running 5 tests",
        "test interval::tests::new_rejects_reversed - should panic ... ok",
        "test money::tests::rounds ... FAILED",
        "test src/money.rs - money::Money::split (line 48) ... ok",
        "test src/interval.rs - interval::merge (line 44) ... FAILED",
        "test src/ringbuf.rs - ringbuf::RingBuf<T>::pop_front (line 24) ... ignored",
        "",
        "test result: FAILED. 2 passed; 2 failed; 1 ignored; 0 measured; 0 filtered out",
    ]
    found = analyse(lines)
    assert found.family == "report"
    assert found.drop.get(1) == "passing tests" and found.drop.get(3) == "passing tests"
    assert found.drop.get(5) == "ignored tests"
    assert 2 not in found.drop and 4 not in found.drop  # the failures stay


def test_jest_29_console_log_calls_without_a_console_section_are_dropped() -> None:
    # ``npx jest --verbose`` (jest 29) over six test files written for this test on this
    # machine: every ninth test calls console.log; jest 29 prints each call as its own block
    # (``  console.log``, the message, its ``at`` line) above the file's result line, with no
    # ``● Console`` header
    path = Path(__file__).resolve().parents[2] / "data" / "holdout-build" / "jest-console.txt"
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    found = analyse(lines)
    calls = [i for i, line in enumerate(lines) if line == "  console.log"]
    assert len(calls) == 21
    for i in calls:
        assert found.drop.get(i) == "console output lines"
        assert found.drop.get(i + 1) == "console output lines"  # ``    progress 9 of 40``
        assert found.drop.get(i + 3) == "console output lines"  # its ``at`` line
    # the failures and their frames in user code are not touched
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("● ", "✕ ", "SyntaxError", "TypeError")):
            assert i not in found.drop, line
    compressed, saved = compress_soundly(tool_output(text, "npx jest --verbose"), "standard")
    assert "progress 9 of 40" not in compressed
    assert saved > 0.7  # 0.55 with them


def test_a_describe_group_whose_tests_all_pass_goes_with_them() -> None:
    # ``npx jest --verbose`` (jest 29) over eight test files written for this test on this
    # machine, four failing tests: each file's ``describe('split')`` group passes whole, its
    # name (``    split``) above six ✓ lines; the file's outer group holds a failure
    path = Path(__file__).resolve().parents[2] / "data" / "holdout-build" / "jest-verbose.txt"
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    found = analyse(lines)
    groups = [i for i, line in enumerate(lines) if line == "    split"]
    assert len(groups) == 8
    for i in groups:
        assert found.drop.get(i) == "passing test groups"
    assert "  refunds" in lines and found.drop.get(lines.index("  refunds")) is None
    compressed, saved = compress_soundly(tool_output(text, "npx jest --verbose"), "standard")
    assert "    split" not in compressed.split("\n")
    assert "  refunds" in compressed.split("\n")  # above its failing test
    assert saved > 0.8  # 0.71 with the group names


def test_go_run_lines_go_silently_but_a_failing_test_keeps_the_one_naming_it() -> None:
    # ``go test -vet=off -v ./...`` (go 1.26) of four packages written for this test on this
    # machine: table-driven subtests, nine failing, each failure's message logged right under
    # its ``=== RUN`` line; the other RUN lines say only that a test started
    path = Path(__file__).resolve().parents[2] / "data" / "holdout-build" / "go-test-v.txt"
    text = path.read_text(encoding="utf-8")
    compressed, saved = compress_soundly(tool_output(text, "go test -vet=off -v ./..."), "standard")
    shown = compressed.split("\n")
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.lstrip().startswith("ledger_test.go:") or line.lstrip().startswith(
            "stock_test.go:"
        ):
            run = lines[i - 1]
            assert run.startswith("=== RUN") and run in shown
            assert shown[shown.index(run) + 1] == line
    assert "=== RUN   TestLabel/crate_x0" not in shown
    assert "(all === RUN/PAUSE/CONT)" not in compressed  # no marker of their own
    assert saved > 0.82  # 0.805 before
