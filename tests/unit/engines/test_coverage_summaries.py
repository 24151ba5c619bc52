"""A coverage report's total is a summary line of the gate, as a test run's is: istanbul's
``All files | 61 | 50 | ...`` row (jest, vitest, nyc), coverage.py's ``TOTAL`` row and go
test's ``ok  pkg 0.01s  coverage: 71.2% of statements``.  Aggressive mode's aging stashed
the table of a long ``jest --coverage`` run, its total row with it.  The jest output is a
real one (:mod:`tests.support.coverage_sample`); the go output is a real go toolchain's, on
a module written here (skipped without ``go``)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.coverage_sample import OUT as JEST_COVERAGE
from tests.support.sound import compress_soundly, tool_output
from workers.fidelity.facts import critical_lines


def test_the_coverage_total_of_jest_stays_in_aggressive_mode() -> None:
    text = JEST_COVERAGE.read_text()
    total = next(line for line in text.splitlines() if line.startswith("All files"))
    assert ("test_summary", total.strip()) in critical_lines(text, "tool_result", "npx jest")
    for mode in ("standard", "aggressive"):
        out, saved = compress_soundly(tool_output(text, "npx jest --coverage"), mode)
        assert total.strip() in out, mode
        assert "Tests:       3 failed, 38 passed, 41 total" in out
        assert saved > 0.4


def test_go_test_cover_lines_are_summaries(tmp_path: Path) -> None:
    go = shutil.which("go")
    if go is None:
        pytest.skip("no go toolchain on this machine")
    (tmp_path / "go.mod").write_text("module example.com/calc\n\ngo 1.21\n")
    (tmp_path / "calc.go").write_text(
        "package calc\n\nfunc Double(x int) int {\n\tif x < 0 {\n\t\treturn 0\n\t}\n"
        "\treturn 2 * x\n}\n"
    )
    (tmp_path / "calc_test.go").write_text(
        'package calc\n\nimport "testing"\n\nfunc TestDouble(t *testing.T) {\n'
        '\tif Double(2) != 4 {\n\t\tt.Fatal("double")\n\t}\n}\n'
    )
    env = {**os.environ, "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local", "GOPROXY": "off"}
    run = subprocess.run(
        [go, "test", "-cover", "./..."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert run.returncode == 0, run.stderr
    line = next(x for x in run.stdout.splitlines() if x.startswith("ok"))
    assert "coverage: 66.7% of statements" in line
    assert ("test_summary", line.strip()) in critical_lines(run.stdout, "tool_result")


@pytest.mark.parametrize(
    "line",
    [
        "TOTAL                              412     37    91%",
        "TOTAL                              412     37    120     14    88.40%",
        "ok  \texample.com/shop/pkga\t(cached)\tcoverage: 100.0% of statements",
    ],
)
def test_other_coverage_totals_are_summaries(line: str) -> None:
    text = f"header\n{line}\n"
    assert ("test_summary", line.strip()) in critical_lines(text, "tool_result")
