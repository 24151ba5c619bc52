"""A big CSV or TSV read (``cat sales.tsv``, 32,000 characters or more) goes through the generic
filter: header, head and tail, the rows with an error word or a name the request says stay, runs
of alike rows go to the stash (held-out set 8: a 32.7k-token TSV saved 0 % in standard).  A read
of code, or a small table, stays whole."""

from __future__ import annotations

import csv
import io
import json

from workers.core.settings import Settings
from workers.core.tokens import TokenCounter
from workers.pipeline.runner import Pipeline
from workers.testing import expanded_record, openai_record


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


def test_a_big_tsv_read_keeps_header_named_and_error_rows() -> None:
    content = _table(1500)
    assert len(content) > 32_000
    data = openai_record(
        "tsv-1", ("user", "Quote the row with the recall note."), ("tool", content),
        command="cat data/sales.tsv",
    )  # fmt: skip
    counter = TokenCounter()
    for mode in ("standard", "aggressive"):
        outcome = Pipeline(Settings(mode=mode)).run_raw(json.loads(json.dumps(data)))
        visible = outcome.record["messages"][-1]["content"]
        assert visible.startswith("date\tsku\twarehouse")
        assert "RECALL batch 7731" in visible and "import failed: bad EAN" in visible
        assert counter.count(visible) < counter.count(content) * 0.2, mode
        back = expanded_record(outcome)["messages"][-1]["content"]
        assert back.rstrip("\n") == content.rstrip("\n")


def test_a_small_table_read_stays_whole() -> None:
    content = _table(100)
    data = openai_record(
        "tsv-2", ("user", "Quote the row."), ("tool", content), command="cat a.tsv"
    )
    outcome = Pipeline(Settings(mode="standard")).run_raw(data)
    assert outcome.record["messages"][-1]["content"] == content
