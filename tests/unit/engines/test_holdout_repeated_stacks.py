"""``tail`` of a Java service's java.util.logging log (a captured run of a seeded inventory
service: two-line records, ``SEVERE`` records with a stack, ``Caused by:`` and ``... 1 more``):
the same failure recurs for other SKUs with the same frames.  Each distinct stack shows once;
a later stack that is frame for frame one shown above goes (``repeated stack frames``), while
every ``SEVERE`` line and every ``Caused by:`` line, which name the SKU, stay."""

from __future__ import annotations

from pathlib import Path

from tests.support.sound import compress_soundly, tool_output
from workers.engines.toolfilter.blocks import STACK_FRAMES, analyse

DATA = Path(__file__).resolve().parents[2] / "data" / "holdout-logs"
LOG = (DATA / "jul-stock-stacks.txt").read_text(encoding="utf-8")
COMMAND = "tail -n 300 /opt/inventory/logs/inventory.log"


def _stacks(lines: list[str]) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    current: list[str] = []
    for line in [*lines, ""]:
        if line.startswith("\tat ") or line.startswith("\t... "):
            current.append(line)
        elif current:
            out.append(tuple(current))
            current = []
    return out


def test_a_stack_shown_above_is_dropped_as_a_repeat() -> None:
    lines = LOG.split("\n")
    structure = analyse(lines)
    repeated = {i for i, label in structure.drop.items() if label == STACK_FRAMES}
    assert repeated
    stacks = _stacks(lines)
    assert len(set(stacks)) < len(stacks)  # the log repeats stacks
    for i in repeated:
        assert lines[i].startswith(("\tat ", "\t... "))


def test_every_severe_and_cause_line_stays_and_fewer_frames_show() -> None:
    text, saved = compress_soundly(tool_output(LOG, COMMAND), "standard")
    shown = set(text.split("\n"))
    for line in LOG.split("\n"):
        if line.startswith(("SEVERE: ", "Caused by: ")):
            assert line in shown, line
    frames = [line for line in text.split("\n") if line.startswith("\tat ")]
    distinct = {frame for stack in set(_stacks(LOG.split("\n"))) for frame in stack}
    assert len(frames) <= len(distinct)
    assert saved > 0.5


def test_a_repeated_stack_goes_whole_its_first_user_frame_too() -> None:
    # the first user frame under an exception is a fact of the gate: the copy shown with the
    # first such stack keeps it in sight, so a later identical stack needs none of its lines
    # (a one-frame stack alone between kept lines is not worth a marker of its own)
    text, _ = compress_soundly(tool_output(LOG, COMMAND), "standard")
    shown = text.split("\n")
    for stack in set(_stacks(LOG.split("\n"))):
        if len(stack) < 2:
            continue
        for frame in stack:
            if frame.startswith("\tat "):
                assert shown.count(frame) <= 1, frame
