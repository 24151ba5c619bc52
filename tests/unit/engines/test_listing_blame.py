"""``git blame`` (a captured run over a generated shop repository with four authors): every
line repeated its commit's author, date and time zone, padded to one width.  The view writes
each commit's author and date once, in the order the commits first appear, and each line as
``HASH N) code``; the original is stashed, and every commit, line number and line of code
stays visible."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.sound import compress_soundly, tool_output
from workers.engines.listing import listing_kind

DATA = Path(__file__).resolve().parents[2] / "data" / "holdout-logs"
BLAME = (DATA / "git-blame.txt").read_text(encoding="utf-8")
ROW = re.compile(
    r"^(\^?[0-9a-f]{8}) \((.+?) +(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d{4}) +(\d+)\) (.*)$"
)


def test_blame_is_read_from_its_lines() -> None:
    assert listing_kind(BLAME) == "blame"
    assert listing_kind("\n".join(BLAME.splitlines()[:3])) is None  # too few lines


@pytest.mark.parametrize("command", ["git blame -L 1,60 src/shop/payments.py", "./blame.sh"])
def test_every_commit_line_and_code_line_stays(command: str) -> None:
    text, saved = compress_soundly(tool_output(BLAME, command), "standard")
    view = text.split("\n")
    rows = [ROW.match(line) for line in BLAME.splitlines()]
    assert all(rows)
    for m in rows:
        assert m is not None
        assert f"{m.group(1)} {m.group(2)} {m.group(3)}" in view  # the commit, once
        assert f"{m.group(1)} {m.group(4)}) {m.group(5)}" in view  # the line
    assert saved > 0.3
