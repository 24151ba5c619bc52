"""A warning repeated per resource of a route is one fact; an error per resource is one each.

Held-out set 33 (a Go service under load, log/slog's JSON handler): 4,569 ``WARN`` lines of
``"status":429`` over ``/items/42``, ``/items/7/qty``... interleaved by method and route, each
kept: the path's number made every line a fact of its own (standard saved 8 % of 465k
tokens).  A warning's path numbers now fold in the gate's shape (a warning per batch or row
already did), so the tool filter keeps one line per method and route; errors keep every path.
"""

from __future__ import annotations

import json

from tests.support.sound import compress_soundly, tool_output
from workers.fidelity.facts import line_shape

ROUTES = (
    ("GET", "/items/{n}"),
    ("PATCH", "/items/{n}/qty"),
    ("DELETE", "/items/{n}"),
    ("GET", "/items"),
)


def _line(k: int, level: str, method: str, path: str, status: int) -> str:
    return json.dumps(
        {
            "time": f"2026-12-07T23:00:17.{636000000 + 977 * k}Z",
            "level": level,
            "msg": "request",
            "method": method,
            "path": path,
            "status": status,
            "bytes": 32,
            "dur": 1300 + (k * 37) % 900,
            "req_id": f"{k:08x}-9014-4bcb-8980-e43778ae{k:04x}",
        },
        separators=(",", ":"),
    )


def _log() -> tuple[str, list[str]]:
    lines, errors = [], []
    for k in range(600):
        method, route = ROUTES[k % len(ROUTES)]
        path = route.format(n=(k * 7) % 61)
        if k % 97 == 5:
            errors.append(_line(k, "ERROR", "GET", f"/orders/{300 + k}", 500))
            lines.append(errors[-1])
        lines.append(_line(k, "WARN", method, path, 429))
    return "\n".join(lines) + "\n", errors


def test_a_warnings_path_numbers_fold_an_errors_stay() -> None:
    warn = "WARN GET /items/42 -> 429 client=c3"
    assert line_shape(warn) == line_shape(warn.replace("/items/42", "/items/7"))
    error = "ERROR GET /items/42 -> 500 client=c3"
    assert line_shape(error) != line_shape(error.replace("/items/42", "/items/7"))


def test_rate_limited_requests_fold_per_route_and_errors_stay() -> None:
    text, errors = _log()
    out, saved = compress_soundly(tool_output(text, "cat logs/server-json.log"), "standard")
    for error in errors:
        assert error in out.splitlines()
    for method, route in ROUTES:  # each route's warning still in sight, once at least
        start = f'"method":"{method}","path":"{route.split("{")[0]}'
        assert any(start in line and '"status":429' in line for line in out.splitlines())
    assert saved > 0.8
