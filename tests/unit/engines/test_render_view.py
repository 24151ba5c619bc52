"""Runs too short for a marker each (a finding's two-line code frame) go into one view.

``tests/data/toolfilter/tsc-pretty.txt`` is ``npx tsc --noEmit --pretty`` with
``FORCE_COLOR=1`` (TypeScript 5, colours as written) over a four-file project written for this
test on this machine: 17 errors, each with its code frame and ``~~~`` underline.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.sound import compress_soundly, tool_output
from workers.engines.toolfilter import render
from workers.markers.structured_view import HEADER_LINE

TSC = (Path(__file__).resolve().parents[2] / "data" / "toolfilter" / "tsc-pretty.txt").read_text(
    encoding="utf-8"
)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _gcc_build(findings: int) -> str:
    """``make`` output of gcc warnings, each with its two-line snippet under it."""
    out = []
    for k in range(findings):
        out += [
            f"src/mod{k}.c:{10 + k}:9: warning: unused variable 'tmp{k}' [-Wunused-variable]",
            f"   {10 + k} |     int tmp{k};",
            "      |         ^~~~",
        ]
        if k % 3 == 2:
            out.append(f"src/mod{k}.c: In function 'run{k}':")
    return "\n".join(out) + "\nmake: *** [Makefile:12: all] Error 1\n"


@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_tsc_code_frames_go_into_one_view(mode: str) -> None:
    text, saved = compress_soundly(tool_output(TSC, "npx tsc --noEmit --pretty"), mode)
    assert HEADER_LINE + "… " in text
    plain = _ANSI.sub("", TSC)
    headlines = [line for line in plain.splitlines() if " - error TS" in line]
    assert len(headlines) == 17
    for line in headlines:
        assert line in text
    # the code under each headline and its underline are not in sight
    assert "const total: string = svc.total(id);" not in text
    assert not any(set(line.strip()) == {"~"} for line in text.splitlines())
    assert saved > 0.6


def test_the_view_saves_what_markers_of_their_own_could_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    record = tool_output(_gcc_build(12), "make")
    with_view, saved_view = compress_soundly(record, "standard")
    monkeypatch.setattr(render, "MIN_VIEW_TOKENS", 10**9)
    without, saved_plain = compress_soundly(record, "standard")
    assert HEADER_LINE in with_view and HEADER_LINE not in without
    assert "int tmp3;" in without and "int tmp3;" not in with_view
    for k in range(12):
        assert f"src/mod{k}.c:{10 + k}:9: warning: unused variable 'tmp{k}'" in with_view
    assert saved_view > saved_plain + 0.15


def test_one_short_frame_does_not_pay_for_a_view() -> None:
    text, _ = compress_soundly(tool_output(_gcc_build(2) + "x" * 400 + "\n", "make"), "standard")
    assert HEADER_LINE not in text


def test_passing_tests_between_failures_go_into_the_view_counted() -> None:
    # jest --verbose: one failing test among passing ones, suite after suite; each run of
    # passing lines is too short for a marker: the view takes them and its note counts them
    lines = []
    for s in range(8):
        lines += [f"PASS src/suite{s}.test.js", f"  Suite{s}"]
        lines += [f"    ✓ case {s}.{c} works ({c + 1} ms)" for c in range(2)]
        lines += [f"    ✕ case {s}.9 fails (3 ms)", ""]
    lines += ["Tests:       8 failed, 16 passed, 24 total", "Time:        1.2 s"]
    text, _ = compress_soundly(
        tool_output("\n".join(lines) + "\n", "npx jest --verbose"), "standard"
    )
    view, note = text.split(HEADER_LINE)
    assert "✓ case" not in view
    assert "16 passing tests" in note
    for s in range(8):
        assert f"    ✕ case {s}.9 fails (3 ms)" in view
    assert "Tests:       8 failed, 16 passed, 24 total" in view


def test_skipped_tests_keep_a_marker_where_they_were() -> None:
    # which tests did not run is news: a skipped test never goes without a trace in place
    lines = []
    for s in range(8):
        lines += [
            f"test_case_{s}_{c} (tests.test_s{s}.Cases.test_case_{s}_{c}) ... ok" for c in range(3)
        ]
        lines.append(
            f"test_win_{s} (tests.test_s{s}.Cases.test_win_{s}) ... skipped 'needs Windows'"
        )
        lines.append(f"test_bad_{s} (tests.test_s{s}.Cases.test_bad_{s}) ... FAIL")
    lines += ["", "-" * 70, "Ran 40 tests in 0.012s", "", "FAILED (failures=8, skipped=8)"]
    text, _ = compress_soundly(
        tool_output("\n".join(lines) + "\n", "python -m unittest -v"), "standard"
    )
    view = text.split(HEADER_LINE)[0]
    for s in range(8):
        skipped = f"test_win_{s} (tests.test_s{s}.Cases.test_win_{s}) ... skipped 'needs Windows'"
        assert skipped in view or "skipped test" in view
    assert "... ok" not in view


def _rustc_build(findings: int) -> str:
    """``cargo build`` warnings, each with a five-line code frame and a help line."""
    out = ["   Compiling shop v0.1.0 (/home/dev/shop)"]
    for k in range(findings):
        out += [
            f"warning: unused variable: `total_{k}`",
            f"  --> src/cart_{k}.rs:{20 + k}:9",
            "   |",
            f"{20 + k} |     let total_{k} = items.iter().map(|i| i.price * i.qty).sum::<u64>();",
            f"   |         ^^^^^^^ help: if this is intentional, prefix it: `_total_{k}`",
            "   |",
            "   = note: `#[warn(unused_variables)]` on by default",
            "",
        ]
    out.append(f'warning: `shop` (bin "shop") generated {findings} warnings')
    return "\n".join(out) + "\n"


def test_markers_of_decoration_move_into_the_view_when_that_pays() -> None:
    # each frame pays for a marker of its own; six markers cost more than one view
    text, _ = compress_soundly(tool_output(_rustc_build(6), "cargo build"), "standard")
    assert HEADER_LINE in text
    assert "snippet lines omitted" not in text.split(HEADER_LINE)[0]
    for k in range(6):
        assert f"--> src/cart_{k}.rs:{20 + k}:9" in text  # as a line, or in a repeat's note
        assert f"let total_{k} =" not in text


def _surefire_report(classes: int) -> str:
    """``mvn -B test`` with a failing test per class: JUnit's frames (library frames around
    the test's own), a blank line and maven's empty ``[INFO] `` lines (trailing blank as
    maven writes them) after each."""
    out = ["[INFO] Scanning for projects...", "[INFO] ", "[INFO]  T E S T S"]
    for k in range(classes):
        out += [
            f"[INFO] Running com.example.shop.Cart{k}Test",
            f"[ERROR] Tests run: {4 + k}, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: "
            f"0.0{k + 1} s <<< FAILURE! -- in com.example.shop.Cart{k}Test",
            f"[ERROR] com.example.shop.Cart{k}Test.total{k} -- Time elapsed: 0.00{k + 1} s "
            "<<< FAILURE!",
            f"org.opentest4j.AssertionFailedError: expected: <{70 + k}.00> but was: <100.00>",
            "\tat org.junit.jupiter.api.AssertionFailureBuilder.build(AssertionFailureBuilder.java:151)",
            "\tat org.junit.jupiter.api.AssertEquals.failNotEqual(AssertEquals.java:197)",
            "\tat org.junit.jupiter.api.Assertions.assertEquals(Assertions.java:1156)",
            f"\tat com.example.shop.Cart{k}Test.total{k}(Cart{k}Test.java:{19 + k})",
            "\tat java.base/java.lang.reflect.Method.invoke(Method.java:569)",
            "\tat java.base/java.util.ArrayList.forEach(ArrayList.java:1511)",
            "\tat java.base/java.util.ArrayList.forEach(ArrayList.java:1511)",
            "",
            "[INFO] ",
        ]
    out += [
        "[INFO] Results:",
        "[INFO] ",
        f"[ERROR] Tests run: {classes * 5}, Failures: {classes}, Errors: 0, Skipped: 0",
        "[INFO] BUILD FAILURE",
    ]
    return "\n".join(out) + "\n"


def test_decoration_inside_a_run_with_other_lines_goes_into_the_view() -> None:
    # each run after a test's own frame is three library frames, a blank line and an empty
    # [INFO] line: one marker each, which the view took only when all of a run was decoration
    text, _ = compress_soundly(tool_output(_surefire_report(4), "mvn -B test"), "aggressive")
    assert HEADER_LINE in text
    shown = text.split(HEADER_LINE)[0]
    assert "library frame" not in shown
    assert "java.util.ArrayList.forEach" not in shown
    for k in range(4):
        assert f"\tat com.example.shop.Cart{k}Test.total{k}(Cart{k}Test.java:{19 + k})" in text
        assert f"expected: <{70 + k}.00> but was: <100.00>" in text


ELABORATED = (
    Path(__file__).resolve().parents[2] / "data" / "holdout-build" / "tsc-elaborated.txt"
).read_text(encoding="utf-8")


@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_tsc_elaborations_repeated_under_the_same_message_go_into_the_view(mode: str) -> None:
    # ``npx tsc --noEmit -p tsconfig2.json`` (TypeScript 5) over a file written for this test
    # on this machine: 40 errors, TS2322 and TS2339 with an indented elaboration under them,
    # the same words under the same message at every place
    text, saved = compress_soundly(tool_output(ELABORATED, "npx tsc --noEmit -p ."), mode)
    elaboration = "  Property 'toUpperCase' does not exist on type 'number'."
    assert ELABORATED.count(elaboration) > 3
    assert text.count(elaboration) == 1  # under the first headline of its message
    lines = text.splitlines()
    first = "ts2/app.ts(4,59): error TS2339: Property 'toUpperCase' does not exist on type "
    assert lines[lines.index(first + "'string | number'.") + 1] == elaboration
    for line in ELABORATED.splitlines():
        if ": error TS" in line:
            assert line in text
    assert "repeated elaboration lines" in text
    assert saved > 0.08  # 0 before


def test_tsc_pretty_summary_table_goes_into_the_view() -> None:
    # ``npx tsc --noEmit --pretty -p .`` (TypeScript 5, no colour: a pipe) over ten files
    # written for this test on this machine: 71 errors, then ``Found 71 errors in 10 files.``
    # and a table of each file's count and first error, which the headlines above all say
    path = Path(__file__).resolve().parents[2] / "data" / "holdout-build" / "tsc-pretty.txt"
    text = path.read_text(encoding="utf-8")
    assert "Errors  Files" in text
    compressed, _ = compress_soundly(
        tool_output(text, "npx tsc --noEmit --pretty -p ."), "standard"
    )
    assert "Errors  Files" not in compressed
    assert "     5  ts/audit.ts:5" not in compressed
    assert "Found 71 errors in 10 files." in compressed
    assert "summary table lines" in compressed
