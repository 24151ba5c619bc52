"""A warning logged once per request (``[warn]: queue depth above threshold reqId=req-ec692
queue=emails depth=3557``; a captured run of a seeded Node order API logging like winston)
is one fact whatever request it was logged for, as ``request 12`` is: the request's id folds
in a warning's shape, so its repeats need not all stay in sight.  So it does in an error's
(held-out set 22: a Go service's ``"req_id":8`` on each of its 500s), whose other
identifiers stay: an error for another order is another fact."""

from __future__ import annotations

from pathlib import Path

from tests.support.sound import compress_soundly, tool_output
from workers.fidelity.facts import line_shape

DATA = Path(__file__).resolve().parents[2] / "data" / "holdout-logs"
LOG = (DATA / "winston-warnings.txt").read_text(encoding="utf-8")
COMMAND = "docker logs orders-api --tail 151"
WARNINGS = [line for line in LOG.splitlines() if "[warn]: queue depth above threshold" in line]


def test_a_per_request_warning_is_one_shape() -> None:
    assert len(WARNINGS) > 5
    assert len({line_shape(line) for line in WARNINGS}) == 1
    pino = '{"level":40,"time":1,"reqId":"req-ec692","msg":"queue depth above threshold"}'
    other = '{"level":40,"time":2,"reqId":"req-4e926","msg":"queue depth above threshold"}'
    assert line_shape(pino) == line_shape(other)
    error = "2026-12-02T22:05:12.598Z [error]: unhandled error in order handler reqId=req-5baaa"
    assert line_shape(error) == line_shape(error.replace("req-5baaa", "req-77a01"))
    order = error.replace("in order handler", "for order 4410")
    assert line_shape(order) != line_shape(order.replace("4410", "4411"))


def test_repeats_of_a_per_request_warning_may_go() -> None:
    text, _ = compress_soundly(tool_output(LOG, COMMAND), "standard")
    shown = [line for line in WARNINGS if line in text.splitlines()]
    assert shown and len(shown) < len(WARNINGS)
