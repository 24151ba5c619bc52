"""Column padding kept out of band: the writer and the decoder of the ``align`` engine.

Tool output aligns its columns with runs of spaces (``git log --stat``'s
``path      | 41 +++``, eslint's ``4:3   error    Unexpected var``, ``pip
list``, ``ls -la``, a log's ``INFO    app``); the model reads the columns as
well with one space, and each run costs a token.  The ``align`` engine writes
each such run as one space; what expand needs to widen them again lives in the
record's ``compression`` manifest (``markers.align``, one entry per unit):

    UNIT=ITEM,ITEM...      ITEM: D+W

``D``: how many characters of the visible text the run's one space stands
after the previous one's (the first: from the start); ``W``: the run's width
in the input.  Positions are exact because ``align`` is the last engine of
every chain: nothing rewrites the text after it, and expand widens the runs
before it resolves any other marker.

:func:`restore` widens a run only where the text holds exactly one space
between two non-whitespace characters (space, tab, CR, LF, FF and VT are
whitespace) at that position; an entry that does not parse leaves the text as
it is: an entry can only widen single spaces.
"""

from __future__ import annotations

import re

from workers.markers import ansi

__all__ = ["WS", "entry", "parse", "restore"]

_ITEM = re.compile(r"(\d{1,12})\+(\d{1,9})")
WS = ansi.WS  # what counts as whitespace, as for the ansi entries
MAX_WIDTH = 100_000  # a wider run in an entry is not one this engine wrote


def entry(runs: list[tuple[int, int]]) -> str:
    """The manifest entry (without ``UNIT=``) of ``runs``: (position of the one space left
    in the squeezed text, the run's width in the input), in order."""
    items: list[str] = []
    last = 0
    for pos, width in runs:
        items.append(f"{pos - last}+{width}")
        last = pos
    return ",".join(items)


def parse(value: str) -> list[tuple[int, int]] | None:
    """(position, width) of an entry's items; None when it is not one."""
    if not value:
        return None
    runs: list[tuple[int, int]] = []
    pos = 0
    for item in value.split(","):
        m = _ITEM.fullmatch(item)
        if m is None:
            return None
        width = int(m.group(2))
        if not 2 <= width <= MAX_WIDTH:
            return None
        pos += int(m.group(1))
        runs.append((pos, width))
    return runs


def restore(text: str, value: str | None) -> str:
    """``text`` with the runs of its entry widened again (``value``: the entry, or None)."""
    runs = parse(value) if value else None
    if runs is None:
        return text
    pieces: list[str] = []
    written = 0  # text[:written] is in pieces
    n = len(text)
    for pos, width in runs:
        if (
            written < pos < n - 1
            and text[pos] == " "
            and text[pos - 1] not in WS
            and text[pos + 1] not in WS
        ):
            pieces.append(text[written:pos])
            pieces.append(" " * width)
            written = pos + 1
    if not pieces:
        return text
    pieces.append(text[written:])
    return "".join(pieces)
