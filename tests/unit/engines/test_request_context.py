"""A failing request's own line stays beside its error: the url it asked for.

Held-out set 31 (Fastify with pino): ``tail -n 2000 logs/api.log`` kept the level-50 errors and
dropped every ``incoming request`` line, so which url failed was nowhere in sight (the request's
id is on both).  When an error line in sight names a request's id, the first dropped line with
that id stays (8 requests at most): set 31 standard 82.8 -> 82.1 % saved, facts 370 -> 374 of
392; two lines for 12 requests cost 1.9 points for the same facts.
"""

from __future__ import annotations

from tests.support.sound import compress_soundly, tool_output

INCOMING = (
    '{{"level":30,"time":179667849{k:04d},"pid":4968,"reqId":"req-{k:04d}",'
    '"req":{{"method":"GET","url":"/invoices/inv_{k:05d}/customer"}},"msg":"incoming request"}}'
)
FAILED = (
    '{{"level":50,"time":179667849{k:04d},"pid":4968,"reqId":"req-{k:04d}",'
    '"err":{{"type":"TypeError","message":"Cannot read properties of undefined"}},'
    '"msg":"handler failed"}}'
)
COMPLETED = (
    '{{"level":30,"time":179667849{k:04d},"pid":4968,"reqId":"req-{k:04d}",'
    '"res":{{"statusCode":{status}}},"responseTime":0.{k}1,"msg":"request completed"}}'
)


def _log(count: int, failing: int) -> str:
    lines = []
    for k in range(count):
        lines.append(INCOMING.format(k=k))
        if k == failing:
            lines.append(FAILED.format(k=k))
        lines.append(COMPLETED.format(k=k, status=500 if k == failing else 200))
    return "\n".join(lines) + "\n"


def test_the_failing_request_shows_its_url() -> None:
    out, saved = compress_soundly(
        tool_output(_log(150, 77), "tail -n 400 logs/api.log"), "standard"
    )
    shown = out.splitlines()
    assert FAILED.format(k=77) in shown
    assert INCOMING.format(k=77) in shown  # the url that failed
    assert INCOMING.format(k=76) not in shown  # another request's line goes
    assert saved > 0.8
