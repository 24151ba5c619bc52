"""``template``: a run of tool-output lines of one template is written as a table.

A log says the same thing again and again with other values (``synced acct_751
balance=4901 cents in 334 ms``), a test runner lists its passing tests the same way
(``--- PASS: TestRound/v374_s5 (0.00s)``), a build names one step per line.  Lossless
mode writes such a run once as a template with ``{}`` where the lines differ, then one
row of tab-separated values per line (:mod:`workers.markers.template`); expand fills the
values back in.

A JSON log (pino, bunyan, structlog, slog's JSON handler) is read by its keys instead:
consecutive one-line JSON objects whose first :data:`MIN_JSON_KEYS` or more keys are
written alike make a run; each of those keys' values and the rest of the line are the
columns (:mod:`workers.engines._jsonline` cuts a line as written), and a value that is
the same on every line (the host, the pid) goes into the template.

Which runs: at least :data:`MIN_LINES` consecutive lines that split into the same number
of words with the same spaces between them, where at least half of the words are the
same on every line.  A word that differs is a value, whole (a path, an id, a number stays
one value, never cut), except a timestamp (``10:55:48``, ``2026-12-03T09:16:21.732Z``,
``[03/Dec/2026:16:44:53``), whose parts that stay the same go into the template
(``10:55:{}``).  A run stops at a blank line, a line holding marker-like text or a tab,
and inside a JSON block another engine wrote; a diff (a hunk header) and a file read that
is not a log (source code reads by its lines) are left whole.  A run is written only when
its block counts fewer tokens than its lines.

Error and warning lines are table rows like any other: 109 ``WARNING ... retrying
(attempt 2/5)`` lines of one retry loop are one template and the values that tell them
apart, every one of them visible, and decoding needs no store (the fact oracle of
:mod:`workers.pipeline.visibility` reads them decoded, as it reads a JSON table).  Only the
lossy modes must show a critical line as written, and they do not run this engine.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from itertools import groupby
from operator import methodcaller
from types import ModuleType
from typing import ClassVar

from workers.engines._jsonline import members
from workers.engines._lineblocks import LineBlockEngine, splice
from workers.markers import template as marker

__all__ = ["TemplateEngine", "factor"]

MIN_LINES = 3
MIN_JSON_KEYS = 2  # leading keys the JSON lines of a run share at least
MAX_LINE = 600  # characters: a longer line is no row
MAX_TEXT = 4_000_000  # characters: a bigger output is left as it is
_DIGITS = re.compile(r"\d+")
# a timestamp, date or time as one word: its constant parts may go into the template
# a date, a time or both as one word (ISO 8601, a log's ``10:55:48,123``, nginx's
# ``[03/Dec/2026:16:44:53``); not an IP address or a version, which stay whole
_TIME = re.compile(
    r"(?:[a-z_]{1,12}=)?[\[(\"]?"
    r"(?:\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2})?(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?)?"
    r"|\d{2}/[A-Z][a-z]{2}/\d{4}:\d{2}:\d{2}:\d{2}"
    r"|\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d{1,9})?)"
    r"[\])\"]?,?"
)
_HUNK = re.compile(r"^@@ -\d", re.M)
_HUNK_START = "@@ -"  # (a substring search first: most texts hold none)
_JSON_BLOCKS = ("[[json-table:", "[[json-min:")


def _blocked(line: str) -> bool:
    """Whether ``line`` can be in no run (blank, too long, marker-like, a tab or a carriage
    return)."""
    stripped = line.strip()
    return (
        not stripped
        or len(line) > MAX_LINE
        or "[[" in line
        or "<<cx:" in line
        or marker.SEP in line
        or "\r" in line
    )


def _json_lines(lines: list[str]) -> set[int]:
    """Indexes of the lines inside a JSON block another engine wrote (its closing line too)."""
    inside: set[int] = set()
    start: int | None = None
    for i, line in enumerate(lines):
        if line.startswith(_JSON_BLOCKS):
            start = i
        elif start is not None and line.startswith(("[[/json-table", "[[/json-min")):
            inside.update(range(start, i + 1))
            start = None
    if start is not None:
        inside.update(range(start, len(lines)))
    return inside


def _stretches(lines: list[str]) -> list[tuple[int, int]]:
    """``[a, b)`` of every stretch of :data:`MIN_LINES` or more lines with the same number of
    spaces, at least one (lines of one layout have the same spaces: one count per line in C
    finds where runs may be)."""
    out: list[tuple[int, int]] = []
    a = 0
    for count, group in groupby(map(methodcaller("count", " "), lines)):
        size = len(list(group))
        if count and size >= MIN_LINES:
            out.append((a, a + size))
        a += size
    return out


def _runs(
    lines: list[str], stretches: list[tuple[int, int]], in_json: set[int]
) -> list[tuple[int, int]]:
    """``(start, end)`` of every run of :data:`MIN_LINES` or more lines of one template."""
    out: list[tuple[int, int]] = []
    for a, b in stretches:
        words: list[list[str] | None] = [
            None if i in in_json or _blocked(lines[i]) else lines[i].split(" ") for i in range(a, b)
        ]
        out.extend((a + s, a + e) for s, e in _runs_in(words))
    return out


def _runs_in(words: list[list[str] | None]) -> list[tuple[int, int]]:
    """Runs among lines split at their spaces, all into as many words (None: a line in no
    run; a word may be empty, between two spaces)."""
    out: list[tuple[int, int]] = []
    n = len(words)
    i = 0
    while i < n:
        first = words[i]
        if first is None:
            i += 1
            continue
        live = [p for p, word in enumerate(first) if word]  # words the same so far
        need = (len(live) + 1) // 2  # at least half of them stay the same on every line
        if need < 1:
            i += 1
            continue
        j = i + 1
        while j < n:
            other = words[j]
            if other is None:
                break
            kept = [p for p in live if other[p] == first[p]]
            if len(kept) < need:
                break
            live = kept
            j += 1
        if j - i < MIN_LINES:
            i += 1
        elif any(other != first for other in words[i + 1 : j]):
            out.append((i, j))
            i = j
        else:
            i = j  # the same line again and again (dedup's): a start inside it finds no more
    return out


def _json_cuts(lines: list[str], taken: set[int]) -> list[list[str] | None]:
    """Each line cut into its JSON members (:func:`members`), or None (no object, or taken)."""
    return [
        members(line) if line.startswith("{") and i not in taken and not _blocked(line) else None
        for i, line in enumerate(lines)
    ]


def _json_runs(parts: list[list[str] | None]) -> list[tuple[int, int, int]]:
    """``(start, end, keys)`` of every run of :data:`MIN_LINES` or more one-line JSON objects
    (a JSON log, cut by :func:`_json_cuts`) whose first ``keys`` keys, at least
    :data:`MIN_JSON_KEYS`, are written alike."""
    out: list[tuple[int, int, int]] = []
    n = len(parts)
    i = 0
    while i < n:
        first = parts[i]
        if first is None:
            i += 1
            continue
        keys = len(first) // 2
        j = i + 1
        while j < n:
            other = parts[j]
            if other is None:
                break
            shared = 0
            limit = min(keys, len(other) // 2)
            while shared < limit and other[2 * shared] == first[2 * shared]:
                shared += 1
            if shared < MIN_JSON_KEYS:
                break
            keys = shared
            j += 1
        if j - i >= MIN_LINES and keys >= MIN_JSON_KEYS:
            out.append((i, j, keys))
            i = j
        else:
            i += 1
    return out


def _time_slots(values: Sequence[str]) -> tuple[str, list[list[str]]] | None:
    """Template text and value columns of one word position holding timestamps of one
    shape: the digit groups that stay the same go into the template, the others (with
    the one or two punctuation characters between two of them) are values."""
    if _TIME.fullmatch(values[0]) is None:
        return None
    shapes = {_DIGITS.sub("0", v) for v in values}
    if len(shapes) != 1 or not all(_TIME.fullmatch(v) for v in values):
        return None
    splits = [_DIGITS.split(v) for v in values]
    numbers = [_DIGITS.findall(v) for v in values]
    between = splits[0]
    count = len(numbers[0])
    varies = [any(row[k] != numbers[0][k] for row in numbers) for k in range(count)]
    # items: text 0, number 0, text 1, number 1, ..., text count
    variable = [False] * (2 * count + 1)
    for k in range(count):
        variable[2 * k + 1] = varies[k]
    for k in range(1, count):
        if varies[k - 1] and varies[k] and len(between[k]) <= 2:
            variable[2 * k] = True  # ``01,123``: one value, not two
    text: list[str] = []
    columns: list[list[str]] = []
    item = 0
    while item <= 2 * count:
        if not variable[item]:
            k = item // 2
            text.append(marker.escape(between[k] if item % 2 == 0 else numbers[0][k]))
            item += 1
            continue
        end = item
        while end <= 2 * count and variable[end]:
            end += 1
        text.append(marker.SLOT)
        columns.append(
            [
                "".join(split[x // 2] if x % 2 == 0 else number[x // 2] for x in range(item, end))
                for split, number in zip(splits, numbers, strict=True)
            ]
        )
        item = end
    return "".join(text), columns


def _key_of(column: Sequence[str]) -> str:
    """The ``key=`` every value of a word place starts with (``balance=4901``,
    ``latency=29.974ms``), or "": what stays the same in front of the values."""
    first = column[0]
    at = first.find("=")
    if at <= 0 or at > 40 or not first[:at].replace("_", "").replace(".", "").isalnum():
        return ""
    key = first[: at + 1]
    return key if all(value.startswith(key) for value in column) else ""


def _json_columns(
    cut: Sequence[Sequence[str]], keys: int
) -> tuple[list[str], list[tuple[str, ...]]]:
    """The text before each of the first ``keys`` values (the same on every line) and the
    columns: each of those values, then the rest of each line (its other members); ``cut``:
    the lines' members."""
    before = [cut[0][2 * k] for k in range(keys)]
    columns = [tuple(parts[2 * k + 1] for parts in cut) for k in range(keys)]
    columns.append(tuple("".join(parts[2 * keys :]) for parts in cut))
    return before, columns


def _block(
    run: list[str], keys: int = 0, cut: Sequence[Sequence[str]] | None = None
) -> list[str] | None:
    """The block that stands for ``run``, or None when it has nothing to write once: lines
    with as many spaces (``keys`` 0), or JSON lines whose first ``keys`` keys are alike
    (``cut``: their members, else cut here)."""
    if keys:
        if cut is None:
            cut = [members(line) or [] for line in run]
        before, columns = _json_columns(cut, keys)
        joiner = ""
    else:
        before, columns = [], list(zip(*(line.split(" ") for line in run), strict=True))
        joiner = " "
    text: list[str] = []
    values: list[Sequence[str]] = []  # one column of values per slot, in order
    for place, column in enumerate(columns):
        if place < len(before):
            text.append(marker.escape(before[place]))
        word = column[0]
        if column.count(word) == len(column):
            text.append(marker.escape(word))
            continue
        timed = _time_slots(column)
        if timed is not None:
            text.append(timed[0])
            values += timed[1]
            continue
        key = "" if keys else _key_of(column)  # ``balance=4901``: the key stays in the template
        text.append(marker.escape(key) + marker.SLOT)
        skip = len(key)
        values.append([value[skip:] for value in column] if skip else column)
    template = joiner.join(text)
    if not values or len(template) > marker.MAX_TEMPLATE // 2:
        return None
    return marker.block(template, list(zip(*values, strict=True)))


def _all_runs(
    lines: list[str], in_json: set[int], cuts: list[list[str] | None] | None
) -> list[tuple[int, int, int]]:
    """Every run, in order: JSON log lines first (``keys`` > 0; ``cuts``: the lines cut by
    :func:`_json_cuts`, when the text has JSON lines), then lines of one layout."""
    runs = _json_runs(cuts) if cuts is not None else []
    taken = set(in_json)
    for start, end, _ in runs:
        taken.update(range(start, end))
    stretches = _stretches(lines)
    runs += [(a, b, 0) for a, b in _runs(lines, stretches, taken)]
    runs.sort()
    return runs


def factor(text: str, count: Callable[[str], int] | None = None) -> str:
    """``text`` with its runs of lines of one template written as template blocks.

    ``count``: a token counter.  With one, a block is written where it counts fewer tokens
    than its lines, and the text is returned unchanged unless it counts fewer tokens in all;
    without one, every run is written.
    """
    if len(text) > MAX_TEXT or "\n" not in text or (_HUNK_START in text and _HUNK.search(text)):
        return text
    lines = text.split("\n")
    if len(lines) < MIN_LINES:
        return text
    in_json = _json_lines(lines) if "[[json-" in text else set()
    cuts = _json_cuts(lines, in_json) if '{"' in text else None
    runs = _all_runs(lines, in_json, cuts)
    if not runs:
        return text
    blocks = (
        (start, end, _block(lines[start:end], keys, _cut_of(cuts, start, end) if keys else None))
        for start, end, keys in runs
    )
    return splice(text, lines, blocks, count)


def _cut_of(cuts: list[list[str] | None] | None, start: int, end: int) -> list[list[str]] | None:
    """The members of the run's lines, as :func:`_json_cuts` cut them (None: not cut)."""
    if cuts is None:
        return None
    run = cuts[start:end]
    return [parts for parts in run if parts is not None] if None not in run else None


class TemplateEngine(LineBlockEngine):
    name = "template"
    lossless = True
    marker: ClassVar[ModuleType] = marker
    factor = staticmethod(factor)
