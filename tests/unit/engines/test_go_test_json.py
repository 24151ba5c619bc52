"""``go test -json`` prints one JSON event per line; the line the runner printed is the
event's ``Output``.  The facts of those lines are facts of the events (the gate reads the
printed line, the event as written must stay visible): a failing subtest's ``--- FAIL:``
line, its ``price_test.go:14: ...`` message and the package's ``FAIL`` line.  Before, only
events with an error word in them were facts, and the messages went into stashes.  The
output is a real go toolchain's, on a module written here (skipped without ``go``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.sound import compress_soundly, tool_output
from workers.fidelity.facts import critical_lines

PRICE = """\
package price

func Discount(total float64, pct int) float64 {
\tif pct > 50 {
\t\tpct = 50
\t}
\treturn total - total*float64(pct)/100
}
"""

PRICE_TEST = """\
package price

import (
\t"fmt"
\t"testing"
)

func TestDiscount(t *testing.T) {
\tfor i := 0; i < 12; i++ {
\t\tt.Run(fmt.Sprintf("case_%d", i), func(t *testing.T) {
\t\t\tif got, want := Discount(100, i*10), 100-float64(i*10); got != want {
\t\t\t\tt.Errorf("Discount(100, %d) = %v, want %v", i*10, got, want)
\t\t\t}
\t\t})
\t}
}

func TestRound(t *testing.T) {
\tfor i := 0; i < 20; i++ {
\t\tt.Run(fmt.Sprintf("r%d", i), func(t *testing.T) {
\t\t\tif Discount(float64(i), 0) != float64(i) {
\t\t\t\tt.Fatal("round")
\t\t\t}
\t\t})
\t}
}
"""


def _go_test_json(tmp_path: Path) -> str:
    go = shutil.which("go")
    if go is None:
        pytest.skip("no go toolchain on this machine")
    (tmp_path / "go.mod").write_text("module example.com/shop\n\ngo 1.21\n")
    (tmp_path / "price.go").write_text(PRICE)
    (tmp_path / "price_test.go").write_text(PRICE_TEST)
    env = {**os.environ, "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local", "GOPROXY": "off"}
    run = subprocess.run(
        [go, "test", "-json", "./..."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert run.returncode != 0
    return run.stdout + run.stderr


def _printed(line: str) -> str:
    try:
        event = json.loads(line)
    except ValueError:
        return ""
    output = event.get("Output") if isinstance(event, dict) else None
    return output if isinstance(output, str) else ""


def test_failing_subtests_and_their_messages_stay_visible(tmp_path: Path) -> None:
    text = _go_test_json(tmp_path)
    lines = text.splitlines()
    failing = [line for line in lines if "--- FAIL: TestDiscount/case_" in _printed(line)]
    messages = [line for line in lines if "price_test.go:" in _printed(line)]
    summary = [line for line in lines if _printed(line).startswith("FAIL\texample.com/shop")]
    assert len(failing) == 6 and len(messages) == 6 and len(summary) == 1
    facts = {line for _, line in critical_lines(text, "tool_result", "go test -json ./...")}
    assert set(failing + messages + summary) <= facts
    for mode in ("standard", "aggressive"):
        out, saved = compress_soundly(tool_output(text, "go test -json ./..."), mode)
        for line in failing + messages + summary:
            assert line in out, (mode, line)
        assert "Discount(100, 110) = 50, want -10" in out
        passing = sum('"Test":"TestRound' in line for line in lines)
        assert 4 * sum('"Test":"TestRound' in line for line in out.splitlines()) < passing
        assert saved > 0.5
