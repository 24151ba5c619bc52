"""A JSON-lines log (pino, structlog, zap: one object per line) is a log: read with ``tail``
or ``cat`` whatever the file is called, and printed by a program; it is not one JSON
document whose values are the answer."""

from __future__ import annotations

import json
import random

from tests.support.clock import log_time
from tests.support.sound import compress_soundly, tool_output
from workers.engines._filters import builtin_filters
from workers.engines.aging import _json_document


def json_log(lines: int = 300, seed: int = 7) -> str:
    """Requests, retry warnings and now and then a failed webhook with its stack, as pino logs them."""
    rng = random.Random(seed)
    out = []
    t = 0
    for _ in range(lines):
        t += rng.randint(5, 400)
        base = {"level": 30, "time": log_time(t, iso=True), "pid": 4120, "hostname": "web-1"}
        r = rng.random()
        if r < 0.75:
            url = rng.choice(
                ["/api/orders", "/api/cart", "/healthz", f"/api/orders/{rng.randint(100, 999)}"]
            )
            entry = {
                **base,
                "req": {"method": rng.choice(["GET", "POST"]), "url": url},
                "res": {"statusCode": rng.choice([200, 200, 201, 204, 404])},
                "responseTime": round(rng.uniform(1, 90), 1),
                "msg": "request completed",
            }
        elif r < 0.97:
            entry = {
                **base,
                "level": 40,
                "msg": f"retrying payment sync for order {rng.randint(1000, 9999)}"
                f" (attempt {rng.randint(1, 5)} of 5)",
            }
        else:
            order = rng.randint(100, 999)
            entry = {
                **base,
                "level": 50,
                "err": {
                    "type": "Error",
                    "message": f"payment webhook failed for order {order}",
                    "stack": "Error: payment webhook failed\n    at handle (/srv/app/src/webhook.js:41:11)",
                },
                "msg": "webhook failed",
            }
        out.append(json.dumps(entry))
    return "\n".join(out) + "\n"


def test_a_read_of_a_json_lines_file_is_a_log() -> None:
    text = json_log()
    found = builtin_filters().detect("tail -n 300 logs/app.jsonl", "bash", text)
    assert (found.source, found.family) == ("content", "logfile")
    # timestamped rows of data are no log: the read stays the agent's (a level or a request
    # marks a log line)
    rows = "".join(
        f"2026-12-02T10:{i // 60:02d}:{i % 60:02d}Z,ACME,{10 + i % 9}.5,{i}\n" for i in range(300)
    )
    assert builtin_filters().detect("cat data/prices.csv", "bash", rows).source == "skip"
    items = "".join(
        json.dumps({"time": f"2026-12-02T10:00:{i:02d}Z", "sku": f"S-{i}"}) + "\n"
        for i in range(50)
    )
    assert builtin_filters().detect("head -n 50 items.jsonl", "bash", items).source == "skip"
    source = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(60))
    assert builtin_filters().detect("cat src/app.py", "bash", source).source == "skip"


def test_a_tail_of_a_json_lines_log_saves_and_keeps_every_failure() -> None:
    text = json_log()
    out, saved = compress_soundly(tool_output(text, "tail -n 300 logs/app.jsonl"), "standard")
    assert saved > 0.6  # 31.7 % before: a read left to the log folder alone
    for line in text.splitlines():
        if '"level": 50' in line:
            assert line in out


def test_json_lines_are_no_json_document_for_aging() -> None:
    assert not _json_document(json_log(20))
    assert _json_document('{\n  "items": [1, 2]\n}')
    assert _json_document('{"items": [1, 2, 3], "next": "/api/v1/items?page=2", "tot')  # head -c
    assert _json_document('[{"a": 1},\n{"a": 2}]')
    # JSON lines of data (``jq -c '.items[]'``): their values are the answer
    assert _json_document('{"sku": "S-1", "price": 1.5}\n{"sku": "S-2", "price": 2.5}\n')


def test_aggressive_condenses_a_fresh_json_lines_log_further() -> None:
    text = json_log(600)  # 46 lines after standard: long enough for aging's fresh tier
    _, standard = compress_soundly(tool_output(text, "node server.js"), "standard")
    _, aggressive = compress_soundly(tool_output(text, "node server.js"), "aggressive")
    assert aggressive > standard
