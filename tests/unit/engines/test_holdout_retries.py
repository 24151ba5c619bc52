"""A Python worker's log (``cat logs/billing-sync.log`` of a seeded sync worker that logs with
the stdlib ``logging`` module): WARNING lines that differ only in their timestamp and attempt
counter come in retry cycles between other lines.  The first cycle shows its first line; a
later cycle of the same template needs no first line of its own: it folds to one marker above
its last line (``… 3 lines like the next (... attempt 1/5–3/5 ...)``)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.sound import compress_soundly, tool_output

DATA = Path(__file__).resolve().parents[2] / "data" / "holdout-logs"
LOG = (DATA / "python-retries.txt").read_text(encoding="utf-8")
COMMAND = "cat logs/billing-sync.log"
RETRY = "ledger call failed, retrying"


def test_a_later_retry_cycle_folds_above_its_last_line() -> None:
    text, saved = compress_soundly(tool_output(LOG, COMMAND), "standard")
    retries = [line for line in LOG.splitlines() if RETRY in line]
    assert retries[0] in text  # the first line of the template stays in sight
    note = re.search(r"… (\d+) lines like the next \(([^)]*attempt 1/5–\d/5[^)]*)\)", text)
    assert note is not None, text
    after = text.split(note.group(0), 1)[1].split("\n")[1]
    assert RETRY in after  # the cycle's last line stands under its marker
    assert saved > 0.5
