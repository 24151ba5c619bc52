"""A tool filter's marker note names only the kinds that say what its lines are.

``… 35 lines omitted (21 similar lines, 14 other lines)`` told the model nothing the count
does not (a log's lines mix interleaved events): the note is ``… 35 lines omitted``, a
marker that only counts lines (one the ``logtemplate`` engine may carry inside a run).  Named
kinds stay when they are most of the run (``7 snippet lines, 1 help line``).  The log is a
captured run of a seeded Python sync worker (``cat logs/billing-sync.log``)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from tests.support.sound import compress_soundly, tool_output
from workers.engines.toolfilter.plan import PLAIN, REPEAT, SIMILAR, Label
from workers.engines.toolfilter.render import _parts

DATA = Path(__file__).resolve().parents[2] / "data" / "holdout-logs"
LOG = (DATA / "python-retries.txt").read_text(encoding="utf-8")


def test_log_markers_only_count_their_lines() -> None:
    text, _ = compress_soundly(tool_output(LOG, "cat logs/billing-sync.log"), "standard")
    notes = re.findall(r"… ([^<]*)<<cx:", text)
    assert any(re.fullmatch(r"\d+ lines omitted ", note) for note in notes), notes
    breakdowns = [note for note in notes if " omitted (" in note]
    assert not any(re.search(r"other lines?|similar lines?|repeated lines?", n) for n in breakdowns)


def test_named_kinds_stay_when_they_are_most_of_the_lines() -> None:
    snippet, help_line = Label("snippet lines"), Label("help lines")
    assert _parts(Counter({snippet: 7, help_line: 1, REPEAT: 1})) == [
        "7 snippet lines",
        "1 help line",
    ]
    separator = Label("separator lines")
    assert _parts(Counter({PLAIN: 5, separator: 1})) == []
    assert _parts(Counter({SIMILAR: 3, PLAIN: 2})) == []
