"""A log whose lines open with a bracket (gunicorn's ``[2025-12-04 20:53:21 +0000] [30073]
[INFO] ...``; a captured run of a seeded worker logging in gunicorn's format) is a log, not a
JSON document cut short: aggressive mode condenses it when it is the long, unanswered output,
as it does any other log, and every error line stays."""

from __future__ import annotations

from pathlib import Path

from tests.support.sound import tool_output
from workers.core.catalog import AGGRESSIVE
from workers.core.settings import Settings
from workers.engines import resolve
from workers.engines.aging import AgingEngine, AgingPolicy, _json_document
from workers.pipeline.runner import Pipeline
from workers.pipeline.visibility import lost_facts
from workers.testing import expanded_record

DATA = Path(__file__).resolve().parents[2] / "data" / "holdout-logs"
LOG = (DATA / "gunicorn-log.txt").read_text(encoding="utf-8")
COMMAND = "cat logs/gunicorn.log"


def test_a_bracketed_log_is_no_json_document() -> None:
    assert LOG.startswith("[")
    assert not _json_document(LOG)
    assert _json_document('[{"id": 1},\n {"id": 2}\n')  # a JSON array still is
    assert _json_document('[\n  "a",\n  "b"\n]\n')


def test_aggressive_mode_condenses_the_fresh_log() -> None:
    # (the log folder shortens it first; aging condenses such an output again only when it
    # is big, here whatever its size)
    chain = [
        AgingEngine(policy=AgingPolicy(shortened_output_max_tokens=0)) if e.name == "aging" else e
        for e in resolve(AGGRESSIVE)
    ]
    pipeline = Pipeline(Settings(mode="aggressive"), engines={"aggressive": chain})
    outcome = pipeline.run_raw(tool_output(LOG, COMMAND))
    aging = next(e for e in outcome.stats["engines"] if e["engine"] == "aging")
    assert aging["details"].get("units_fresh") == 1
    assert outcome.rejections == []
    assert lost_facts(tool_output(LOG, COMMAND), outcome.record) == []
    assert expanded_record(outcome) == tool_output(LOG, COMMAND)
    text = outcome.record["content"]
    for line in LOG.splitlines():
        if "[ERROR]" in line or "[CRITICAL]" in line:
            assert line in text or any(
                shown.split("] ", 2)[-1] == line.split("] ", 2)[-1] for shown in text.splitlines()
            )
