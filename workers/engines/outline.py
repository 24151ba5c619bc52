"""``outline``: source files the model is not working on are shown as an outline.

A tool result that is a read of one file (:func:`workers.engines._shell.parse_access`:
``cat``, ``sed -n``, ``head``, a read tool...) of source code (Python, Go,
Rust, TypeScript/JavaScript, Java, C/C++: the path's suffix, else a shebang,
and the text must parse as that language, see :mod:`workers.engines._code`)
keeps its imports, top-level constants, class and function signatures,
decorators, doc comments and docstring first lines; the body of each function
or method the model is not working on becomes one line::

    def line_total(price: Decimal, quantity: int) -> Decimal:
        \"\"\"Price times quantity, minus the discount, rounded to cents.\"\"\"
        … body of line_total (lines 13-19) <<cx:0123456789abcdef>>

with the body stashed (``ctxpress expand --offload DIR`` gives the read back
byte for byte).  A body line the gate counts as critical (an error word, a
finding...) stays visible where it was: the body is stashed as the runs of
lines around it.

Kept whole, because the model is working on them:

- every symbol *named* in the latest user message or in the units from the
  read's own turn on (the user message that asked for it, and everything
  after it: diffs, tracebacks, greps, the assistant's words; other file reads
  do not count): a function or method by its name, a class (impl, namespace)
  by its name when not written as ``Class.member``, which names the member;
- the symbol holding a line that a traceback frame or a ``path:line``
  location of that file points at (``File "src/x.py", line 42``);
- the whole read when the latest user message names the file (its base
  name) but none of its symbols, and the newest read of a file that is
  edited (a write of the same path later, or anywhere when no later read of
  it follows).

Never touched: frozen units (and so texts whose input held marker-like text),
read-lifecycle's newer copies, texts holding a marker other than this record's
dedup back-references, failed or multi-part reads, and reads shorter than
:data:`MIN_LINES` lines.  A read dedup shortened is outlined like any other (its
back-references parse as blank lines; one inside a body goes into the body's
stash, and expand restores the stash first); in a read other reads' references
copy from, the rows they copy stay visible, so a reference leads to text.
"""

from __future__ import annotations

import posixpath
import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from workers.engines._code import Symbol, language_of, symbols
from workers.engines._shell import READ_FAILED, Read, parse_access
from workers.engines._text import (
    dup_spans,
    newer_copy_indexes,
    nonzero,
    restores,
    safe_note,
    stash_marker,
)
from workers.engines.base import Engine, EngineContext, EngineOutput
from workers.fidelity.facts import critical_lines
from workers.fidelity.lossy import check_lossy
from workers.markers import dup, has_marker
from workers.markers.stash import offload_marker
from workers.messages.model import Unit

__all__ = ["MIN_BODY_SAVING", "MIN_LINES", "OutlineEngine"]

MIN_LINES = 80  # shorter reads stay whole (see tests/unit/engines/test_outline.py)
MIN_BODY_SAVING = 12  # tokens a stashed run must save over its marker line
_WORD = re.compile(r"[A-Za-z_$][\w$]*")
_LINE_REF = re.compile(r"([\w.@+-]+\.[A-Za-z]\w{0,9})(?:\", line |:)(\d{1,7})\b")
_NUMBERED_LINE = re.compile(r"^([ \t]*)(\d{1,9})(→|\t)")
# A marker line costs about 25 tokens (a 16-hex key is ~10 of them): a run of
# 400 characters or more (~90 tokens of code) always saves MIN_BODY_SAVING.
_SURE_CHARS = 400
_SAMPLE_KEY = "0" * 16


@dataclass(slots=True)
class _Source:
    pos: int
    read: Read
    lang: str
    lines: list[str]  # the text's lines, as they are
    code: str  # what is parsed: the text without line-number prefixes
    numbers: list[int | None]  # the file line of each row, when known
    symbols: list[Symbol]
    copied: set[int] | None = None  # rows that other units' back-references copy: they stay


def _group(unit: Unit) -> tuple[Any, ...]:
    path = unit.path
    if len(path) >= 2 and path[-1] == "text" and isinstance(path[-2], int):
        return tuple(path[:-2])
    return tuple(path)


def _source(pos: int, unit: Unit, read: Read) -> _Source | None:
    text = unit.text
    lines = text.split("\n")
    if len(lines) < MIN_LINES:
        return None
    numbered = [_NUMBERED_LINE.match(line) for line in lines]
    hits = sum(1 for m in numbered if m is not None)
    numbers: list[int | None]
    if hits * 10 >= len([ln for ln in lines if ln.strip()]) * 9:  # a line-numbered read
        code_lines = [
            line[m.end() :] if m else line for line, m in zip(lines, numbered, strict=True)
        ]
        numbers = [int(m.group(2)) if m else None for m in numbered]
        code = "\n".join(code_lines)
    else:
        code = text
        numbers = [read.first + row if read.tail is None else None for row in range(len(lines))]
    if dup.LITERAL in code:  # a back-reference parses as a blank line (rows stay where they are)
        code = dup.DUP_MARKER.sub("", code)
    lang = language_of(read.path, code)
    if lang is None:
        return None
    found = symbols(code, lang)
    if not found or not any(s.body for s in found):
        return None
    return _Source(pos, read, lang, lines, code, numbers, found)


def _copied_rows(lines: list[str], spans: Sequence[tuple[int, int]]) -> set[int] | None:
    """Rows of ``lines`` that hold a character of ``spans`` (blocks other units' dedup
    back-references copy: they stay visible, so a reference leads to text, not to a marker);
    None when a span is not in the text (its text is not the one the reference was made from).

    A back-reference inside a body (the unit's own, or to another unit) may go into the
    body's stash: expand restores the stash first, then the reference."""
    rows: set[int] = set()
    if not spans:
        return rows
    starts: list[int] = []
    at = 0
    for line in lines:
        starts.append(at)
        at += len(line) + 1
    for begin, end in spans:
        if end > at:
            return None
        first = bisect_right(starts, begin) - 1
        last = bisect_right(starts, max(begin, end - 1)) - 1
        rows.update(range(first, last + 1))
    return rows


def _mentions(text: str, names: set[str]) -> tuple[set[str], set[str]]:
    """``(named, bare)``: names in ``text`` as words, and those not followed by ``.x``/``::x``."""
    named: set[str] = set()
    bare: set[str] = set()
    if not names:
        return named, bare
    for match in _WORD.finditer(text):
        word = match.group()
        if word not in names:
            continue
        named.add(word)
        rest = text[match.end() : match.end() + 3]
        if not (rest[:1] == "." and rest[1:2].isalpha()) and not rest.startswith("::"):
            bare.add(word)
    return named, bare


def _line_refs(text: str) -> set[tuple[str, int]]:
    if '", line ' not in text and ":" not in text:
        return set()
    return {(posixpath.basename(m.group(1)), int(m.group(2))) for m in _LINE_REF.finditer(text)}


class OutlineEngine(Engine):
    name = "outline"
    lossless = False

    def apply(self, units: Sequence[Unit], ctx: EngineContext) -> EngineOutput:
        texts = [u.text for u in units]
        groups: dict[tuple[Any, ...], int] = {}
        for unit in units:
            if unit.kind == "tool_result":
                key = _group(unit)
                groups[key] = groups.get(key, 0) + 1
        reads: dict[int, Read] = {}
        writes: dict[str, list[int]] = {}
        for pos, unit in enumerate(units):
            if unit.kind != "tool_result" or not unit.command:
                continue
            access = parse_access(unit.command, unit.tool_name, unit.text)
            if access is None:
                continue
            failed = unit.is_error or READ_FAILED.match(unit.text.lstrip()[:200]) is not None
            if access.read is not None and not failed:
                reads[pos] = access.read
            for path in (*access.writes, *access.edits):
                writes.setdefault(path, []).append(pos)
        sources: list[_Source] = []
        newer: set[int] | None = None
        spans: dict[str, list[tuple[int, int]]] = {}
        for pos, read in reads.items():
            unit = units[pos]
            if unit.frozen or groups[_group(unit)] > 1:
                continue
            # this record's dedup back-references are no obstacle (the unit's input held no
            # marker: the runner froze it then); any other marker: not touched
            unreferenced = unit.text
            if dup.LITERAL in unreferenced:
                unreferenced = dup.DUP_MARKER.sub("", unreferenced)
            if has_marker(unreferenced):
                continue
            if unit.text.count("\n") + 1 < MIN_LINES:
                continue
            if newer is None:
                newer = newer_copy_indexes(units)
                spans = dup_spans(units)
            if unit.index >= 0 and unit.index in newer:
                continue  # read-lifecycle's markers name it as the newer copy of a file
            if self._edited(pos, read.path, reads, writes):
                continue
            source = _source(pos, unit, read)
            if source is not None:
                source.copied = _copied_rows(source.lines, spans.get(unit.uid, ()))
                if source.copied is not None:
                    sources.append(source)
        if not sources:
            return EngineOutput(texts=texts)
        names = {s.name for source in sources for s in source.symbols}
        latest = ctx.latest_user_text
        latest_named, latest_bare = _mentions(latest, names)
        latest_refs = _line_refs(latest)
        # Per unit, lazily: the names it mentions and the lines it points at.
        seen: dict[int, tuple[set[str], set[str], set[tuple[str, int]]]] = {}
        stash: dict[str, str] = {}
        outlined = bodies = kept = 0
        for source in sources:
            named, bare, refs = set(latest_named), set(latest_bare), set(latest_refs)
            start = source.pos
            while start > 0 and not (units[start].role == "user" and units[start].kind == "text"):
                start -= 1
            for pos in range(start, len(units)):
                if pos == source.pos or pos in reads:
                    continue
                if pos not in seen:
                    text = units[pos].text
                    seen[pos] = (*_mentions(text, names), _line_refs(text))
                n, b, r = seen[pos]
                named |= n
                bare |= b
                refs |= r
            base = posixpath.basename(source.read.path)
            own = {s.name for s in source.symbols}
            if base in latest and not (latest_named & own):
                continue  # the user asks about this file as a whole
            lines_here = {line for name, line in refs if name == base}
            result = self._outline(source, units[source.pos], named, bare, lines_here, ctx)
            if result is None:
                continue
            new_text, new_stash, count, whole = result
            texts[source.pos] = new_text
            stash.update(new_stash)
            outlined += 1
            bodies += count
            kept += whole
        details = nonzero(reads_outlined=outlined, bodies_stashed=bodies, symbols_kept=kept)
        return EngineOutput(texts=texts, details=details, stash=stash)

    @staticmethod
    def _edited(pos: int, path: str, reads: dict[int, Read], writes: dict[str, list[int]]) -> bool:
        """Whether this read is the newest copy of a file that is being edited."""
        written = writes.get(path)
        if not written:
            return False
        later_reads = [p for p, r in reads.items() if p > pos and r.path == path]
        if any(w > pos and all(p > w for p in later_reads) for w in written):
            return True  # no other read between this one and a later write
        return not later_reads

    @staticmethod
    def _outline(
        source: _Source,
        unit: Unit,
        named: set[str],
        bare: set[str],
        ref_lines: set[int],
        ctx: EngineContext,
    ) -> tuple[str, dict[str, str], int, int] | None:
        text = unit.text
        lines = source.lines
        numbers = source.numbers
        critical = {line for _kind, line in critical_lines(text, unit.kind, unit.command)}
        copied = source.copied or set()
        whole_containers = [s for s in source.symbols if s.kind == "container" and s.name in bare]

        def pointed_at(sym: Symbol) -> bool:
            return any(
                (n := numbers[row]) is not None and n in ref_lines
                for row in range(sym.start, min(sym.end, len(numbers) - 1) + 1)
            )

        replaced: dict[int, tuple[int, str]] = {}  # first row -> (last row, marker line)
        stash: dict[str, str] = {}
        kept = 0
        for sym in source.symbols:
            if sym.kind != "function" or sym.body is None:
                continue
            if (
                sym.name in named
                or any(c.start <= sym.start and sym.end <= c.end for c in whole_containers)
                or (ref_lines and pointed_at(sym))
            ):
                kept += 1
                continue
            first, last = sym.body
            last = min(last, len(lines) - 1)
            run_start = first
            for row in range(first, last + 2):
                if row <= last and lines[row].strip()[:600] not in critical and row not in copied:
                    if row == run_start and not lines[row].strip():
                        run_start += 1  # a run starts on a line of the body's indentation
                    continue
                if row - run_start >= 2:
                    made = _stash_run(
                        lines, numbers, f"body of {sym.name}", run_start, row - 1, ctx
                    )
                    if made is not None:
                        marker_line, key, original = made
                        replaced[run_start] = (row - 1, marker_line)
                        stash[key] = original
                run_start = row + 1
        whole = [s for s in source.symbols if s.name in named or s in whole_containers]
        kept_rows = {row for sym in whole for row in range(sym.start, sym.end + 1)}
        documented = {sym.start for sym in whole}  # a doc comment right above stays too
        taken = {row for first, (last, _) in replaced.items() for row in range(first, last + 1)}
        for first, last, what in _prose_blocks(lines, source.lang):
            if last + 1 in documented:
                continue
            run_start = first + 1  # the block's first line stays: what it is about
            for row in range(first + 1, last + 2):
                if row <= last and (
                    row not in taken
                    and row not in kept_rows
                    and row not in copied
                    and lines[row].strip()[:600] not in critical
                ):
                    continue
                if row - run_start >= 2:
                    made = _stash_run(lines, numbers, what, run_start, row - 1, ctx)
                    if made is not None:
                        marker_line, key, original = made
                        replaced[run_start] = (row - 1, marker_line)
                        stash[key] = original
                run_start = row + 1
        if not replaced:
            return None
        out: list[str] = []
        row = 0
        while row < len(lines):
            hit = replaced.get(row)
            if hit is None:
                out.append(lines[row])
                row += 1
            else:
                out.append(hit[1])
                row = hit[0] + 1
        new_text = "\n".join(out)
        if ctx.tokens.count(new_text) >= ctx.tokens.count(text):
            return None
        if not restores(text, new_text, stash):
            return None
        if check_lossy(text, new_text, unit.kind, stash, (), unit.command):
            return None
        return new_text, stash, len(replaced), kept


MIN_PROSE_LINES = 6  # comment and docstring blocks shorter than this stay whole
_LINE_COMMENT = {
    "python": ("#",),
}
_C_COMMENT = ("//", "/*", "*", "*/")
_DOCSTRING_OPEN = re.compile(r"""^[rRuUbB]{0,2}(\"\"\"|\'\'\')""")


def _prose_blocks(lines: Sequence[str], lang: str) -> list[tuple[int, int, str]]:
    """``(first row, last row, what)`` of comment runs and of a Python module docstring of
    :data:`MIN_PROSE_LINES` lines or more: their first line says what they are about, the rest
    may go (a licence header, a design note, a function's long doc comment)."""
    blocks: list[tuple[int, int, str]] = []
    prefixes = _LINE_COMMENT.get(lang, _C_COMMENT)
    start = -1
    for row, line in enumerate([*lines, ""]):
        text = line.lstrip()
        comment = bool(text) and text.startswith(prefixes) and not text.startswith("#!")
        if comment and start < 0:
            start = row
        elif not comment and start >= 0:
            if row - start >= MIN_PROSE_LINES:
                blocks.append((start, row - 1, "rest of the comment"))
            start = -1
    if lang == "python":
        row = 0
        while row < len(lines) and (not lines[row].strip() or lines[row].startswith("#")):
            row += 1
        opened = _DOCSTRING_OPEN.match(lines[row]) if row < len(lines) else None
        if opened is not None:
            quote = opened.group(1)
            rest = lines[row][opened.end() :]
            end = row if quote in rest else None
            probe = row + 1
            while end is None and probe < len(lines):
                if quote in lines[probe]:
                    end = probe
                probe += 1
            if end is not None and end - row + 1 >= MIN_PROSE_LINES:
                blocks.append((row, end, "rest of the module docstring"))
    return blocks


def _stash_run(
    lines: list[str],
    numbers: list[int | None],
    what: str,
    first: int,
    last: int,
    ctx: EngineContext,
) -> tuple[str, str, str] | None:
    """``(marker line, key, stashed text)`` for rows ``first..last``, when worth it;
    ``what`` names them in the note (``body of price``, ``rest of the comment``)."""
    head = lines[first]
    indent = head[: len(head) - len(head.lstrip(" \t"))]
    original = "\n".join(lines[first : last + 1])[len(indent) :]
    a, b = numbers[first], numbers[last]
    where = f"lines {a}-{b}" if a is not None and b is not None else f"{last - first + 1} lines"
    note = f"{what} ({where})"
    if len(original) < _SURE_CHARS:  # longer runs always pay; shorter ones are counted
        cost = ctx.tokens.count(offload_marker(safe_note(note), _SAMPLE_KEY))
        if ctx.tokens.count(original) - cost < MIN_BODY_SAVING:
            return None
    marker, key = stash_marker(note, original)
    return indent + marker, key, original
