"""``go build`` and ``go vet`` print compiler findings (``./main.go:5:2: "os" imported and not
used``): their family is ``go-build``, not ``grep`` (whose lines look alike) nor ``unknown``, so
``--explain`` names it and aging may condense a long one; every finding stays.  The output is
a real go toolchain's, on a module written here (skipped without ``go``)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.sound import compress_soundly, tool_output
from workers.engines._filters import builtin_filters

MAIN = """\
package main

import (
\t"fmt"
\t"os"
)

func main() {
\tvar unused int
\tfmt.Println(missingName)
}
"""


def _go(tmp_path: Path, *args: str) -> str:
    go = shutil.which("go")
    if go is None:
        pytest.skip("no go toolchain on this machine")
    (tmp_path / "go.mod").write_text("module example.com/ledger\n\ngo 1.21\n")
    (tmp_path / "main.go").write_text(MAIN)
    env = {**os.environ, "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local", "GOPROXY": "off"}
    run = subprocess.run(
        [go, *args], cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env
    )
    assert run.returncode != 0
    return run.stdout + run.stderr


@pytest.mark.parametrize("args", [("build", "./..."), ("vet", "./...")])
def test_go_findings_are_the_go_build_family_and_stay(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    text = _go(tmp_path, *args)
    assert "main.go:" in text and "missingName" in text
    command = "go " + " ".join(args)
    found = builtin_filters().detect(command, "bash", text)
    assert (found.source, found.family) == ("command", "go-build")
    out, _ = compress_soundly(tool_output(text, command), "standard")
    for line in text.splitlines():
        if ".go:" in line:
            assert line in out


def test_a_vet_then_a_test_run_is_a_test_run() -> None:
    text = "=== RUN   TestTotal\n--- FAIL: TestTotal (0.00s)\n    main_test.go:9: got 15, want 16\nFAIL\n"
    found = builtin_filters().detect("go vet ./... && go test -v ./...", "bash", text)
    assert found.family == "go-test"
