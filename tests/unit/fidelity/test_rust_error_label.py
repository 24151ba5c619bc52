"""rustc's primary label under an error whose headline names nothing is a fact.

``tests/data/holdout-build/cargo-build-errors.txt`` is ``cargo build`` (rustc 1.95) of a
two-file crate written for this test on this machine: ``error[E0308]: mismatched types`` says
nothing a model can act on without its label (``^^^^ expected `u32`, found `usize```); the
headlines of E0063 and E0596 quote the names they are about, and their labels repeat them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.sound import compress_soundly, tool_output
from workers.fidelity.facts import critical_lines

CARGO = (
    Path(__file__).resolve().parents[2] / "data" / "holdout-build" / "cargo-build-errors.txt"
).read_text(encoding="utf-8")
LABEL = "|            ---   ^^^^^^^^^^^^^ expected `u32`, found `usize`"


def test_the_label_of_a_generic_rustc_error_is_a_fact() -> None:
    assert LABEL in CARGO
    details = {
        line for kind, line in critical_lines(CARGO, "tool_result") if kind == "error_detail"
    }
    assert details == {LABEL}  # not ``^^^ missing `weight``` under ``missing field `weight```


@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_the_label_stays_under_its_location(mode: str) -> None:
    text, _ = compress_soundly(tool_output(CARGO, "cargo build"), mode)
    lines = [line.strip() for line in text.splitlines()]
    at = lines.index("error[E0308]: mismatched types")
    assert lines[at + 1 : at + 3] == ["--> src/main.rs:10:18", LABEL]
    assert "let w: u32 = widest(&rows);" not in text  # the source line is snippet art still
