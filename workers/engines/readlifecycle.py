"""``read-lifecycle``: a file read that a later read or write supersedes becomes a marker.

A tool result is a *read* of one file when its command is a single read
command (after optional ``cd DIR &&`` prefixes): ``cat [-n...] FILE``,
``nl FILE``, ``less``/``more``/``bat FILE``, ``head [-n N|-N] FILE`` (lines
1-N, default 10), ``tail [-n N|-n +K] FILE``, ``sed -n 'A,Bp' FILE``, or
``cat FILE | head/tail/sed -n ...``; or when a read tool (``Read``,
``read_file``, ``view``...) names the file (the codec turns its path argument
into ``cat 'path'``; a line-numbered result such as ``  12→code`` tells the
range read).  ``grep "cat " .`` is not a read, nor is anything that pipes,
redirects or chains other commands.  A *write* is a tool call that changes a
file: ``>``/``>>``/``tee``/``sed -i``/``perl -i``/``cp``/``mv``/``rm``/
``truncate``/``dd of=`` in a shell command, or a write/edit tool naming the
file.

A read is *superseded* by the first later event on the same path that is

- a read of the same or a wider range whose text is intact (no dedup
  back-reference, no stash marker: the newer copy must really be visible) and
  that shares at least half of its lines with the older read unless a write
  came in between (a different working directory or an external rewrite would
  make them different files), or
- a write of the file that replaces, moves or removes it (``>``, ``tee``, ``cp``/``mv``
  onto it, ``rm``, a write tool, the editor's ``create``); an edit in place (``sed -i``,
  ``perl -i``, ``>>``, ``patch``, an edit tool, the editor's ``str_replace``/``insert``)
  leaves the newest read whole: the model is editing that text.

The superseded read becomes ``… superseded read of src/app.py (212 lines);
newer copy in message 14 <<cx:KEY>>`` (or ``… stale read of PATH (N lines);
the file was changed in message 14 <<cx:KEY>>``) with its text stashed.  When
the newer read is itself superseded, the marker names the last copy in the
chain, so a marker never points at a marker.  The newer copy is given to the
gate as an explicit back-reference (``_backrefs``): critical lines of the old
read must be visible there, or the read stays.  Never superseded: frozen
units, failed reads, tool results split into several parts, and reads that a
dedup back-reference of another unit points at.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from workers.engines._shell import (
    NUMBER_PREFIX,
    READ_FAILED,
    WRITE_FAILED,
    Access,
    Read,
    covers,
    parse_access,
)
from workers.engines._text import dup_sources, nonzero, restores, stash_marker
from workers.engines.base import Engine, EngineContext, EngineOutput
from workers.fidelity.lossy import check_lossy
from workers.markers import dup, stash
from workers.markers.superseded import stale_note, superseded_note
from workers.messages.model import Unit

__all__ = [
    "Access",
    "Read",
    "ReadLifecycleEngine",
    "covers",
    "parse_access",
]

MAX_FORWARD = 256  # later events looked at per read
MIN_OVERLAP = 0.5


# -- the engine ------------------------------------------------------------------


def _content_lines(text: str) -> set[str]:
    if "→" in text[:200] or "\t" in text[:200]:
        text = NUMBER_PREFIX.sub("", text)
    return {ln.strip() for ln in text.splitlines() if ln.strip()}


def _overlap(old: str, new: str) -> float:
    a = _content_lines(old)
    if not a:
        return 1.0
    return len(a & _content_lines(new)) / len(a)


def _covers_lines(new: Read, old: Read, old_text: str) -> bool:
    """:func:`covers`, plus: a numbered read of lines 1-N covers a whole file of at most N lines."""
    if covers(new, old):
        return True
    return (
        new.first == 1
        and new.last is not None
        and old.first == 1
        and old.last is None
        and old.tail is None
        and old_text.count("\n") + 1 <= new.last
    )


def _intact(text: str) -> bool:
    return dup.LITERAL not in text and stash.LITERAL not in text


def _group(unit: Unit) -> tuple[Any, ...]:
    path = unit.path
    if len(path) >= 2 and path[-1] == "text" and isinstance(path[-2], int):
        return tuple(path[:-2])
    return tuple(path)


@dataclass(slots=True)
class _Event:
    pos: int
    read: Read | None
    writes: tuple[str, ...]


class ReadLifecycleEngine(Engine):
    name = "read-lifecycle"
    lossless = False

    def apply(self, units: Sequence[Unit], ctx: EngineContext) -> EngineOutput:
        texts = [u.text for u in units]
        if len(units) < 2:
            return EngineOutput(texts=texts)
        groups: dict[tuple[Any, ...], int] = {}
        for unit in units:
            if unit.kind == "tool_result":
                key = _group(unit)
                groups[key] = groups.get(key, 0) + 1
        by_path: dict[str, list[_Event]] = {}
        read_paths: dict[int, str] = {}
        for pos, unit in enumerate(units):
            if unit.kind != "tool_result" or not unit.command or groups[_group(unit)] > 1:
                continue
            access = parse_access(unit.command, unit.tool_name, unit.text)
            if access is None:
                continue
            read = access.read
            if read is not None and (unit.is_error or READ_FAILED.match(unit.text.lstrip()[:200])):
                read = None
            writes = access.writes
            if writes and (unit.is_error or WRITE_FAILED.search(unit.text[:300])):
                writes = ()
            event = _Event(pos, read, writes)
            if read is not None:
                by_path.setdefault(read.path, []).append(event)
                read_paths[pos] = read.path
            for path in writes:
                if read is None or path != read.path:
                    by_path.setdefault(path, []).append(event)
        if not any(len(events) > 1 for events in by_path.values()):
            return EngineOutput(texts=texts)
        sources = dup_sources(units)
        # target[pos] = (position of the newer copy or the write, "read" | "write")
        target: dict[int, tuple[int, str]] = {}
        for path, events in by_path.items():
            for k in range(len(events) - 1, -1, -1):
                event = events[k]
                read = event.read
                if read is None or read.path != path:
                    continue
                for later in events[k + 1 : k + 1 + MAX_FORWARD]:
                    if path in later.writes:
                        target[event.pos] = (later.pos, "write")
                        break
                    newer = later.read
                    if newer is None or newer.path != path:
                        continue
                    new_text = units[later.pos].text
                    old_text = units[event.pos].text
                    if not _intact(new_text) or not _covers_lines(newer, read, old_text):
                        continue
                    if newer.assumed and len(new_text.splitlines()) * 2 < len(
                        units[event.pos].text.splitlines()
                    ):
                        continue
                    if _overlap(units[event.pos].text, new_text) < MIN_OVERLAP:
                        continue
                    target[event.pos] = target.get(later.pos, (later.pos, "read"))
                    break
        stash: dict[str, str] = {}
        backrefs: dict[int, list[int]] = {}
        superseded = stale = 0
        for pos in sorted(target):
            unit = units[pos]
            text = unit.text
            if unit.frozen or unit.uid in sources or dup.LITERAL in text or not text.strip():
                continue
            where, why = target[pos]
            path = read_paths[pos]
            nlines = text.count("\n") + (0 if text.endswith("\n") else 1)
            index = units[where].index
            if why == "read":
                note = superseded_note(path, nlines, index)
            else:
                note = stale_note(path, nlines, index)
            marker, stash_id = stash_marker(note, text)
            if ctx.tokens.count(marker) >= ctx.tokens.count(text):
                continue
            if not restores(text, marker, {stash_id: text}):
                continue
            if check_lossy(text, marker, unit.kind, {stash_id: text}, [texts[where]], unit.command):
                continue  # a critical line of the old read is not in the newer copy
            texts[pos] = marker
            stash[stash_id] = text
            backrefs[pos] = [where]
            if why == "read":
                superseded += 1
            else:
                stale += 1
        details = nonzero(reads_superseded=superseded, stale_reads=stale, _backrefs=backrefs)
        return EngineOutput(texts=texts, details=details, stash=stash)
