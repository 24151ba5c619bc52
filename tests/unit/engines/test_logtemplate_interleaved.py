"""Runs of one log template fold across lines of another template (a health check among
retries) and across an earlier engine's marker line; a file read that is a log is folded."""

from __future__ import annotations

import random

from tests.support.clock import log_time
from tests.support.sound import compress_soundly, tool_output
from workers.core.settings import Settings
from workers.engines.logtemplate import _runs, fold_log
from workers.pipeline.runner import Pipeline

TOKENS = Pipeline(Settings(mode="standard")).tokens


def _service_log(lines: int, every: int, seed: int = 3) -> str:
    """Retry warnings with a health check every ``every`` lines, as a service logs them."""
    rng = random.Random(seed)
    out = []
    t = 0
    for i in range(lines):
        t += rng.randint(100, 900)
        ts = log_time(t)
        if i % every == every - 1:
            out.append(
                f"{ts} INFO  api.health [pid 4120] health check ok ({rng.randint(2, 40)} ms)"
            )
        else:
            out.append(
                f"{ts} WARNING api.client [pid 4120] retrying GET https://billing.internal/v1/invoices"
                f" (attempt {i % 5 + 1})"
            )
    return "\n".join(out) + "\n"


def test_a_health_check_between_retries_rides_along_in_the_run() -> None:
    text = _service_log(60, 4)
    runs = _runs((text, "python3 api.py", frozenset()))
    assert runs is not None
    longest = max(runs, key=lambda r: len(r.members))
    assert len(longest.members) == 45 and longest.passengers == 14
    result = fold_log(text, TOKENS, "python3 api.py")
    assert result is not None and result.runs == 1
    assert "among them 14 other lines" in result.text
    # first, summary, last retry, and the health check after it (no retry follows it)
    assert len(result.text.splitlines()) == 4


def test_two_foreign_lines_in_a_row_end_the_run() -> None:
    text = _service_log(40, 4).replace(
        "health check ok",
        "health check ok\n2026-12-02 10:59:59,000 INFO  api.pool [pid 4120] pool resized",
    )
    runs = _runs((text, "python3 api.py", frozenset()))
    assert runs is not None
    assert all(r.passengers == 0 for r in runs)


def test_a_line_with_an_identifier_never_rides() -> None:
    text = _service_log(40, 4).replace("health check ok", "health check ok for /srv/a")
    runs = _runs((text, "python3 api.py", frozenset()))
    assert runs is not None and all(r.passengers == 0 for r in runs)


def test_an_error_line_rides_only_after_a_visible_line_of_its_shape() -> None:
    text = _service_log(40, 4).replace("health check ok", "health check failed")
    runs = _runs((text, "python3 api.py", frozenset()))
    assert runs is not None
    lines = text.splitlines()
    firsts = [run.first.index for run in runs]
    checks = [i for i, line in enumerate(lines) if "health check failed" in line]
    # the first failed check heads a run of its own (visible); the later ones ride along,
    # but the last (the latest state stays in sight)
    assert checks[0] in firsts and checks[-1] in firsts
    assert not set(checks[1:-1]) & set(firsts)
    assert sum(run.passengers for run in runs) == len(checks) - 2
    out, saved = compress_soundly(tool_output(text, "python3 api.py"), "standard")
    assert lines[checks[0]] in out and saved > 0.5


def test_an_error_line_of_a_shape_not_shown_never_rides() -> None:
    text = _service_log(40, 4)
    for name in [
        "billing",
        "search",
        "auth",
        "carts",
        "mail",
        "stock",
        "media",
        "users",
        "tax",
        "ledger",
    ]:
        # each check fails for another service: ten facts
        text = text.replace("health check ok", f"health check failed for {name}", 1)
    runs = _runs((text, "python3 api.py", frozenset()))
    assert runs is not None and all(r.passengers == 0 for r in runs)


def _sync_log(batches: int, seed: int = 5) -> str:
    """A batch job: a slow-upstream warning for every third batch, a progress line with the
    count of failed batches every 25, a failed batch with its traceback every 97."""
    rng = random.Random(seed)
    out, failed = [], 0
    for b in range(1, batches + 1):
        ts = f"2026-12-02 11:{b // 600:02d}:{(b // 10) % 60:02d},{b % 1000:03d}"
        if b % 97 == 0:
            failed += 1
            out += [
                f"{ts} ERROR   shop.sync [812] batch {b} failed; retried in the next run",
                "Traceback (most recent call last):",
                '  File "/srv/shop/sync.py", line 38, in main',
                "    push(batch)",
                f"UpstreamError: upstream returned 502 for batch {b}",
            ]
        elif b % 3 == 0:
            out.append(
                f"{ts} WARNING shop.sync [812] batch {b} of {batches}: upstream slow"
                f" (latency {rng.randint(260, 1200)} ms), retrying"
            )
        if b % 25 == 0:
            out.append(
                f"{ts} INFO    shop.sync [812] progress: {b}/{batches} pushed, {failed} failed"
            )
    return "\n".join(out) + "\n"


def test_progress_lines_with_a_failed_count_ride_in_the_retry_runs() -> None:
    text = _sync_log(380)  # its last line is a retry, not a progress line
    lines = text.splitlines()
    progress = [line for line in lines if "progress:" in line]
    out, saved = compress_soundly(tool_output(text, "python3 tools/sync.py 400"), "standard")
    shown = out.splitlines()
    assert progress[0] in shown  # the shape's first line stays: the others are that fact
    assert progress[-1] in shown  # ... and its last: the latest count is never a passenger
    assert sum(1 for line in shown if "progress:" in line) < len(progress) // 2
    for line in lines:  # every failed batch and its exception stay visible
        if " ERROR " in line or line.startswith("UpstreamError"):
            assert line in shown, line
    assert saved > 0.6


def test_tail_of_a_log_file_is_folded_and_expands_back() -> None:
    text = _service_log(120, 4)
    record = {
        "id": "t",
        "kind": "tool_output",
        "command": "tail -n 120 logs/api.log",
        "content": text,
    }
    out, saved = compress_soundly(record, "standard")
    assert saved > 0.5
    assert "more lines like this" in out


def test_cat_of_a_log_file_is_folded() -> None:
    text = _service_log(60, 4)
    record = {"id": "c", "kind": "tool_output", "command": "cat /var/log/app.log", "content": text}
    out, saved = compress_soundly(record, "standard")
    assert "more lines like this" in out and saved > 0.5


def test_a_source_file_read_is_left_alone() -> None:
    source = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(60))
    record = {"id": "s", "kind": "tool_output", "command": "cat src/app.py", "content": source}
    outcome = Pipeline(Settings(mode="standard")).run_raw(record)
    stats = {e["engine"]: e["status"] for e in outcome.stats["engines"]}
    assert stats["logtemplate"] == "unchanged"
