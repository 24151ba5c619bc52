"""A pino/Fastify request's 5xx is a fact: ``"res":{"statusCode":500}`` on ``request completed``.

Held-out set 31 (a Fastify service under autocannon): ``tail -n 2000 logs/api.log`` kept the
level-50 errors (TypeErrors and NotFoundErrors alike) and dropped every ``"statusCode":500``
line: the 500s could no longer be told from the 404s.  The gate knew a JSON status only beside
a method or a url; pino-http writes the url on the request's ``incoming request`` line and the
status in the response object of ``request completed``, with the request's id.
"""

from __future__ import annotations

from tests.support.sound import compress_soundly, tool_output
from workers.fidelity.facts import critical_lines

COMPLETED = (
    '{{"level":30,"time":17966784904{k:02d},"pid":4968,"hostname":"vm","reqId":"req-{k:04d}",'
    '"res":{{"statusCode":{status}}},"responseTime":0.{k}1,"msg":"request completed"}}'
)
INCOMING = (
    '{{"level":30,"time":17966784904{k:02d},"pid":4968,"hostname":"vm","reqId":"req-{k:04d}",'
    '"req":{{"method":"GET","url":"/invoices/inv_{k:05d}/customer"}},"msg":"incoming request"}}'
)


def _log(count: int) -> str:
    lines = []
    for k in range(count):
        lines.append(INCOMING.format(k=k))
        lines.append(COMPLETED.format(k=k, status=500 if k % 10 == 7 else 200))
    return "\n".join(lines) + "\n"


def test_a_response_object_with_a_5xx_is_an_error_line() -> None:
    text = _log(20)
    found = {line for kind, line in critical_lines(text, "tool_result", "tail logs/api.log")}
    assert COMPLETED.format(k=7, status=500) in found
    assert COMPLETED.format(k=6, status=200) not in found
    # a status beside no request (a metric's field) is no request's answer
    assert not list(critical_lines('{"statusCode": 500, "metric": "x"}\n', "tool_result", "x"))


def test_the_5xx_stays_in_sight() -> None:
    out, _ = compress_soundly(tool_output(_log(120), "tail -n 240 logs/api.log"), "standard")
    assert '"res":{"statusCode":500}' in out
