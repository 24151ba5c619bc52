"""Repeats of events a log shows above: the mixed runs ``logtemplate`` folds after its own runs.

A service log interleaves its events (``panic in handler``, then ``request ...
status 500``, a ``printer busy`` warning, a ``manifest accepted`` line, the next
panic...): runs of one template are one line long, so nothing folds, and a log of
six kinds of event reads as hundreds of lines.  The unit here is a log *record*: a log line
and the indented lines that continue it (PostgreSQL's multi-line statements).  A record
*repeats an event shown above* when a visible record above has its template
(:func:`~workers.engines._logs.mask`); an error record, when a visible one above also has its
identifying values (the same failure of the same thing, at most for another request, at
another time: an error naming another order or client is another fact, in sight) and the
gate's shape (:func:`~workers.fidelity.facts.line_shape`); a record without a time (a build
tool's ``[INFO] +- a:b:1.0``), when one above has its values too.  Consecutive repeats (at
least ``MIN_SEGMENT``; blank lines and earlier engines' markers that only count lines ride
along) fold into one marker stashed under its key::

    … 24 lines repeating events shown above (req_id 34, 39, 42 +21 more; path /quote;
    status 503; timestamps 14:12:53.12–14:12:55.31; dur_ms 0.04–51.1) <<cx:KEY>>

The note lists every identifying value of the folded records that no visible line shows
(at most ``MAX_DISTINCT`` per field, as logtemplate's runs list them: a segment that would
need more, or a longer note, is cut; a request's id is counted past ``MAX_LISTED``), then the
span of their times and of their measures as far as the note has room.  The stash gives the
lines back exactly.

What stays in sight: the first record of each template (of each error identity), the *last*
record of each error shape (the latest occurrence), lines the gate must see as written (not
of a shaped kind), lines the request names (``pinned``), non-log lines, and lines next to a
marker that points at them (``… 3 lines like the next``).  Pure and deterministic, one pass.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from workers.core.ansi import ANSI
from workers.core.offload import stash_key
from workers.core.tokens import TokenCounter
from workers.engines._logs import MIN_LOG_LINES, Field, is_log_line, mask, value_range
from workers.engines._text import gate_accepts
from workers.fidelity.facts import (
    REQUEST_KEY,
    SHAPED_KINDS,
    critical_lines,
    is_error_line,
    line_shape,
)
from workers.markers import has_marker
from workers.markers.stash import offload_marker

__all__ = ["RepeatsResult", "fold_repeats"]

MIN_CHARS = 400  # outputs shorter than this are left alone
MIN_SEGMENT = 3  # log lines a marker stands for, at least
MIN_LOG_RATIO = 0.5  # log lines among the output's non-blank lines, at least
MAX_DISTINCT = 20  # values of a field a note lists in full (logtemplate's runs list as many)
MAX_LISTED = 3  # values a note names of a field with more; the others are counted
NOTE_HEAD = 90  # characters of a note before its values, at most
RANGE_ROOM = 70  # characters of a note kept for the span of its times and its first measure
NOTE_MAX = 290  # the stash marker grammar allows 300 characters of note
NOTE_SHARE = 4  # a note takes at most this share of the characters it stands for ...
NOTE_MIN = 100  # ... or this many
MIN_SAVED_TOKENS = 8
CRITICAL_CAP = 600  # the gate compares stripped lines truncated to this length
MAX_RECORD_LINES = 400  # indented lines a log line's record holds (a stack trace, a statement)

# an earlier engine's marker whose note only counts lines: it rides in a segment
_COUNTING_MARKER = re.compile(
    r"… \d+ (?:more |similar |repeated )?(?:lines?|matches)(?: in \"[^\"\n]{0,80}\")?"
    r" omitted(?: \(shown above\)| \(\d+ repeated stack frames?\))? <<cx:[0-9a-f]{16}>>"
)
_OTHER_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_NOTE_BAD = str.maketrans({"\n": " ", "…": "~", "<": "‹", ">": "›"})


@dataclass(frozen=True, slots=True)
class RepeatsResult:
    text: str
    stash: dict[str, str]
    runs: int  # markers written (segments of repeats)
    lines_folded: int


@dataclass(slots=True)
class _Event:
    """One log record (a log line and the indented lines that continue it) as the fold reads
    it."""

    start: int  # the record's lines: lines[start:end]
    end: int
    template: str  # its lines' templates, one per line
    fields: list[Field]
    # the gate's shapes of its error lines (empty: no error line) and, when it has one, its
    # template and identifying values (a request's id aside: it names the request the line
    # was logged for, not what failed)
    shapes: tuple[str, ...] = ()
    identity: tuple[str, ...] | None = None


# an entry of the output: a record that may fold, or a line that stays (None) with whether
# it may ride inside a fold (a blank line, a marker that only counts lines)
_Entry = tuple[_Event | None, int, bool]


def fold_repeats(
    text: str,
    tokens: TokenCounter,
    command: str | None = None,
    pinned: frozenset[int] = frozenset(),
) -> RepeatsResult | None:
    """Fold the runs of repeated events of one tool output; None when nothing was worth it."""
    if len(text) < MIN_CHARS or _OTHER_BREAKS.search(text):
        return None
    lines = text.split("\n")
    entries = _entries(text, lines, command, pinned)
    if entries is None:
        return None
    out: list[str] = []
    stash: dict[str, str] = {}
    cursor = segments = folded = 0
    templates: set[str] = set()
    identities: set[tuple[str, ...]] = set()  # of the error and untimed records in sight
    shapes: set[str] = set()
    last = _last_of_shape(entries)
    segment: list[_Entry] = []  # what one marker would stand for
    listed = _Listed()  # the identifying values its note names

    def close() -> None:
        nonlocal cursor, segments, folded
        while segment and segment[-1][0] is None:
            segment.pop()  # blank lines and markers after the last record stay
        members = [event for event, _, _ in segment if event is not None]
        if len(members) >= MIN_SEGMENT:
            a, b = segment[0][1], members[-1].end
            stashed = "\n".join(lines[a:b])
            markers = sum(1 for event, i, _ in segment if event is None and lines[i].strip())
            room = min(NOTE_MAX, max(NOTE_MIN, len(stashed) // NOTE_SHARE))
            note = _note(members, markers, listed, room)
            key = stash_key(stashed)
            marker = None if note is None else offload_marker(note, key)
            if marker is not None and _worth(tokens, stashed, marker):
                out.extend(lines[cursor:a])
                out.append(marker)
                stash[key] = stashed
                cursor = b
                segments += 1
                folded += b - a
                members = []
        for event in members:  # they stay in sight
            listed.show(event)
        segment.clear()
        listed.clear()

    for entry in entries:
        event, index, rides = entry
        if event is None:
            if segment and rides:
                segment.append(entry)
            else:
                close()
            continue
        if event.identity is None:
            repeat = event.template in templates
        else:
            repeat = event.identity in identities and all(
                shape in shapes and last[shape] != index for shape in event.shapes
            )
        if repeat:
            if not listed.add(event):
                close()  # its values would not fit the note: a new segment starts with it
                listed.add(event)
            segment.append(entry)
            continue
        close()
        listed.show(event)
        templates.add(event.template)
        if event.identity is not None:
            identities.add(event.identity)
        shapes.update(event.shapes)
    close()
    if not segments:
        return None
    out.extend(lines[cursor:])
    new = "\n".join(out)
    if not gate_accepts(text, new, stash, command):
        return None
    return RepeatsResult(new, stash, segments, folded)


def _entries(
    text: str, lines: list[str], command: str | None, pinned: frozenset[int]
) -> list[_Entry] | None:
    """The output as records and lines that stay; None when it is not mostly a log."""
    plain = [ANSI.sub("", line) for line in lines] if "\x1b" in text else lines
    flags = [is_log_line(line) for line in plain]
    heads = sum(flags)
    if heads < MIN_LOG_LINES:
        return None
    kinds: dict[str, set[str]] = {}
    for kind, line in critical_lines(text, "tool_result", command):
        kinds.setdefault(line, set()).add(kind)
    # a line next to a marker that is not a mere count may be what the marker points at
    anchored: set[int] = set()
    if "<<cx:" in text:
        for i, line in enumerate(lines):
            if has_marker(line) and not _COUNTING_MARKER.fullmatch(line.strip()):
                anchored.update((i - 1, i + 1))
    entries: list[_Entry] = []
    in_records = 0
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        if not flags[i]:
            stripped = line.strip()
            entries.append(
                (None, i, not stripped or _COUNTING_MARKER.fullmatch(stripped) is not None)
            )
            i += 1
            continue
        end = i + 1
        while (
            end < n
            and end - i <= MAX_RECORD_LINES
            and plain[end][:1] in " \t"
            and plain[end].strip()
            and not flags[end]
        ):
            end += 1
        in_records += end - i
        entries.append((_event(plain, lines, i, end, kinds, pinned, anchored), i, False))
        i = end
    if in_records < MIN_LOG_RATIO * sum(1 for line in lines if line.strip()):
        return None
    return entries


def _event(
    plain: list[str],
    lines: list[str],
    start: int,
    end: int,
    kinds: dict[str, set[str]],
    pinned: frozenset[int],
    anchored: set[int],
) -> _Event | None:
    """The record ``lines[start:end]`` as an event, or None when it stays as it is."""
    templates: list[str] = []
    fields: list[Field] = []
    shapes: list[str] = []
    timed = False
    for k in range(start, end):
        if k in pinned or k in anchored or has_marker(lines[k]):
            return None
        line = plain[k]
        key = line.strip()[:CRITICAL_CAP]
        crit = kinds.get(key)
        if crit is not None and not crit <= SHAPED_KINDS:
            return None  # the gate wants this line as written
        masked = mask(line)
        templates.append(masked.template)
        fields.extend(masked.fields)
        if crit is not None or is_error_line(line) or (masked.status or 0) >= 500:
            shapes.append(line_shape(key))
        if k == start:
            timed = any(f.kind == "ts" for f in masked.fields)  # the log line's own time
    template = "\n".join(templates)
    if not shapes and timed:
        return _Event(start, end, template, fields)  # an event in time: its values are listed
    # an error names what failed; a line without a time (a build tool's ``[INFO] +- a:b:1.0``)
    # is what the tool was run to show: either repeats only the same values
    named = [f.value for f in fields if not f.measure and REQUEST_KEY.match(f.label) is None]
    return _Event(start, end, template, fields, tuple(shapes), (template, *named))


def _last_of_shape(entries: Sequence[_Entry]) -> dict[str, int]:
    """The index of the last record of each error shape (it stays: the latest occurrence)."""
    last: dict[str, int] = {}
    for event, index, _ in entries:
        if event is not None:
            for shape in event.shapes:
                last[shape] = index
    return last


class _Listed:
    """The identifying values of a segment's records, by field, as its note lists them: every
    value (at most ``MAX_DISTINCT`` of a field, as logtemplate's runs list them: a segment that
    would need more is cut), but a request's id: the first ``MAX_LISTED`` and a count of the
    others (one per line: it names the request, not what happened)."""

    def __init__(self) -> None:
        self.values: dict[str, dict[str, None]] = {}
        self.shown: set[tuple[str, str]] = set()  # (field, value) in sight: not listed again

    def show(self, event: _Event) -> None:
        self.shown.update((f.label, f.value) for f in event.fields if not f.measure)

    def clear(self) -> None:
        self.values.clear()

    def add(self, event: _Event) -> bool:
        """Add ``event``'s values; False (nothing added) when the note would not fit."""
        new: dict[str, list[str]] = {}
        for f in event.fields:
            if not f.measure and f.kind != "ts" and (f.label, f.value) not in self.shown:
                seen = self.values.get(f.label)
                if seen is None or f.value not in seen:
                    new.setdefault(f.label, []).append(f.value)
        if not new:
            return True
        if self.values and (
            any(
                len(self.values.get(label, {})) + len(values) > MAX_DISTINCT
                and REQUEST_KEY.match(label) is None
                for label, values in new.items()
            )
            or self._length(new) > NOTE_MAX - NOTE_HEAD - RANGE_ROOM
        ):
            return False
        for label, values in new.items():
            self.values.setdefault(label, {}).update(dict.fromkeys(values))
        return True

    def _length(self, new: dict[str, list[str]]) -> int:
        total = 0
        for label in self.values.keys() | new.keys():
            values = list(self.values.get(label, {}))
            values += [v for v in dict.fromkeys(new.get(label, [])) if v not in values]
            total += len(_listing(label, values)) + 2
        return total

    def parts(self) -> list[str]:
        return [_listing(label, list(values)) for label, values in self.values.items()]


def _listing(label: str, values: list[str]) -> str:
    if len(values) <= MAX_LISTED or (
        len(values) <= MAX_DISTINCT and REQUEST_KEY.match(label) is None
    ):
        return f"{label} {', '.join(values)}"
    return f"{label} {', '.join(values[:MAX_LISTED])} +{len(values) - MAX_LISTED} more"


def _note(members: Sequence[_Event], markers: int, listed: _Listed, room: int) -> str | None:
    """``N lines repeating events shown above (identifiers listed, measures as ranges)``;
    None when the values to list do not fit in ``room`` characters."""
    measured: dict[tuple[str, str], list[str]] = {}  # (label, kind): values
    stamps: list[str] = []
    for event in members:
        stamp = True  # a record's time is its first timestamp (a statement may quote dates)
        for f in event.fields:
            if f.kind == "ts":
                if stamp:
                    stamps.append(f.value)
                    stamp = False
            elif f.measure:
                measured.setdefault((f.label, f.kind), []).append(f.value)
    count = len(members)
    span = sum(event.end - event.start for event in members)
    head = f"{count} lines" if span == count else f"{count} entries ({span} lines)"
    if markers:
        head += f" and {markers} earlier marker{'' if markers == 1 else 's'}"
    head += " repeating events shown above"
    parts = listed.parts()
    if len(f"{head} ({'; '.join(parts)})") > room:
        return None
    ranges = [f"timestamps {value_range('ts', stamps)}"] if len(set(stamps)) > 1 else []
    ranges += [
        f"{label} {value_range(kind, values)}"
        for (label, kind), values in measured.items()
        if len(set(values)) > 1
    ]
    for part in ranges:  # the measures' spans, as many as fit (the times first)
        if len(f"{head} ({'; '.join([*parts, part])})") <= room:
            parts.append(part)
    note = f"{head} ({'; '.join(parts)})" if parts else head
    return note.translate(_NOTE_BAD)


def _worth(tokens: TokenCounter, stashed: str, marker: str) -> bool:
    if len(stashed) <= len(marker):
        return False
    return tokens.count(stashed) >= tokens.count(marker) + MIN_SAVED_TOKENS
