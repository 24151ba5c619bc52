"""``prefix``: a run of tool-output lines that start alike is written once, under a header.

A log burst repeats its date and hour on every line (``2026-12-03 13:39:27,637 INFO``),
cargo prints ``   Compiling `` before every crate, pip ``Requirement already satisfied: ``,
``ls -l`` ``-rw-r--r-- 1 root root `` and a Maven build ``[INFO] ``.  Lossless mode writes
such a run as ``[[prefix:v1 "PREFIX" lines=N]]``, the lines without the prefix, and
``[[/prefix]]`` (:mod:`workers.markers.prefix`); expand puts the prefix back.

Which runs: at least :data:`MIN_LINES` consecutive lines whose common prefix ends at a
boundary (a space, tab, colon, ``]``, ``=`` or ``|``) and holds at least
:data:`MIN_VISIBLE` characters that are not blank; it never cuts a word that holds a
path or a URL (``./cvec/file_0.c``, ``tests/test_a.py::test_b``, ``/api/orders/12``):
every path stays visible whole.  A run stops at a blank line, a line holding
marker-like text, and inside a JSON block or a template table another engine wrote; an
error line is a line of the run like any other (a block decodes without a store: the
fact oracle reads it decoded; only the lossy modes, which do not run this engine, must
show a critical line as written).  A file read is
left whole (source code reads by its lines), unless it reads as a log.  A run is
written only when its block counts fewer tokens than its lines, and a prefix that starts
like a diff (``+``, ``-``; a long listing's ``-rw-r--r--`` is none), a quote (``>``) or
leading code indentation is left alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from operator import itemgetter
from types import ModuleType
from typing import ClassVar

from workers.engines._lineblocks import LineBlockEngine, splice
from workers.markers import prefix as marker
from workers.markers import template

__all__ = ["PrefixEngine", "factor"]

MIN_LINES = 6
MIN_VISIBLE = 3  # non-blank characters a prefix holds at least
MAX_PREFIX = 200
MAX_TEXT = 4_000_000  # characters: a bigger output is left as it is
_BOUNDARY = " \t:]=|"
_NO_START = "+-><@"
# blocks other engines wrote: a JSON block's rows, a template's table of values
_BLOCKS = ("[[json-table:", "[[json-min:", template.OPEN)
_BLOCK_ENDS = ("[[/json-table", "[[/json-min", template.CLOSE)
# a long listing's mode string (``-rw-r--r-- 1 root root``) starts with "-" but is no diff
_MODE = re.compile(r"-[r-][w-][xsS-][r-][w-][xsS-][r-][w-][xtT-][.+@]? ")


def _common(a: str, b: str, size: int) -> int:
    """Length of the common prefix of ``a[:size]`` and ``b`` (binary search on ``startswith``:
    a few slices in C instead of a comparison per character)."""
    if b.startswith(a[:size]):
        return size
    low, high = 0, min(size, len(b))  # a[:low] is shared, a[:high + 1] is not known to be
    while low < high:
        mid = (low + high + 1) // 2
        if b.startswith(a[:mid]):
            low = mid
        else:
            high = mid - 1
    return low


def _cut(line: str, size: int) -> int:
    """The longest prefix of ``line[:size]`` that ends at a boundary and cuts no path or URL
    (a word holding ``/`` or ``\\`` stays whole: ``./cvec/file_0.c``, ``/api/orders/12``); 0:
    none."""
    k = size
    while k > 0 and line[k - 1] not in _BOUNDARY:
        k -= 1
    if k == 0 or line[k - 1] in " \t":
        return k
    word = line.rfind(" ", 0, k) + 1
    word = max(word, line.rfind("\t", 0, k) + 1)
    end = len(line)
    for sep in (" ", "\t"):
        at = line.find(sep, k)
        if at != -1:
            end = min(end, at)
    if "/" in line[word:end] or "\\" in line[word:end]:
        return word
    return k


def _usable(prefix: str) -> bool:
    return (
        len(prefix) <= MAX_PREFIX
        and (prefix[0] not in _NO_START or _MODE.match(prefix) is not None)
        and len(prefix.replace(" ", "").replace("\t", "")) >= MIN_VISIBLE
        and "\r" not in prefix
    )


def _blocked(lines: list[str]) -> list[bool]:
    """Per line: whether it can be in no run (blank, marker-like, or inside a
    JSON block or a template's table another engine wrote)."""
    out: list[bool] = []
    in_json = False
    for line in lines:
        if line.startswith(_BLOCKS):
            in_json = True
        elif in_json and line.startswith(_BLOCK_ENDS):
            in_json = False
            out.append(True)
            continue
        stripped = line.strip()
        out.append(in_json or not stripped or "[[" in line or "<<cx:" in line)
    return out


_SHORTEST = MIN_VISIBLE  # a usable prefix is at least this long: its first characters
_HEAD = itemgetter(slice(0, _SHORTEST))


def _may_run(lines: list[str]) -> bool:
    """Whether some :data:`MIN_LINES` lines in a row start with the same visible characters
    (a run needs that; one pass in C over most texts, which have none)."""
    heads = list(map(_HEAD, lines))
    rows = zip(*(heads[d:] for d in range(MIN_LINES)), strict=False)
    return any(row[0] and row.count(row[0]) == MIN_LINES for row in rows)


def _runs(lines: list[str]) -> list[tuple[int, int, int]]:
    """``(start, end, prefix length)`` of every run worth a block candidate, in order."""
    out: list[tuple[int, int, int]] = []
    n = len(lines)
    blocked = _blocked(lines)
    i = 0
    while i < n:
        if blocked[i]:
            i += 1
            continue
        line = lines[i]
        head = line[:_SHORTEST]
        size = len(line)
        checked = False  # line[:size] is known to be a usable prefix
        best: tuple[int, int] | None = None
        shrunk = False  # the run ended where its prefix would become unusable
        j = i + 1
        while j < n and not blocked[j] and lines[j].startswith(head):
            common = _common(line, lines[j], size)
            if common != size or not checked:
                k = _cut(line, common)
                if k == 0 or not _usable(line[:k]):
                    shrunk = True
                    break
                size, checked = k, True
            j += 1
            if j - i >= MIN_LINES:
                best = (j, size)
        if best is None:
            # ended by a blocked line or another start: no line before it starts a run
            # that reaches past it, so none starts one long enough
            i = i + 1 if shrunk else j
            continue
        out.append((i, best[0], best[1]))
        i = best[0]
    return out


def factor(text: str, count: Callable[[str], int] | None = None) -> str:
    """``text`` with its runs of alike lines written as prefix blocks (see the module).

    ``count``: a token counter.  With one, a block is written where the prefix's tokens on
    all but one of its lines outweigh the header and the closing line, and the text is
    returned unchanged unless it counts fewer tokens in all; without one, every run is
    written.
    """
    if len(text) > MAX_TEXT or "\n" not in text:
        return text
    lines = text.split("\n")
    if not _may_run(lines):
        return text
    runs = _runs(lines)
    if not runs:
        return text
    blocks = (
        (start, end, marker.block(lines[start][:size], lines[start:end]))
        for start, end, size in runs
    )
    return splice(text, lines, blocks, count, None if count is None else partial(_worth, count))


def _worth(count: Callable[[str], int], run: list[str], block: list[str]) -> bool:
    """Whether the prefix's tokens on all but one of the run's lines outweigh the header
    and the closing line (the block's second line is the first one without its prefix)."""
    prefix = run[0][: len(run[0]) - len(block[1])]
    return (len(run) - 1) * count(prefix) > count(block[0]) + count(block[-1]) + 1


class PrefixEngine(LineBlockEngine):
    name = "prefix"
    lossless = True
    marker: ClassVar[ModuleType] = marker
    factor = staticmethod(factor)
