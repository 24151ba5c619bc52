"""java.util.logging's default format writes each record on two lines: ``Dec 03, 2026 5:14:07 PM
com.acme.feed.FeedImporter main`` (time, class, method), then ``INFO: batch 3 imported ...``.
Its first line is a log line too, with its time a measure, so a read of such a log under any
file name (``cat app-2026-12-03.txt``, a read tool) is a log read and folds; before, half of
its lines were no log lines and the read stayed whole.  The logs are captured runs of a seeded
feed importer and inventory service in Java."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.sound import compress_soundly, tool_output
from workers.engines._logs import is_log_line, is_marked_log_line, mask, reads_a_log

DATA = Path(__file__).resolve().parents[2] / "data" / "holdout-logs"
FEED = (DATA / "jul-feed.txt").read_text(encoding="utf-8")
STOCK = (DATA / "jul-stock-stacks.txt").read_text(encoding="utf-8")


def test_the_record_header_is_a_marked_log_line_with_a_measured_time() -> None:
    header = FEED.splitlines()[0]
    assert header.endswith("com.acme.feed.FeedImporter main")
    assert is_log_line(header) and is_marked_log_line(header)
    masked = mask(header)
    assert [(f.kind, f.measure) for f in masked.fields] == [("ts", True)]
    assert reads_a_log(FEED, marked=True) and reads_a_log(STOCK, marked=True)


@pytest.mark.parametrize("text", [FEED, STOCK], ids=["feed", "stock"])
def test_a_read_of_a_jul_log_folds(text: str) -> None:
    out, saved = compress_soundly(tool_output(text, "cat app-2026-12-03.txt"), "standard")
    assert saved > 0.4
    for line in text.splitlines():
        if line.startswith("SEVERE: "):
            assert line in out
