"""A service log that interleaves its events folds the repeats of events shown above.

Held-out set 22 (a Go service's slog JSON log under load, 161 lines of six kinds of event:
``panic in handler`` and its ``request ... status 500`` for every bad manifest, a ``printer
busy`` warning and its 503, ``manifest accepted``...) kept 7,632 of 8,378 tokens: no two
neighbours were one template, so no run folded.  The logs here are written with a seeded
random, in slog's JSON and in logback's text layout.
"""

from __future__ import annotations

import json
import random
import re

from tests.support.clock import log_time
from tests.support.sound import compress_soundly, tool_output
from workers.core.tokens import TokenCounter
from workers.engines._logrepeats import MAX_LISTED, NOTE_MAX, fold_repeats
from workers.engines._logs import reads_a_log
from workers.fidelity.facts import line_shape
from workers.fidelity.lossy import check_lossy

TOKENS = TokenCounter()
NOTE = re.compile(
    r"… (\d+ (?:lines|entries \(\d+ lines\))(?: and \d+ earlier markers?)?"
    r" repeating events shown above[^\n]*?) <<cx:[0-9a-f]{16}>>"
)


def _slog(requests: int, seed: int = 22) -> str:
    """A Go service's JSON log: each request logs one or two lines, in random order."""
    rng = random.Random(seed)
    out = [
        json.dumps(
            {"time": log_time(0, iso=True), "level": "INFO", "msg": "shipd starting",
             "addr": "127.0.0.1:36011", "pid": 1493}, separators=(",", ":"),
        )
    ]  # fmt: skip
    t = 0
    for req in range(1, requests + 1):
        t += rng.randint(1, 40)
        ts = log_time(t, iso=True)
        kind = rng.choice(["ok", "ok", "panic", "busy", "quote"])
        line = {"time": ts, "level": "INFO", "msg": "manifest accepted", "parcels": 2}
        if kind == "panic":
            out.append(json.dumps({"time": ts, "level": "ERROR", "msg": "panic in handler",
                                   "req_id": req, "method": "POST", "path": "/manifest",
                                   "panic": "assignment to entry in nil map"},
                                  separators=(",", ":")))  # fmt: skip
            line = {"time": ts, "level": "ERROR", "msg": "request", "req_id": req,
                    "method": "POST", "path": "/manifest", "status": 500,
                    "dur_ms": rng.randint(1, 90) / 1000}  # fmt: skip
        elif kind == "busy":
            label = f"L{rng.randint(1, 3)}"
            out.append(json.dumps({"time": ts, "level": "WARN", "msg": "printer busy",
                                   "queue_len": 2, "id": label}, separators=(",", ":")))  # fmt: skip
            line = {"time": ts, "level": "ERROR", "msg": "request", "req_id": req,
                    "method": "POST", "path": "/label", "status": 503,
                    "dur_ms": rng.randint(50000, 52000) / 1000}  # fmt: skip
        elif kind == "quote":
            line = {"time": ts, "level": "INFO", "msg": "request", "req_id": req,
                    "method": "GET", "path": "/quote", "status": 200,
                    "dur_ms": rng.randint(1, 900) / 1000}  # fmt: skip
        out.append(json.dumps(line, separators=(",", ":")))
    return "\n".join(out) + "\n"


def _sound(text: str, after: str, stash: dict[str, str], command: str) -> None:
    assert check_lossy(text, after, "tool_result", stash, command=command) == []


def test_a_json_service_log_shows_each_event_once_and_folds_its_repeats() -> None:
    text = _slog(120)
    command = "cat shipd.log"
    result = fold_repeats(text, TOKENS, command)
    assert result is not None
    _sound(text, result.text, result.stash, command)
    visible = result.text.splitlines()
    lines = text.splitlines()
    # every kind of event is in sight in its first line, every error shape in its last too
    for msg in ('"panic in handler"', '"status":500', '"status":503', '"printer busy"'):
        with_it = [line for line in lines if msg in line]
        assert with_it[0] in visible, msg
    for status in ('"status":500', '"status":503'):
        errors = [line for line in lines if status in line]
        assert errors[-1] in visible
        assert sum(1 for line in visible if status in line) < len(errors) / 4
    assert TOKENS.count(result.text) < 0.45 * TOKENS.count(text)
    notes = NOTE.findall(result.text)
    assert notes and all(len(note) <= NOTE_MAX for note in notes)
    assert result.lines_folded == sum(int(note.split()[0]) for note in notes)


def test_the_pipeline_keeps_every_fact_and_gives_the_log_back() -> None:
    text = _slog(200, seed=5)
    out, saved = compress_soundly(tool_output(text, "cat shipd.log"), "standard")
    assert saved > 0.5
    assert "lines repeating events shown above" in out


def test_an_error_naming_another_thing_is_another_event() -> None:
    # the same failure for another order: its first line stays in sight, as every order's
    rows = []
    for k in range(60):
        order = 300 + k % 12
        rows.append(
            f'{{"time":"{log_time(k * 7, iso=True)}","level":"ERROR","msg":"charge failed",'
            f'"order_id":{order},"req_id":{900 + k},"err":"card declined"}}'
        )
    text = "\n".join(rows) + "\n"
    result = fold_repeats(text, TOKENS, "cat billing.log")
    assert result is not None
    _sound(text, result.text, result.stash, "cat billing.log")
    for order in range(300, 312):
        shown = [line for line in result.text.splitlines() if f'"order_id":{order},' in line]
        assert len(shown) >= 1, order
    # the request id names the request, not what failed: the repeats of one order fold
    assert result.lines_folded >= 30


def test_a_logback_log_folds_its_repeated_events_and_lists_their_values() -> None:
    rng = random.Random(8)
    rows = []
    for k in range(90):
        ts = log_time(k * 53)
        thread = f"http-nio-8080-exec-{rng.randint(1, 9)}"
        user = f"u{rng.randint(100, 999)}"
        if k % 3 == 0:
            rows.append(f"{ts} INFO  [{thread}] c.s.web.OrderController - GET /orders user={user}")
        elif k % 3 == 1:
            rows.append(f"{ts} DEBUG [{thread}] c.s.repo.OrderRepository - query took {k} ms")
        else:
            rows.append(f"{ts} INFO  [{thread}] c.s.web.CartController - cart loaded user={user}")
    text = "\n".join(rows) + "\n"
    command = "tail -n 90 logs/shop.log"
    result = fold_repeats(text, TOKENS, command)
    assert result is not None
    _sound(text, result.text, result.stash, command)
    visible = result.text.splitlines()
    assert visible[:3] == rows[:3]
    assert len(visible) < 20  # three events, then markers: every later line repeats them
    # every user of the folded lines is named in its note, or in a line above it
    for note, key in re.findall(r"… ([^\n]*) <<cx:([0-9a-f]{16})>>", result.text):
        above = result.text.split(f"<<cx:{key}>>")[0]
        for hidden in result.stash[key].splitlines():
            if "user=" in hidden:
                user = hidden.split("user=")[1]
                assert re.search(rf"\b{user}\b", note) or f"user={user}\n" in above, user
    assert MAX_LISTED < 20


def test_lines_next_to_a_marker_that_points_at_them_stay() -> None:
    text = _slog(60, seed=9)
    lines = text.splitlines()
    marker = "… 2 lines like the next (timestamps 10:00:00–10:00:01) <<cx:0123456789abcdef>>"
    at = len(lines) // 2
    lines.insert(at, marker)
    marked = "\n".join(lines) + "\n"
    result = fold_repeats(marked, TOKENS, "cat shipd.log")
    assert result is not None
    visible = result.text.splitlines()
    i = visible.index(marker)
    assert visible[i + 1] == lines[at + 1] and visible[i - 1] == lines[at - 1]


def test_short_or_mostly_other_outputs_are_left_alone() -> None:
    assert fold_repeats(_slog(3), TOKENS, "cat shipd.log") is None
    prose = "\n".join(f"step {k}: compiled module_{k}.c" for k in range(80)) + "\n"
    assert fold_repeats(prose + _slog(10), TOKENS, "make") is None


def test_a_json_status_and_a_request_id_as_the_gate_reads_them() -> None:
    line = '{"level":"ERROR","msg":"request","req_id":8,"path":"/label","status":503}'
    # another request of the same failure: one fact
    assert line_shape(line) == line_shape(line.replace('"req_id":8', '"req_id":91'))
    trace = line.replace('"req_id":8', '"traceId":"a1b2c3d4"')
    assert line_shape(trace) == line_shape(trace.replace("a1b2c3d4", "ffee0123"))
    # another status, another order: another fact
    assert line_shape(line) != line_shape(line.replace('"status":503', '"status":500'))
    order = '{"level":"ERROR","msg":"charge failed","order_id":12}'
    assert line_shape(order) != line_shape(order.replace(":12", ":13"))
    assert line_shape("ERROR charge failed order_id=12") != line_shape(
        "ERROR charge failed order_id=13"
    )
    assert line_shape("ERROR request failed req_id=12 status=500") == line_shape(
        "ERROR request failed req_id=97 status=500"
    )


def _postgres_log(statements: int, seed: int = 27) -> str:
    """A PostgreSQL server log with ``log_min_duration_statement = 0``: each statement is a
    log line and the indented lines that continue it, then one error with its DETAIL."""
    rng = random.Random(seed)
    out = []
    for k in range(statements):
        ts = log_time(k * 3).replace(",", ".") + " UTC"
        account = rng.randint(1, 60)
        day = rng.randint(0, 360)
        out += [
            f"{ts} [{30799 + k % 4}] postgres@ledger LOG:  duration: {rng.randint(300, 9000) / 1000}"
            " ms  statement: SELECT count(*), sum(amount_cents) FROM entries",
            f"\tWHERE account_id = {account}",
            f"\t  AND posted_at >= timestamptz '2023-01-01' + {day} * interval '1 day'",
            f"\t  AND posted_at <  timestamptz '2023-01-01' + ({day} + 30) * interval '1 day';",
        ]
    ts = log_time(statements * 3 + 1).replace(",", ".") + " UTC"
    out += [
        f'{ts} [31101] postgres@ledger ERROR:  duplicate key value violates unique constraint "entries_batch_unique"',
        f"{ts} [31101] postgres@ledger DETAIL:  Key (batch_id)=(4242) already exists.",
    ]  # fmt: skip
    return "\n".join(out) + "\n"


def test_multi_line_records_fold_as_one_event_each() -> None:
    text = _postgres_log(120)
    command = "sed -n 100,600p pg/log/postgresql.log"  # a file read: it is a log all the same
    assert reads_a_log(text) and not reads_a_log("\n".join(f"    line {k}" for k in range(50)))
    out, saved = compress_soundly(tool_output(text, command), "standard")
    assert saved > 0.75
    shown = out.splitlines()
    assert shown[:4] == text.splitlines()[:4]  # the first statement, whole
    assert "duplicate key value violates unique constraint" in out
    note = NOTE.search(out)
    assert note is not None and " entries (" in note.group(1)
    assert sum(int(n.split()[0]) for n in NOTE.findall(out)) >= 100  # of 119 repeats
    # the records' times, not the dates their statements quote; the durations' span
    assert "timestamps 2026-12-02 10:00:00.003 UTC–" in note.group(1)
    notes = NOTE.findall(out)
    assert all("2023-01-01" not in n for n in notes)
    assert any("duration 0." in n for n in notes)  # where it fits, the durations' span
