"""Aging keeps whole the function of a file read that the latest request names.

``tests/data/holdout-python/cat-ledger.txt`` is ``cat src/invtrack/ledger.py`` of a small
package written on this machine for the held-out Python set (holdout-d).  The user asks to fix
``Ledger.to_json``; the assistant reads the file and answers in the same turn.  Outline keeps
a named function whole in a longer read; aging then condensed the answered read to its head,
tail and three relevant lines, so ``def to_json(self):`` (and on a 120 KB read of
django's ``sql/query.py``, all of ``Query.add_q`` that the user asked about) went into the
stash in aggressive mode.  The function the model is working on in this turn stays visible; the
rest of the read is condensed as before.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from workers.core.settings import Settings
from workers.pipeline.runner import Pipeline
from workers.pipeline.visibility import lost_facts
from workers.testing import expanded_record

LEDGER = (
    Path(__file__).resolve().parents[2] / "data" / "holdout-python" / "cat-ledger.txt"
).read_text(encoding="utf-8")
LINES = LEDGER.splitlines()
TO_JSON = LINES[LINES.index("    def to_json(self):") : LINES.index("    def to_json(self):") + 5]


def _chat(ask: str) -> dict[str, Any]:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {
            "name": "bash",
            "arguments": json.dumps({"command": "cat src/invtrack/ledger.py"}),
        },
    }
    return {
        "id": "read",
        "messages": [
            {"role": "user", "content": ask},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": LEDGER},
            {"role": "assistant", "content": "The note field is missing from the dict."},
        ],
    }


def _aggressive(record: dict[str, Any]) -> str:
    outcome = Pipeline(Settings(mode="aggressive")).run_raw(record)
    assert outcome.rejections == []
    assert lost_facts(record, outcome.record) == []
    assert expanded_record(outcome) == record
    text: str = outcome.record["messages"][2]["content"]
    return text


def test_the_named_function_stays_whole_in_an_answered_read() -> None:
    assert TO_JSON[-1].strip() == "])"
    text = _aggressive(
        _chat("Fix Ledger.to_json in src/invtrack/ledger.py so the note field round-trips.")
    )
    for line in TO_JSON:
        assert line in text.splitlines()
    # the read is still condensed: a body the request does not name goes
    assert "            self.bins[src].put(sku, qty)" not in text


def test_without_a_named_function_the_read_is_condensed_as_before() -> None:
    text = _aggressive(_chat("Add type hints to the ledger module."))
    assert "    def to_json(self):" not in text.splitlines()
