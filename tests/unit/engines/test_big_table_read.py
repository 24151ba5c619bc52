"""A big CSV or TSV read (``cat sales.tsv``, 32,000 characters or more) goes through the generic
filter: header, head and tail, the rows with an error word or a name the request says stay, runs
of alike rows go to the stash (held-out set 8: a 32.7k-token TSV saved 0 % in standard).  A read
of code, or a small table, stays whole."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import orjson

from workers.core.offload import MemoryStore
from workers.core.settings import Settings
from workers.core.tokens import TokenCounter
from workers.pipeline.expand import expand_record
from workers.pipeline.runner import Pipeline


def _table(rows: int) -> str:
    out = io.StringIO()
    writer = csv.writer(out, delimiter="\t", lineterminator="\n")
    writer.writerow(["date", "sku", "warehouse", "units_sold", "revenue_eur", "note"])
    for k in range(rows):
        note = "RECALL batch 7731" if k == 777 else ("import failed: bad EAN" if k == 901 else "")
        writer.writerow(
            [
                f"2026-11-{1 + k % 28:02d}",
                f"SKU-{k}",
                f"WH-{k % 3}",
                k % 300,
                f"{k * 7.31:.2f}",
                note,
            ]
        )
    return out.getvalue()


def _record(command: str, content: str, question: str) -> dict[str, Any]:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "bash", "arguments": json.dumps({"command": command})},
    }
    return {
        "id": "tsv-1",
        "messages": [
            {"role": "user", "content": question},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": content},
        ],
    }


def test_a_big_tsv_read_keeps_header_named_and_error_rows() -> None:
    content = _table(1500)
    assert len(content) > 32_000
    data = _record("cat data/sales.tsv", content, "Quote the row with the recall note.")
    counter = TokenCounter()
    for mode in ("standard", "aggressive"):
        outcome = Pipeline(Settings(mode=mode)).run_raw(orjson.loads(orjson.dumps(data)))
        visible = outcome.record["messages"][2]["content"]
        assert visible.startswith("date\tsku\twarehouse")
        assert "RECALL batch 7731" in visible and "import failed: bad EAN" in visible
        assert counter.count(visible) < counter.count(content) * 0.2, mode
        store = MemoryStore()
        store.put_many(outcome.stash)
        back = expand_record(orjson.loads(orjson.dumps(outcome.record)), store)
        assert back["messages"][2]["content"].rstrip("\n") == content.rstrip("\n")


def test_a_small_table_read_stays_whole() -> None:
    content = _table(100)
    data = _record("cat data/sales.tsv", content, "Quote the row with the recall note.")
    outcome = Pipeline(Settings(mode="standard")).run_raw(data)
    assert outcome.record["messages"][2]["content"] == content
