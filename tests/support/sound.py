"""Run one record through a mode and check what every compression must keep."""

from __future__ import annotations

from typing import Any

from workers.core.settings import Settings
from workers.pipeline.runner import Pipeline
from workers.pipeline.visibility import lost_facts
from workers.testing import expanded_record


def tool_output(content: str, command: str, rid: str = "t") -> dict[str, Any]:
    """A ``tool_output`` record of one command's output."""
    return {"id": rid, "kind": "tool_output", "command": command, "content": content}


def compress_soundly(record: dict[str, Any], mode: str) -> tuple[str, float]:
    """The compressed tool output's text and the share of tokens saved, after checking that
    the gate rejected nothing, no critical fact went out of sight and expand gives the
    record back exactly."""
    outcome = Pipeline(Settings(mode=mode)).run_raw(record)
    assert outcome.rejections == []
    assert lost_facts(record, outcome.record) == []
    assert expanded_record(outcome) == record
    saved = 1 - outcome.stats["tokens_after"] / outcome.stats["tokens_before"]
    return outcome.record["content"], saved
