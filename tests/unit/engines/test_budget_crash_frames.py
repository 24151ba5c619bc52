"""The budget keeps a line that was critical in the output as it came in: after toolfilter
stashed a race report's library frames, the first user frame of each stack stays visible.

``tests/data/budget/go-test-race.txt`` is a ``go test -race -v`` of the corpus's generated
cart package (``workers.bench.toolchains.go_captures``), its temporary path replaced by
``/home/dev/proj``: on this output a 30 % budget used to hide ``cart.go:17 +0xf2``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from workers.core.settings import Settings
from workers.pipeline.runner import Pipeline
from workers.pipeline.visibility import lost_facts

RACE = (Path(__file__).resolve().parents[2] / "data" / "budget" / "go-test-race.txt").read_text(
    encoding="utf-8"
)


def _chat(budget_share: float, pipeline: Pipeline) -> dict[str, Any]:
    call = {"command": "go test -race -v ./..."}
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Run the cart tests with the race detector."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "bash", "arguments": json.dumps(call)},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": RACE},
        {"role": "assistant", "content": "--- FAIL: TestTotal (0.00s)"},
    ]
    total = sum(pipeline.tokens.count(m["content"] or "") for m in messages)
    return {"id": "race", "messages": messages, "budget_tokens": int(budget_share * total)}


def test_a_tight_budget_keeps_every_first_user_frame() -> None:
    pipeline = Pipeline(Settings(mode="aggressive"))
    record = _chat(0.3, pipeline)
    outcome = pipeline.run_raw(record)
    assert outcome.rejections == []
    assert lost_facts(record, outcome.record) == []
    tool = outcome.record["messages"][2]["content"]
    assert "cart.go:17 +0xf2" in tool and "WARNING: DATA RACE" in tool
