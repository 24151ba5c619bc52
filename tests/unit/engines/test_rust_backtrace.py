"""A Rust panic with its backtrace (``RUST_BACKTRACE=1`` and ``=full``) is a crash report:
the ``thread 'main' panicked at`` headline, the message and the frames in user code stay
(the first of them is a fact of the gate), frames in ``std``/``core``/libc go.  The output is
a real rustc-built program's, written here (skipped without ``rustc``)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.sound import compress_soundly, tool_output
from workers.engines.toolfilter.blocks import FRAMES, analyse
from workers.fidelity.facts import critical_lines

MAIN = """\
use std::collections::HashMap;
fn lookup(rates: &HashMap<&str, f64>, code: &str) -> f64 {
    *rates.get(code).expect("unknown currency")
}
fn convert(amount: f64, code: &str) -> f64 {
    let mut rates = HashMap::new();
    rates.insert("EUR", 1.0);
    amount * lookup(&rates, code)
}
fn main() {
    println!("{}", convert(5.0, "CHF"));
}
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rustc = shutil.which("rustc")
    if rustc is None:
        pytest.skip("no rustc on this machine")
    where = tmp_path_factory.mktemp("rust")
    (where / "main.rs").write_text(MAIN)
    subprocess.run([rustc, "-g", "main.rs", "-o", "fx"], cwd=where, check=True, timeout=300)
    return where


def _panic(program: Path, backtrace: str) -> str:
    env = {**os.environ, "RUST_BACKTRACE": backtrace}
    run = subprocess.run(["./fx"], cwd=program, capture_output=True, text=True, timeout=60, env=env)
    assert run.returncode != 0
    return run.stdout + run.stderr


@pytest.mark.parametrize("backtrace", ["1", "full"])
def test_library_frames_go_and_user_frames_stay(program: Path, backtrace: str) -> None:
    text = _panic(program, backtrace)
    lines = text.split("\n")
    structure = analyse(lines, lambda i: False)
    assert "crash" in structure.family
    user = [
        i for i, line in enumerate(lines) if line.strip().startswith("at ") and "main.rs:" in line
    ]
    assert user and not set(user) & set(structure.drop)
    assert any(
        "std" in lines[i] or "core" in lines[i]
        for i, label in structure.drop.items()
        if label == FRAMES
    )
    facts = critical_lines(text, "tool_result", "./fx")
    assert ("stack_frame", lines[user[0]].strip()) in facts  # the innermost user frame
    out, saved = compress_soundly(tool_output(text, "./target/debug/fx convert"), "standard")
    assert "panicked at main.rs:3:22:" in out and "unknown currency" in out
    assert lines[user[0]] in out
    assert saved > 0.4  # 0 % (RUST_BACKTRACE=1) and 46 % (full) before


_PASSING = "\n".join(
    f"    #[test] fn price_{i}() {{ assert_eq!(price({i % 3}), {10 * (i % 3 + 1)}); }}"
    for i in range(30)
)
TESTS = (
    """\
fn price(qty: usize) -> usize { [10, 20, 30][qty] }
fn parse(s: &str) -> i64 { s.parse::<i64>().unwrap() }
#[cfg(test)]
mod tests {
    use super::*;
"""
    + _PASSING
    + """
    #[test] fn price_of_seven() { assert_eq!(price(7), 70); }
    #[test] fn parse_word() { assert_eq!(parse("seven"), 7); }
    #[test] fn total_overflow() { let v: Vec<u8> = vec![200, 100]; assert!(v.iter().sum::<u8>() > 0); }
}
"""
)


def test_panic_messages_under_the_headline_are_facts(tmp_path: Path) -> None:
    """A panic's message is the line under ``thread '...' panicked at src:line:col:``;
    aggressive mode (aging keeps the critical lines of a long report) stashed the ones
    without an error word (``index out of bounds: ...``)."""
    rustc = shutil.which("rustc")
    if rustc is None:
        pytest.skip("no rustc on this machine")
    (tmp_path / "lib.rs").write_text(TESTS)
    subprocess.run(
        [rustc, "--test", "-g", "lib.rs", "-o", "t"], cwd=tmp_path, check=True, timeout=300
    )
    env = {**os.environ, "RUST_BACKTRACE": "1"}
    run = subprocess.run(["./t"], cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env)
    assert run.returncode != 0
    text = run.stdout + run.stderr
    messages = [
        "index out of bounds: the len is 3 but the index is 7",
        "called `Result::unwrap()` on an `Err` value: ParseIntError { kind: InvalidDigit }",
        "attempt to add with overflow",
    ]
    facts = critical_lines(text, "tool_result", "cargo test")
    for message in messages:
        assert ("error_detail", message) in facts
    for mode in ("standard", "aggressive"):
        out, saved = compress_soundly(tool_output(text, "cargo test"), mode)
        for message in messages:
            assert message in out, (mode, message)
        assert saved > 0.4


@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_a_tests_closure_frame_and_the_backtrace_hint_go_into_the_view(mode: str) -> None:
    # ``cargo test`` with RUST_BACKTRACE=1 (rustc 1.95) of a crate of 150 tests written for
    # this test on this machine, 8 failing: under each panic, the test's own frame, then
    # ``5: smalltests::m0::parse_2::{{closure}}`` (the harness calling it, one line above in
    # the test) and the hint ``note: Some details are omitted, run with `RUST_BACKTRACE=full```
    path = (
        Path(__file__).resolve().parents[2] / "data" / "holdout-build" / "cargo-test-backtrace.txt"
    )
    text = path.read_text(encoding="utf-8")
    assert text.count("::{{closure}}") == 8
    compressed, saved = compress_soundly(tool_output(text, "cargo test"), mode)
    assert "::{{closure}}" not in compressed
    assert "RUST_BACKTRACE=full" not in compressed.split("<<cx:view>>")[0]
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.lstrip().startswith("4: smalltests::"):  # the test's own frame and its place
            assert line in compressed and lines[i + 1] in compressed
    assert saved > 0.78  # 0.72 with them
