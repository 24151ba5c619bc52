"""Shared helpers of the lossy standard-mode engines.

- :func:`stash_marker`: the ``… note <<cx:KEY>>`` marker for a dropped span
  and its stash entry (the note is made safe: one line, bounded length);
- :func:`expanded`: a text with the markers of a stash expanded;
- :func:`restores`: whether :func:`workers.markers.stash.expand_offload` with the
  engine's own stash gives back the engine's input exactly (every engine
  checks this before returning a changed text, so a ``…`` earlier on a line
  can never make expand swallow text that was not dropped);
- :func:`nonzero`: an engine's details without the counters that stayed zero;
- :func:`dup_sources` / :func:`newer_copy_indexes`: units that other units
  point at (dedup back-references, read-lifecycle "newer copy" markers);
  engines that hide content leave those alone so that a pointer never leads
  to a marker.

Everything here is pure and linear in the size of its input.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from functools import lru_cache
from itertools import accumulate
from typing import Any

import orjson

from workers.core.offload import MemoryStore
from workers.engines._prose import language_pack
from workers.fidelity.facts import critical_lines
from workers.fidelity.lossy import hidden_critical
from workers.markers import dup, superseded
from workers.markers.stash import LITERAL as STASH_LITERAL
from workers.markers.stash import NOTE_CAP, expand_offload, safe_note, stash_marker
from workers.messages.model import Unit

__all__ = [
    "JSON_DOC_START",
    "JSON_TAIL_PREAMBLE",
    "NOTE_CAP",
    "PointedAt",
    "dup_sources",
    "expanded",
    "is_json_document",
    "json_tail",
    "named_lines",
    "newer_copy_indexes",
    "nonzero",
    "request_terms",
    "restores",
    "safe_note",
    "stash_marker",
    "term_limit",
    "term_spots",
]

_DUP_SRC = re.compile(r"\[\[dup:v1 src=([\w.]{1,40}) ")


def expanded(text: str, stash: Mapping[str, str]) -> str:
    """``text`` with its ``<<cx:KEY>>`` markers expanded from ``stash``.

    Markers whose key ``stash`` does not hold (earlier engines') stay as they are.
    """
    store = MemoryStore()
    store.items.update(stash)
    return expand_offload(text, store, [])


def restores(before: str, after: str, stash: Mapping[str, str]) -> bool:
    """True when expanding ``after`` with ``stash`` gives back ``before`` exactly.

    Markers of earlier engines (keys not in ``stash``) are left as they are by
    the expansion, so they compare equal to themselves in ``before``.
    """
    return expanded(after, stash) == before


def gate_accepts(before: str, after: str, stash: Mapping[str, str], command: str | None) -> bool:
    """The gate's own checks of a lossy engine's change to a tool output, so that it is never
    rejected: ``after`` expands to ``before`` and hides none of its critical lines."""
    if not restores(before, after, stash):
        return False
    critical = critical_lines(before, "tool_result", command)
    return next(iter(hidden_critical(critical, [after])), None) is None


def nonzero(**details: Any) -> dict[str, Any]:
    """The entries of ``details`` that are not zero or empty, in the order given."""
    return {name: value for name, value in details.items() if value}


def dup_sources(units: Sequence[Unit]) -> set[str]:
    """Uids of units that a dedup back-reference in another unit points at."""
    found: set[str] = set()
    for unit in units:
        if dup.LITERAL + "src=" in unit.text:
            found.update(m for m in _DUP_SRC.findall(unit.text) if m != "self")
    return found


def dup_spans(units: Sequence[Unit]) -> dict[str, list[tuple[int, int]]]:
    """Per uid, the ``(start, end)`` character spans of its text that dedup back-references
    in other units copy (references into their own text, ``src=self``, are left out)."""
    spans: dict[str, list[tuple[int, int]]] = {}
    for unit in units:
        if dup.LITERAL + "src=" not in unit.text:
            continue
        for match in dup.DUP_MARKER.finditer(unit.text):
            src, at, length = match.group(1), int(match.group(2)), int(match.group(3))
            if src != "self":
                spans.setdefault(src, []).append((at, at + length))
    return spans


def newer_copy_indexes(units: Sequence[Unit]) -> set[int]:
    """Message indexes that a read-lifecycle marker names as the newer copy of a file."""
    found: set[int] = set()
    for unit in units:
        text = unit.text
        if superseded.LITERAL in text and STASH_LITERAL in text:
            found.update(int(m) for m in superseded.NEWER_COPY_NOTE.findall(text))
    return found


class PointedAt:
    """The units other units point at: dedup sources and read-lifecycle newer copies.

    Engines that hide content leave these alone, so that a pointer never
    leads to a marker.  ``unit in pointed`` tests both kinds.
    """

    __slots__ = ("newer", "sources")

    def __init__(self, units: Sequence[Unit]) -> None:
        self.sources = dup_sources(units)
        self.newer = newer_copy_indexes(units)

    def __contains__(self, unit: Unit) -> bool:
        return unit.uid in self.sources or (unit.index >= 0 and unit.index in self.newer)


# where a JSON document may start on a line: an object with a key, or an array of objects,
# arrays or strings (``[INFO]``, ``[2026-12-06 ...]`` and ``{ [5 bytes data]`` do not), maybe
# after a short label (``DATA [{...``, ``response body: {"...``)
JSON_DOC_START = re.compile(r'(?:^|\n)[ \t]*(?:[^\n\[\]{}"]{0,40}?[ =:])?(?=\{\s*"|\[\s*[\[{"])')


def is_json_document(text: str) -> bool:
    """Whether the whole text (whitespace around it aside) is one JSON object or array."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[" or stripped[-1] not in "}]":
        return False
    try:
        orjson.loads(stripped)
    except orjson.JSONDecodeError:
        return False
    return True


JSON_TAIL_PREAMBLE = 30  # lines before a JSON document that ends an output (bandit's INFO)
_JSON_TAIL_OPEN = re.compile(r"^[{\[][ \t]*$", re.M)  # a pretty-printed document's first line


def json_tail(text: str) -> int | None:
    """Where a pretty-printed JSON document starts that ends ``text`` after a few lines of
    something else (``bandit -f json``'s ``[main] INFO ...`` lines, a tool's warnings above its
    ``--json`` report): at most :data:`JSON_TAIL_PREAMBLE` lines before it, and it holds most of
    the text.  None when there is no such document (or the whole text is one)."""
    match = _JSON_TAIL_OPEN.search(text)
    if match is None or match.start() == 0:
        return None
    start = match.start()
    if text.count("\n", 0, start) > JSON_TAIL_PREAMBLE or (len(text) - start) * 2 < len(text):
        return None
    return start if is_json_document(text[start:]) else None


# a frame of a crash report's stack: AddressSanitizer ``#3 0x7f.. in f file:line``, valgrind
# ``==12==    at 0x..: f (file:line)``, a Go frame's file line
# ``\t/usr/local/go/src/testing/testing.go:1792 +0x1d``, JVM/JavaScript ``at`` frames, rust's
# numbered frames and Python's ``File "x.py", line 3``
CRASH_FRAME = re.compile(
    r"^\s*#\d+ 0x[0-9a-f]+ in \S"
    r"|^==\d+==\s+(?:at|by) 0x[0-9A-Fa-f]+: "
    r"|^\s+/\S+\.go:\d+(?: \+0x[0-9a-f]+)?(?: fp=0x[0-9a-f]+ sp=0x[0-9a-f]+ pc=0x[0-9a-f]+)?$"
    r"|^\s+at \S|^\s+\d+: \S|^\s+\d+:\s+0x[0-9a-f]+ - \S|^\s*File \"[^\"]+\", line \d+"
)


def is_stack_frame(line: str) -> bool:
    """Whether ``line`` is a frame of a crash report's stack (:data:`CRASH_FRAME`): the same
    frame under another headline belongs to that stack, it is no repeat of the one above."""
    return CRASH_FRAME.match(line) is not None


# A word of the latest request that an output holds on this many lines or fewer names those
# lines (an order id's row, a package of pip list, a pid of ps): the filter keeps them
NAMED_ROWS = 2
# ... and a name with a dot, digit, dash or underscore (``http.server``, ``us-east``,
# ``ord_105523``) on up to this many lines: it names what it is about, an English word names
# anything
NAMED_ID_ROWS = 6
COMMON_SPOTS = 2000  # a term said more often than this names nothing, alone or with others
_ID_LIKE = re.compile(r"[\d._/-]")
_REQUEST_TERM = re.compile(r"[A-Za-z0-9_][\w.@/:-]{2,}")
# words of a request about any output: they name no line
_TOOL_WORDS = frozenset({"file", "files", "line", "lines", "output", "error", "errors", "test"})


def request_terms(text: str) -> frozenset[str]:
    """Lower-cased words of the latest request (3+ characters, no common words)."""
    if not text:
        return frozenset()
    found = {m.group(0).strip(".:/-").lower() for m in _REQUEST_TERM.finditer(text[:4000])}
    common = language_pack().stopwords | _TOOL_WORDS
    return frozenset(t for t in found if len(t) >= 3 and t not in common)


def term_limit(term: str) -> int:
    """How many lines (or items) a request term may name: :data:`NAMED_ID_ROWS` for a
    name like ``http.server`` or ``88123``, :data:`NAMED_ROWS` for a word."""
    return NAMED_ID_ROWS if _ID_LIKE.search(term) else NAMED_ROWS


@lru_cache(maxsize=1024)
def _term_end(term: str) -> re.Pattern[str]:
    # the literal first, so that ``re`` searches for it at C speed (a lookbehind in front
    # made every position a candidate: 3 to 20 times slower); the start is checked below
    return re.compile(rf"{re.escape(term)}(?!\w)")


def term_spots(
    lowered: str, term: str, cap: int, start: int = 0, end: int | None = None
) -> list[int]:
    """Where ``term`` stands in ``lowered[start:end]`` as a whole word (at most ``cap``
    places): not after a word character, not before one."""
    spots: list[int] = []
    if end is None:
        end = len(lowered)
    search = _term_end(term).search
    m = search(lowered, start, end)
    while m is not None:
        at = m.start()
        before = lowered[at - 1] if at > 0 else " "
        if before.isalnum() or before == "_":
            m = search(lowered, at + 1, end)  # a whole word may start inside this one
            continue
        spots.append(at)
        if len(spots) >= cap:
            break
        m = search(lowered, m.end(), end)
    return spots


def named_lines(text: str, terms: frozenset[str]) -> frozenset[int]:
    """Indexes of the lines of ``text`` holding a term that at most :data:`NAMED_ROWS` lines
    hold (:data:`NAMED_ID_ROWS` for a name like ``http.server``; as a whole word,
    case-insensitive), said at most 4 times that often: ``request`` names curl's
    ``X-Request-Id`` line although every item of the body below has a ``requester``.

    Terms too common to name a line alone name the lines that hold the most of them, when
    those are at least two terms, one of them a name, on at most :data:`NAMED_ID_ROWS`
    lines: "how many POST /v1/refunds returned 503" names the metric with
    ``method="POST",route="/v1/refunds",status="503"`` among dozens of lines that hold one
    or two of them."""
    if not terms:
        return frozenset()
    lowered = text.lower()
    if len(lowered) != len(text):
        return frozenset()
    starts: list[int] = []  # where each line starts, made on the first term found

    def rows_of(spots: list[int]) -> set[int]:
        if not starts:
            starts.extend([0, *accumulate(len(line) + 1 for line in lowered.split("\n"))])
        return {bisect_right(starts, at) - 1 for at in spots}

    found: set[int] = set()
    common: dict[str, set[int]] = {}  # term -> its rows, for a term too common alone
    said_often: list[str] = []  # terms said more than 4 times their limit: rows when needed
    for term in terms:
        # ``count`` finds it inside words too: an upper bound, at C speed
        if term not in lowered or lowered.count(term) > COMMON_SPOTS:
            continue
        limit = term_limit(term)
        spots = term_spots(lowered, term, 4 * limit + 1)
        if len(spots) > 4 * limit:
            said_often.append(term)
        elif spots:
            rows = rows_of(spots)
            if len(rows) <= limit:
                found.update(rows)
            else:
                common[term] = rows
    if len(common) + len(said_often) >= 2 and any(
        term_limit(t) == NAMED_ID_ROWS for t in (*common, *said_often)
    ):
        for term in said_often:
            spots = term_spots(lowered, term, COMMON_SPOTS)
            if len(spots) < COMMON_SPOTS:
                common[term] = rows_of(spots)
    if len(common) >= 2 and any(term_limit(t) == NAMED_ID_ROWS for t in common):
        held: dict[int, int] = {}  # row -> how many of the common terms it holds
        for rows in common.values():
            for row in rows:
                held[row] = held.get(row, 0) + 1
        most = max(held.values())
        best = [row for row, count in held.items() if count == most]
        if most >= 2 and len(best) <= NAMED_ID_ROWS:
            found.update(best)
    return frozenset(found)
