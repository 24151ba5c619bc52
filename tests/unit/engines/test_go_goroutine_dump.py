"""A Go goroutine dump (``fatal error: all goroutines are asleep - deadlock!`` and a stack per
goroutine): ``fatal error:`` heads a crash as ``panic:`` does (its first user frame is a fact,
library frames go), and a frame's function line, ``main.stage(0x9, 0xc000070, ...)``, is no
``file(12)`` finding: its hex arguments made every goroutine's line a fact of its own, so no
repeat of the same stack could go; a goroutine whose stack (state, functions, places) a
goroutine above showed is dropped with its blank line, a run of them one marker
(``… 10 repeated goroutine stacks omitted``): standard 17.5 -> 76.8 % on the dump below.
The output is a real go toolchain's, on a module written here (skipped without ``go``)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.sound import compress_soundly, tool_output
from workers.fidelity.facts import critical_lines

MAIN = """\
package main

import (
\t"fmt"
\t"sync"
)

func stage(id int, in <-chan int, out chan<- int, wg *sync.WaitGroup) {
\tdefer wg.Done()
\tfor v := range in {
\t\tout <- v * id
\t}
}

func main() {
\tvar wg sync.WaitGroup
\tsrc := make(chan int)
\tsink := make(chan int)
\tfor i := 0; i < 12; i++ {
\t\twg.Add(1)
\t\tgo stage(i, src, sink, &wg)
\t}
\tfor i := 0; i < 30; i++ {
\t\tsrc <- i
\t\tfmt.Println("sent", i)
\t}
\twg.Wait()
}
"""


def _deadlock(tmp_path: Path) -> str:
    go = shutil.which("go")
    if go is None:
        pytest.skip("no go toolchain on this machine")
    (tmp_path / "go.mod").write_text("module example.com/pipeline\n\ngo 1.21\n")
    (tmp_path / "main.go").write_text(MAIN)
    env = {**os.environ, "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local", "GOPROXY": "off"}
    run = subprocess.run(
        [go, "run", "."],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
        env=env,
    )
    assert run.returncode != 0
    return run.stdout


def test_a_goroutine_dump_keeps_its_headline_and_first_user_frame(tmp_path: Path) -> None:
    text = _deadlock(tmp_path)
    lines = text.splitlines()
    head = "fatal error: all goroutines are asleep - deadlock!"
    assert head in lines
    first = next(line for line in lines[lines.index(head) :] if "main.go:" in line)
    facts = critical_lines(text, "tool_result", "go run .")
    assert ("error_line", head) in facts
    assert ("stack_frame", first.strip()) in facts
    assert not any(line.startswith("main.stage(") for _, line in facts)
    for mode in ("standard", "aggressive"):
        out, saved = compress_soundly(tool_output(text, "go run ."), mode)
        assert head in out and first in out
        # the 11 goroutines of stage() stand at one place: the first shows it, the rest go
        assert "repeated goroutine stacks omitted" in out
        assert saved > 0.6, (mode, saved)


def test_a_file_with_a_line_in_parentheses_is_still_a_finding() -> None:
    text = "src\\app.cpp(12): error C2065: 'x': undeclared identifier\nmain.py(3): x\n"
    facts = {line for kind, line in critical_lines(text, "tool_result") if kind != "error_line"}
    assert "main.py(3): x" in facts


def test_a_runtime_frame_named_panic_is_a_frame_not_an_error_line() -> None:
    # ``go test -v ./...`` (go 1.26) of a package written for this test on this machine: a
    # test indexes past a slice, the runtime panics; under ``goroutine 59 [running]:`` the
    # frame ``panic({0x575620?, 0x3a7b016e4b70?})`` in runtime/panic.go read as an error
    # line (the word panic), and so did its file line, so both stayed in sight
    path = Path(__file__).resolve().parents[2] / "data" / "holdout-build" / "go-test-panic.txt"
    text = path.read_text(encoding="utf-8")
    facts = {line for _, line in critical_lines(text, "tool_result", "go test -v ./...")}
    assert not any(line.startswith("panic({") for line in facts)
    assert not any("runtime/panic.go" in line for line in facts)
    headline = "panic: runtime error: index out of range [9] with length 2 [recovered, repanicked]"
    assert headline in facts
    assert "/work/holdout-a/proj/gopanic/parse/parse.go:8" in facts  # the first user frame
    compressed, _ = compress_soundly(tool_output(text, "go test -v ./..."), "standard")
    assert "panic({0x575620?" not in compressed and headline in compressed
    assert "example.org/gopanic/parse.TestFieldOutOfRange(0x3a7b01716248?)" in compressed
