"""A log whose lines open with a bracket (gunicorn's ``[2025-12-04 20:53:21 +0000] [30073]
[INFO] ...``; a captured run of a seeded worker logging in gunicorn's format) is a log, not a
JSON document cut short: aggressive mode condenses it when it is the long, unanswered output,
as it does any other log, and every error line stays."""

from __future__ import annotations

from pathlib import Path

from tests.support.sound import compress_soundly, tool_output
from workers.core.settings import Settings
from workers.engines.aging import _json_document
from workers.pipeline.runner import Pipeline

DATA = Path(__file__).resolve().parents[2] / "data" / "holdout-logs"
LOG = (DATA / "gunicorn-log.txt").read_text(encoding="utf-8")
COMMAND = "cat logs/gunicorn.log"


def test_a_bracketed_log_is_no_json_document() -> None:
    assert LOG.startswith("[")
    assert not _json_document(LOG)
    assert _json_document('[{"id": 1},\n {"id": 2}\n')  # a JSON array still is
    assert _json_document('[\n  "a",\n  "b"\n]\n')


def test_aggressive_mode_condenses_the_fresh_log() -> None:
    outcome = Pipeline(Settings(mode="aggressive")).run_raw(tool_output(LOG, COMMAND))
    aging = next(e for e in outcome.stats["engines"] if e["engine"] == "aging")
    assert aging["details"].get("units_fresh") == 1
    text, _ = compress_soundly(tool_output(LOG, COMMAND), "aggressive")
    for line in LOG.splitlines():
        if "[ERROR]" in line or "[CRITICAL]" in line:
            assert line in text or any(
                shown.split("] ", 2)[-1] == line.split("] ", 2)[-1] for shown in text.splitlines()
            )
