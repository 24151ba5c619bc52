"""gcc's ``note:`` lines belong to the finding above them (issue 13: diagnostics as blocks).

The log is real (``tests/support/gcc_notes_sample.py`` ran ``make -k`` over six C files):
every warning has a ``note:`` with its own snippet art.  The note line is a fact and stays;
its snippet is stashed like the warning's; a repeat whose note is shown above (the same
words at another place: notes fold by shape, as warnings do) folds with it, its places
listed in the marker; nothing is lost and expand gives the log back.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from workers.core.settings import Settings
from workers.fidelity.facts import line_shape
from workers.pipeline.runner import Pipeline
from workers.pipeline.visibility import lost_facts
from workers.testing import expanded_record

LOG = (Path(__file__).resolve().parent.parent / "data" / "gcc-notes" / "make-k.txt").read_text(
    encoding="utf-8"
)
_NOTE = re.compile(r"^\S+?:\d+:\d+: note: ")
_SNIPPET = re.compile(r"^ *\d+ \| |^ +\| ")


def _record() -> dict[str, Any]:
    return {"id": "mk", "kind": "tool_output", "content": LOG, "command": "make -k"}


@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_notes_stay_their_snippets_go_and_the_log_comes_back(mode: str) -> None:
    outcome = Pipeline(Settings(mode=mode)).run_raw(_record())
    text = outcome.record["content"]
    assert outcome.rejections == []
    assert lost_facts(_record(), outcome.record) == []
    assert expanded_record(outcome) == _record()
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if _NOTE.match(line) and i + 1 < len(lines):
            assert not _SNIPPET.match(lines[i + 1]), (line, lines[i + 1])
    # (a two-line snippet cheaper than its marker may stay: ``2 | static int unused_0;``)
    # every kind of note stays readable as gcc wrote it (one line of each shape: a note
    # repeated with its warning at another place goes with that repeat, whose places
    # the marker lists)
    notes = [line for line in LOG.splitlines() if _NOTE.match(line)]
    shown = {line_shape(line) for line in text.splitlines() if _NOTE.match(line)}
    assert notes and {line_shape(note) for note in notes} <= shown
    assert all(line in text for line in notes if "undeclared identifier" in line)
    assert "mod004.c:7:29: error: ‘undefined_symbol_4’ undeclared" in text
    for place in ("mod001.c:5:75", "mod003.c:6:91"):  # repeats' places, in the marker notes
        assert place in text
    saved = 1 - outcome.stats["tokens_after"] / outcome.stats["tokens_before"]
    # 0.746 when written; 0.426 with notes compared as written, 0.295 outside the blocks
    assert saved >= 0.70, saved
