"""``dedup``: repeated text becomes a back-reference to its first copy.

Two kinds of repeats, both at least 80 characters and 3 lines, that already
appeared earlier (in an earlier message or earlier in the same message,
frozen messages included as sources):

* runs of lines, in a tool output: the longest run of consecutive lines
  (starting and ending on a non-blank line, blank lines inside allowed) that
  repeats a run of an earlier tool output, kept when its marker costs at most
  half its tokens.  This is what a re-run of a test or a build gives (agents
  re-run them after each edit): most lines as before, a timing, a count or a
  failing test between them, so no blank-line block is the same while long
  runs of lines are.  Within one output only when every engine of the chain
  is lossless (``lossless`` mode: a traceback printed again, the same block
  of warnings per target; ``src=self``): otherwise repeated lines of one
  program are its own content, for the lossy engines to read.  Never in a file read
  (a file read again is read-lifecycle's: the newest copy stays whole).  Runs
  inside a pretty-printed JSON document are taken too (an API response asked
  for again): on the public corpus that saves more in every mode than leaving
  the document whole for the JSON engines;
* blocks, the text between blank lines, outside those runs, exactly as
  before (kept when the marker costs fewer tokens than the block); in a file read
  (one file, or a ``cat`` of several), from that read itself or an earlier read of the
  same file only in ``lossless`` mode (a file's repeated blocks are its code, which
  outline reads as a whole, and a file read again stays whole for read-lifecycle, which
  supersedes the older copy); a header another file shares is referred to.

A repeat's lines that the fidelity gate needs visible (an error line, a failing
test, a location: :func:`~workers.fidelity.facts.critical_lines` of the unit
that repeats them) are no part of a back-reference when there are at most
:data:`MAX_KEPT_LINES` of them: the repeat is cut at them into the runs of
lines between, each replaced on its own when it is still long enough and
pays (a repeat of more, a lint run's 300 findings again, is one reference).
A re-run's failures stay readable in the re-run (the held-out sets had lost a
re-run's ``TS2322`` errors, its failing jest test and its alembic frames to
references to the run before).

Each is replaced, in non-frozen messages, by::

    [[dup:v1 src=m3 at=120 len=842 | same 14 lines as message 3: first line…]]

``src`` names the unit holding the first copy (``self`` for the same unit),
``at``/``len`` the character span of that copy in the unit's original text.
The text after ``|`` is a preview for the model; the decoder ignores it.
Lossless: :func:`decode` restores the block exactly, given the restored
texts of earlier units.  Must run first in every mode (its offsets refer to
the untouched input).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from itertools import accumulate

from workers.engines._prose import gate_keys
from workers.engines._shell import read_paths
from workers.engines._text import is_json_document
from workers.engines.base import EngineContext, EngineOutput, LosslessEngine
from workers.fidelity.facts import critical_lines
from workers.markers.dup import DUP_MARKER, decode, dup_marker
from workers.messages.model import Unit

__all__ = ["DUP_MARKER", "DedupEngine", "decode"]

MIN_CHARS = 80
MIN_LINES = 3
RUN_LINES = 3  # a run of repeated lines starts with this many (and has MIN_CHARS)
MAX_SOURCES = 8  # earlier places of the same RUN_LINES lines a run may start from
PREVIEW_CHARS = 48
MAX_KEPT_LINES = 16  # lines a repeat keeps as written; a repeat of more is one reference
_SEPARATOR = re.compile(r"\n[ \t]*\n")


def _blocks(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _SEPARATOR.finditer(text):
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(text)))
    return [
        (a, b) for a, b in spans if b - a >= MIN_CHARS and text.count("\n", a, b) >= MIN_LINES - 1
    ]


def _preview(block: str) -> str:
    """The block's first line as the marker's preview: cut before a ``]`` (the marker's end;
    written as ``)`` it read as other text: ``TASK [common : Check disk)``)."""
    first = next((line.strip() for line in block.splitlines() if line.strip()), "")
    first = first.replace("|", "/")
    cut = min(PREVIEW_CHARS, first.find("]") if "]" in first else PREVIEW_CHARS)
    return first[:cut] + ("…" if len(first) > cut else "")


def _where(unit: Unit) -> str:
    return "system prompt" if unit.index < 0 else f"message {unit.index}"


def _marker(units: Sequence[Unit], pos: int, src_pos: int, at: int, block: str) -> str:
    src = "self" if src_pos == pos else units[src_pos].uid
    lines = block.count("\n") + 1
    where = "above" if src == "self" else _where(units[src_pos])
    return dup_marker(src, at, len(block), f"same {lines} lines as {where}: {_preview(block)}")


def _overlaps(runs: list[tuple[int, int, str]], starts: list[int], a: int, b: int) -> bool:
    """Whether ``[a, b)`` overlaps one of ``runs`` (sorted spans; ``starts`` their starts)."""
    k = bisect_right(starts, b - 1) - 1  # the last run starting before b
    return k >= 0 and runs[k][1] > a


class _Visible:
    """One unit's lines that must stay visible (computed on first use)."""

    __slots__ = ("_flags", "lines", "starts", "unit")

    def __init__(self, unit: Unit) -> None:
        self.unit = unit
        self.lines = unit.text.split("\n")
        self.starts = list(accumulate([len(line) + 1 for line in self.lines[:-1]], initial=0))
        self._flags: list[bool] | None = None

    @property
    def flags(self) -> list[bool]:
        if self._flags is None:
            # every line the gate may want as written (its first copy): a superset of
            # :func:`~workers.engines._prose.critical_flags`, without its shape pass
            unit = self.unit
            wanted = {line for _, line in critical_lines(unit.text, unit.kind, unit.command)}
            # (the first copy in the unit: a traceback printed again within it may be a
            # reference to the copy above)
            flags = [False] * len(self.lines)
            if wanted:
                seen: set[str] = set()
                for i, line in enumerate(self.lines):
                    for key in gate_keys(line):
                        if key in wanted and key not in seen:
                            seen.add(key)
                            flags[i] = True
            self._flags = flags
        return self._flags

    def spans(self, a: int, b: int) -> list[tuple[int, int]]:
        """The spans of ``[a, b)`` (whole lines) between its lines that must stay visible,
        blank lines at both ends left out, each at least :data:`MIN_LINES` lines and
        :data:`MIN_CHARS` characters; ``[(a, b)]`` when it has none."""
        starts, lines = self.starts, self.lines
        first_line = bisect_right(starts, a) - 1
        last_line = bisect_right(starts, b - 1) - 1
        flags = self.flags
        kept = flags[first_line : last_line + 1].count(True)
        if not kept or kept > MAX_KEPT_LINES:
            # (a repeat of many such lines, a lint run's 300 findings again: the reference
            # to the copy that shows them costs a marker, the lines as written cost a page)
            return [(a, b)]
        spans: list[tuple[int, int]] = []
        segment = first_line
        for k in range(first_line, last_line + 2):
            if k <= last_line and not flags[k]:
                continue
            first, end = segment, k
            while first < end and not lines[first].strip():
                first += 1
            while end > first and not lines[end - 1].strip():
                end -= 1
            if end - first >= MIN_LINES:
                sa, sb = starts[first], starts[end - 1] + len(lines[end - 1])
                if sb - sa >= MIN_CHARS:
                    spans.append((sa, sb))
            segment = k + 1
        return spans


class _LineIndex:
    """Runs of :data:`RUN_LINES` consecutive lines seen so far -> where (unit, line).

    What blank-line blocks miss: a re-run of a test or a build repeats most of
    an earlier run's lines, with a timing, a count or one failing test in
    between, so its blocks differ while long runs of lines are the same; and an
    output repeated across blank lines is one run, not one reference per block.
    """

    __slots__ = ("lines", "seen")

    def __init__(self) -> None:
        # a run's first lines (a tuple: no joined copy per line) -> at most MAX_SOURCES places
        self.seen: dict[tuple[str, ...], list[tuple[int, int]]] = {}
        self.lines: dict[int, tuple[list[str], list[int]]] = {}

    def scan(
        self,
        pos: int,
        text: str,
        units: Sequence[Unit],
        ctx: EngineContext,
        replace: bool,
        within: bool = False,
        visible: _Visible | None = None,
    ) -> list[tuple[int, int, str]]:
        """Index the lines of unit ``pos``; when ``replace``, also the back-references
        ``(start, end, marker)`` for its runs of lines that repeat an earlier unit's lines.

        A run is at least :data:`MIN_LINES` lines and :data:`MIN_CHARS`
        characters, starts and ends on a non-blank line, and is kept when its
        marker counts at most half its tokens.  Of the earlier places its first
        lines were seen (the first :data:`MAX_SOURCES`), the longest run wins.
        """
        if visible is None:
            visible = _Visible(units[pos])
        lines, starts = visible.lines, visible.starts
        self.lines[pos] = (lines, starts)
        n = len(lines)
        k = RUN_LINES
        found: list[tuple[int, int, str]] = []
        seen = self.seen
        # keys[i]: lines i .. i+k-1 (the shorter slices end the zip)
        keys = list(zip(*(lines[d:] for d in range(k)), strict=False))
        indexed = 0  # this unit's keys indexed so far (``within``: as the scan passes them)
        i = 0
        while replace and i + k <= n:
            while within and indexed + k <= i:  # a source ends before the run that repeats it
                self._index(keys[indexed], pos, indexed)
                indexed += 1
            if not lines[i].strip():
                i += 1  # a run starts on a non-blank line (3 blank lines are no run)
                continue
            places = seen.get(keys[i])
            if places:
                # longest run first; of equal ones the earliest place
                end, place = max((self._end(i, p, lines, pos), (-p[0], -p[1])) for p in places)
                kept = self._run_markers(
                    pos, i, end, (-place[0], -place[1]), text, visible, units, ctx
                )
                if kept is not None:
                    found.extend(kept)
                    i = end
                    continue
            i += 1
        # this unit's lines, for the units after it (``_index``, inlined: once per line)
        setdefault = seen.setdefault
        for i in range(indexed, len(keys)):
            at = setdefault(keys[i], [])
            if len(at) < MAX_SOURCES:
                at.append((pos, i))
        return found

    def _index(self, key: tuple[str, ...], pos: int, i: int) -> None:
        at = self.seen.setdefault(key, [])
        if len(at) < MAX_SOURCES:
            at.append((pos, i))

    def _end(self, i: int, place: tuple[int, int], lines: list[str], pos: int) -> int:
        """End (line index, exclusive) of the run from line ``i`` repeating the lines at ``place``."""
        src_lines = self.lines[place[0]][0]
        offset = place[1] - i
        j = i + RUN_LINES
        stop = min(len(lines), len(src_lines) - offset)
        if place[0] == pos:  # a repeat within one output: its source ends where it starts
            stop = min(stop, i - offset)
        while j < stop and src_lines[j + offset] == lines[j]:
            j += 1
        return j

    def _run_markers(
        self,
        pos: int,
        i: int,
        j: int,
        place: tuple[int, int],
        text: str,
        visible: _Visible,
        units: Sequence[Unit],
        ctx: EngineContext,
    ) -> list[tuple[int, int, str]] | None:
        """The back-references for lines ``i`` to ``j`` repeating the lines at ``place``,
        blank lines at both ends left out, cut at the lines that must stay visible
        (:meth:`_Visible.spans`); None when the run is too short or, having no such line,
        saves too little (a run starting further on may pay)."""
        lines, starts = visible.lines, visible.starts
        src_pos, s = place
        end = j
        while end > i and not lines[end - 1].strip():
            end -= 1
        first = i
        while first < end and not lines[first].strip():
            first += 1
        if end - first < MIN_LINES:
            return None
        a, b = starts[first], starts[end - 1] + len(lines[end - 1])
        if b - a < MIN_CHARS:
            return None
        src_at = self.lines[src_pos][1][s + first - i]
        spans = visible.spans(a, b)
        kept: list[tuple[int, int, str]] = []
        for sa, sb in spans:
            block = text[sa:sb]
            marker = _marker(units, pos, src_pos, src_at + sa - a, block)
            if 2 * ctx.tokens.count(marker) <= ctx.tokens.count(block):
                kept.append((sa, sb, marker))
        if not kept and spans == [(a, b)]:
            return None
        return kept


class DedupEngine(LosslessEngine):
    name = "dedup"
    lossless = True

    def apply(self, units: Sequence[Unit], ctx: EngineContext) -> EngineOutput:
        first_seen: dict[str, tuple[int, int]] = {}  # block -> (unit position, offset)
        runs = _LineIndex()
        texts: list[str] = []
        replaced = lines_replaced = 0
        chars_saved = 0
        paths: list[frozenset[str]] = []  # per unit, the files it shows as they are
        for pos, unit in enumerate(units):
            text = unit.text
            paths.append(frozenset(read_paths(unit)) if unit.kind == "tool_result" else frozenset())
            if len(text) < MIN_CHARS:
                texts.append(text)
                continue
            # runs of repeated lines first (they span blank lines), then whole blocks
            found: list[tuple[int, int, str]] = []
            read = bool(paths[pos])
            visible = _Visible(unit)
            if unit.kind == "tool_result":  # tool outputs are the sources and the targets
                # (a read too in a lossless chain: a log read whole repeats its tracebacks,
                # and nothing lossy reads the file after)
                replace = not unit.frozen and (not read or ctx.lossless_chain)
                # within one output only when nothing lossy reads it after (a JSON
                # document is the JSON engines')
                within = ctx.lossless_chain and not is_json_document(text)
                found = runs.scan(pos, text, units, ctx, replace, within, visible)
            lines_replaced += len(found)
            run_starts = [a for a, _, _ in found]
            for a, b in _blocks(text):
                block = text[a:b]
                seen = first_seen.get(block)
                if seen is None:
                    first_seen[block] = (pos, a)
                    continue
                if unit.frozen or _overlaps(found, run_starts, a, b):
                    continue
                src_pos, at = seen
                if (
                    read
                    and not ctx.lossless_chain
                    and (src_pos == pos or paths[pos] & paths[src_pos])
                ):
                    # a file's own repeats are its code: outline reads the file whole (a
                    # body cut out of it no longer parses) and stashes what it does not show;
                    # and a file read again stays whole too: read-lifecycle supersedes the
                    # older copy, the model reads the newest in one piece (a function
                    # after an edit, not its unchanged blocks as references to the old one)
                    continue
                for sa, sb in visible.spans(a, b):
                    part = text[sa:sb]
                    marker = _marker(units, pos, src_pos, at + sa - a, part)
                    if 3 * len(marker) > len(part) and ctx.tokens.count(marker) >= ctx.tokens.count(
                        part
                    ):
                        continue
                    found.append((sa, sb, marker))
                    replaced += 1
            if not found:
                texts.append(text)
                continue
            found.sort()
            pieces: list[str] = []
            cursor = 0
            for a, b, marker in found:
                pieces.append(text[cursor:a])
                pieces.append(marker)
                cursor = b
                chars_saved += b - a - len(marker)
            pieces.append(text[cursor:])
            texts.append("".join(pieces))
        details: dict[str, int] = {}
        if replaced or lines_replaced:
            details = {"blocks_replaced": replaced, "chars_saved": chars_saved}
            if lines_replaced:
                details["line_runs_replaced"] = lines_replaced
        return EngineOutput(texts=texts, details=details)

    def decode(self, text: str, originals: Mapping[str, str]) -> str:
        return decode(text, originals)
