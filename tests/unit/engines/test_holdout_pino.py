"""``docker logs`` of a seeded Node order API that logs JSON lines the way pino does: its
levels are numbers (30 info, 40 warn, 50 error).  ``{"level":50,...,"msg":"order rejected by
fraud check"}`` carries no error word, yet it is an error of the service: each such line (one
per order) stays in sight, in every lossy mode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.sound import compress_soundly, tool_output
from workers.fidelity.facts import critical_lines, is_error_line

DATA = Path(__file__).resolve().parents[2] / "data" / "holdout-logs"
LOG = (DATA / "pino-levels.txt").read_text(encoding="utf-8")
COMMAND = "docker logs orders-api --tail 61"
EVENTS = [json.loads(line) for line in LOG.splitlines()]


def _lines(level: int, msg: str) -> list[str]:
    return [
        line
        for line, event in zip(LOG.splitlines(), EVENTS, strict=True)
        if event["level"] == level and event["msg"] == msg
    ]


def test_numeric_levels_from_warn_up_are_error_lines() -> None:
    rejected = _lines(50, "order rejected by fraud check")
    assert len(rejected) >= 2
    assert all(is_error_line(line) for line in rejected)
    assert all(is_error_line(line) for line in _lines(40, "fraud score elevated"))
    assert not any(is_error_line(line) for line in _lines(30, "request completed"))
    facts = critical_lines(LOG, "tool_result", COMMAND)
    assert all(("error_line", line) in facts for line in rejected)


@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_every_rejected_order_stays_visible(mode: str) -> None:
    text, saved = compress_soundly(tool_output(LOG, COMMAND), mode)
    for line in _lines(50, "order rejected by fraud check"):
        assert line in text
    assert saved > 0.2
