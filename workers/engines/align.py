"""``align``: the padding of column-aligned tool output goes out of band.

A run of spaces that only pads a column (``git log --stat``'s ``path    | 41``,
eslint's ``4:3   error    Unexpected var``, ``pip list``, ``ls -la``, a log's
``INFO    app``) is written as one space; the runs' widths go to the record's
``compression`` manifest (``markers.align``, :mod:`workers.markers.align`),
where expand reads them back.  Lossless, like the ``ansi`` engine: the gate
checks that :meth:`decode_with` gives back the exact text.

Only tool outputs, and only runs that are padding for certain.  A run stays
as it is when squeezing it could change what the line says:

- leading indentation, and the indentation after a short prefix (a diff's
  ``+``/``-``, pytest's ``E``/``>``, a line number) or a line number's gutter
  (``12 |`` of a snippet, ``file:12:`` of grep -n): code structure;
- inside a string literal (an odd count of ``"``, ``'`` or a backtick before
  it, or a backslash): ``'a  b'`` is a value; inside square brackets (a pytest id's
  ``test_region[EU  West]``); two spaces after a sentence (``No rule.  Stop.``);
- a run that spans the start of another line's cell in its block: this
  line's cell there is empty, and one space would shift the next cell into it;
- two different lines that would read the same (``-a  b`` and ``+a b`` of a
  whitespace fix, side markers aside), lines holding marker-like text, and
  units where the squeeze saves no token.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from typing import Any

from workers.engines.base import EngineContext, EngineOutput, LosslessEngine
from workers.markers import align, marker_tokens
from workers.messages.model import Unit

__all__ = ["AlignEngine", "squeeze"]

_SHORT_PREFIX = 2  # '+', 'E', '12': a diff, pytest or line-number prefix, then code
_LINE_NUMBER = 12  # digits: the longest line number a listing's gutter holds
MAX_TEXT = 4_000_000  # characters: a bigger output is left as it is (one pass, bounded)


_SPACES = re.compile(r"  +")  # a literal scan: far faster than a pattern with a lookbehind
_WS = align.WS


def _is_gutter(line: str, at: int) -> bool:
    """Whether ``line[at]`` (``|``, ``:``, ``-``) ends a line number's gutter: ``12 |``,
    ``file.py:12:``, ``file.py-12-`` (grep's context lines); what follows is code."""
    before = line[at - 1]
    return before.isdigit() or (before == " " and at >= 2 and line[at - 2].isdigit())


def _padding(line: str, runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The runs of ``line`` (start, end, in order) that only pad a column.

    A run pads a column unless it follows a short prefix (``+``, ``E``,
    ``12``) or a line number's gutter (``12 |``, ``file.py:12:``): what
    follows is code, its indentation counts; or it stands inside a string
    literal (an odd count of a quote before it, or a backslash).  One pass over
    the line, however many runs it has.
    """
    indent = len(line) - len(line.lstrip(" \t"))
    kept: list[tuple[int, int]] = []
    double = single = back = 0  # quote counts in line[:scanned]
    depth = 0  # brackets open in line[:scanned]
    escaped = False
    scanned = 0
    for start, end in runs:
        piece = line[scanned:start]
        double += piece.count('"')
        single += piece.count("'")
        back += piece.count("`")
        if "[" in piece or depth:  # a square bracket holds a value (git blame's parens pad)
            depth = max(0, depth + piece.count("[") - piece.count("]"))
        escaped = escaped or "\\" in piece
        scanned = start
        if escaped or (double | single | back) & 1 or (depth > 0 and line[start - 1] != "["):
            continue  # (pytest's ``[  7%]`` pads its number)
        if end - start == 2 and line[start - 1] in ".!?" and line[end : end + 1].isupper():
            continue  # two spaces after a sentence (``*** No rule.  Stop.``): prose, not a column
        size = start - indent
        if (
            size <= _SHORT_PREFIX
            or (line[start - 1] in "|:-" and _is_gutter(line, start - 1))
            or (size <= _LINE_NUMBER and line[indent:start].isdigit())
        ):
            continue
        kept.append((start, end))
    return kept


def _squeezed(line: str, runs: list[tuple[int, int]]) -> str:
    """``line`` with ``runs`` (start, end) written as one space each."""
    pieces: list[str] = []
    cursor = 0
    for start, end in runs:
        pieces.append(line[cursor:start])
        pieces.append(" ")
        cursor = end
    pieces.append(line[cursor:])
    return "".join(pieces)


def _interior_runs(text: str) -> dict[int, list[tuple[int, int]]]:
    """Line start -> (start, end) within the line of each run of two or more spaces
    between two non-whitespace characters (not indentation, not trailing blanks)."""
    by_line: dict[int, list[tuple[int, int]]] = {}
    n = len(text)
    line_start = scanned = 0
    for m in _SPACES.finditer(text):
        start, end = m.span()
        if start == 0 or end == n or text[start - 1] in _WS or text[end] in _WS:
            continue
        newline = text.rfind("\n", scanned, start)
        if newline >= 0:
            line_start = newline + 1
        scanned = start
        by_line.setdefault(line_start, []).append((start - line_start, end - line_start))
    return by_line


_BEFORE_BLANK = re.compile(r"\n(?=[ \t\r\f\v]*(?:\n|$))")  # a line end, then a blank line


def _blank_starts(text: str) -> list[int]:
    """Where each blank line starts, in order (blank lines split blocks)."""
    starts = [m.end() for m in _BEFORE_BLANK.finditer(text)]
    if not text[: text.find("\n") if "\n" in text else len(text)].strip(" \t\r\f\v"):
        starts.insert(0, 0)
    return starts


def _spans_a_cell(
    start: int, end: int, line: int, columns: list[int], owners: dict[int, set[int]]
) -> bool:
    """Whether another line of the block starts a cell after padding inside ``(start, end)``."""
    k = bisect_right(columns, start)
    while k < len(columns) and columns[k] < end:
        holders = owners[columns[k]]
        if len(holders) > 1 or line not in holders:
            return True
        k += 1
    return False


def _content(line: str) -> str:
    """What a line says without a diff's or a report's side marker (``-``, ``+``, ``<``, ``>``)."""
    return line.lstrip("+-<> ")


def _line_at(text: str, start: int) -> str:
    end = text.find("\n", start)
    return text[start:] if end < 0 else text[start:end]


def squeeze(text: str) -> tuple[str, list[tuple[int, int]]]:
    """``text`` with its padding runs squeezed, and the runs: (position in the result, width).

    Per block of non-blank lines: a run that spans the start of a cell of
    another line of its block stays as it is (this line's cell there is empty,
    and one space would shift the next cell into it), so do lines holding
    marker-like text, and two different lines never read the same once
    squeezed (a diff's ``-a  b`` and ``+a b``, the two sides of an assertion).
    """
    if "  " not in text or len(text) > MAX_TEXT:
        return text, []
    by_line = _interior_runs(text)
    if not by_line:
        return text, []
    blanks = _blank_starts(text)
    block_of = {start: bisect_right(blanks, start) for start in by_line}
    # per block, the columns where a line's cell starts after padding, and which lines
    owners: dict[int, dict[int, set[int]]] = {}
    for start, runs in by_line.items():
        by_column = owners.setdefault(block_of[start], {})
        for _, end in runs:
            by_column.setdefault(end, set()).add(start)
    columns = {block: sorted(by_column) for block, by_column in owners.items()}
    squeezed: dict[int, tuple[str, list[tuple[int, int]]]] = {}
    for line_start, runs in by_line.items():
        line = _line_at(text, line_start)
        if "[[" in line or "<<cx:" in line:
            continue
        block = block_of[line_start]
        cols, holders = columns[block], owners[block]
        if len(cols) > 1:
            runs = [(a, b) for a, b in runs if not _spans_a_cell(a, b, line_start, cols, holders)]
        kept = _padding(line, runs)
        if kept:
            squeezed[line_start] = (_squeezed(line, kept), kept)
    if not squeezed:
        return text, []
    _drop_collisions(text, squeezed)
    if not squeezed:
        return text, []
    pieces: list[str] = []
    runs_out: list[tuple[int, int]] = []
    cursor = size = 0
    for line_start in sorted(squeezed):
        for a, b in squeezed[line_start][1]:
            piece = text[cursor : line_start + a]
            pieces.append(piece)
            size += len(piece)
            runs_out.append((size, b - a))
            pieces.append(" ")
            size += 1
            cursor = line_start + b
    pieces.append(text[cursor:])
    return "".join(pieces), runs_out


def _drop_collisions(text: str, squeezed: dict[int, tuple[str, list[tuple[int, int]]]]) -> None:
    """Leave alone the lines that would read like another line once squeezed (a diff's
    ``-a  b`` and ``+a b``, the two sides of an assertion), side markers aside."""
    said = {line.lstrip("+-<> ") for line in text.split("\n")}
    readers: dict[str, set[str]] = {}
    for line_start, (shown, _) in squeezed.items():
        readers.setdefault(_content(shown), set()).add(_content(_line_at(text, line_start)))
    for line_start in list(squeezed):
        shown = _content(squeezed[line_start][0])
        if shown in said or len(readers[shown]) > 1:
            del squeezed[line_start]


class AlignEngine(LosslessEngine):
    name = "align"
    lossless = True

    def apply(self, units: Sequence[Unit], ctx: EngineContext) -> EngineOutput:
        texts: list[str] = []
        layouts: dict[int, str] = {}
        squeezed = 0
        for i, unit in enumerate(units):
            text = unit.text
            if unit.frozen or not unit.is_tool_output:
                texts.append(text)
                continue
            plain, runs = squeeze(text)
            if (
                not runs
                or marker_tokens(plain) != marker_tokens(text)
                or ctx.tokens.count(plain) >= ctx.tokens.count(text)
            ):
                texts.append(text)
                continue
            texts.append(plain)
            layouts[i] = align.entry(runs)
            squeezed += len(runs)
        details: dict[str, Any] = {}
        if layouts:
            details = {"units": len(layouts), "runs": squeezed, "_layouts": layouts}
        return EngineOutput(texts=texts, details=details)

    def decode(self, text: str, originals: Mapping[str, str]) -> str:
        """Without its out-of-band entry the squeezed text is all there is."""
        return text

    def decode_with(self, text: str, layout: str) -> str:
        """``text`` with the runs of its entry widened again."""
        return align.restore(text, layout)
