"""``tail -n 80`` of a Python ``http.server`` access log is a log read (its timestamp has a
space before the time, where the common log format has a colon), so it is folded, and its
5xx requests stay in sight."""

from __future__ import annotations

import http.server
import random

from tests.support.sound import compress_soundly, tool_output
from workers.engines._logs import is_log_line


def _access_log(lines: int, seed: int = 7) -> str:
    when = http.server.BaseHTTPRequestHandler.log_date_time_string(
        http.server.BaseHTTPRequestHandler  # type: ignore[arg-type]
    )
    rng = random.Random(seed)
    out = []
    for k in range(lines):
        order = rng.randrange(1, 2000)
        path, status = ("/healthz", 200) if k % 5 == 0 else (f"/api/orders/{order}", 200)
        if k % 17 == 3:
            status = 500
        # BaseHTTPRequestHandler.log_request's format
        out.append(f'127.0.0.1 - - [{when}] "GET {path} HTTP/1.1" {status} -')
    return "\n".join(out) + "\n"


def test_http_server_lines_are_log_lines() -> None:
    log = _access_log(3)
    assert all(is_log_line(line) for line in log.splitlines())


def test_tail_of_an_access_log_is_folded_and_5xx_requests_stay() -> None:
    log = _access_log(80)
    text, saved = compress_soundly(tool_output(log, "tail -n 80 /srv/api/requests.txt"), "standard")
    assert saved > 0.35
    for line in log.splitlines():
        if line.endswith(" 500 -"):
            assert line in text
