"""A CSV dump (``sqlite3 -csv``) is a table, not grep output.

Its rows' ISO timestamps (``2026-03-01T00:00:49Z``) read as grep's ``file:line:`` when the
file part may hold commas: held-out set 5's 900-row dump was detected as grep and kept whole
(0 % saved in standard).
"""

from __future__ import annotations

import random

from workers.core.settings import Settings
from workers.engines._filters import builtin_filters
from workers.pipeline.runner import Pipeline
from workers.testing import expanded_record, tool_output_record

COMMAND = "sqlite3 -header -csv orders.db 'select * from orders limit 400'"


def _csv(rows: int = 400) -> str:
    rng = random.Random(7)
    lines = ["order_id,user_id,created_at,country,status,items,total_cents,coupon"]
    for k in range(rows):
        status = "failed" if k % 97 == 13 else rng.choice(["shipped", "paid", "pending"])
        lines.append(
            f"ord_{100000 + rng.randrange(9999)},usr_{rng.randrange(99999)},"
            f"2026-03-{1 + k // 200:02d}T{k % 24:02d}:{k % 60:02d}:{(7 * k) % 60:02d}Z,"
            f"{rng.choice(['FR', 'DE', 'PL'])},{status},{rng.randrange(1, 9)},"
            f"{rng.randrange(100, 99999)},{rng.choice(['', 'WELCOME10'])}"
        )
    return "\n".join(lines) + "\n"


def test_a_csv_dump_is_not_grep_output() -> None:
    found = builtin_filters().detect(COMMAND, "bash", _csv())
    assert found.family != "grep"
    grep = "src/app.py:12:    return total\nsrc/app.py:40:    total += x\nlib/a.py:3:total = 0\n"
    assert builtin_filters().detect(None, "bash", grep * 3).family == "grep"


def test_standard_keeps_the_header_and_the_failed_rows_of_a_csv_dump() -> None:
    text = _csv()
    record = tool_output_record("csv", text, COMMAND)
    outcome = Pipeline(Settings(mode="standard")).run_raw(record)
    after = outcome.record["content"]
    assert len(after) * 3 < len(text)
    assert after.startswith("order_id,user_id,created_at,")
    failed = [line for line in text.splitlines() if ",failed," in line]
    assert len(failed) == 4 and all(line in after for line in failed)
    assert expanded_record(outcome) == record
