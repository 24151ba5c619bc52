"""``whitespace``: trailing blanks and long blank-line runs (a documented normalisation).

In no built-in mode's chain (:mod:`workers.core.catalog`: its normalisation is the one
change not stashed, and it saved next to nothing on held-out traffic); a combo
(:mod:`workers.pipeline.combos`) may still run it.

Changes, and nothing else:

- trailing spaces and tabs at the end of a line are removed;
- a run of three or more blank lines becomes two blank lines;
- a non-frozen system message identical to an earlier system message becomes
  ``… duplicate of the system message in message 0 (N chars) <<cx:KEY>>``
  (the copy is stashed, the first copy is named as back-reference).

Never touched (the text is kept byte for byte):

- fenced code blocks (```` ``` ```` and ``~~~`` fences, unclosed fences to
  the end of the text);
- diff output: from the first diff header or hunk header (``diff --git``,
  ``diff -r``, ``Index:``, ``--- a`` + ``+++ b``, ``@@ -1,2 +1,2 @@``, ANSI
  colour codes allowed) to the end of the text, so a context line that is a
  single space stays a single space;
- Markdown table rows (lines starting with ``|``) and tab-separated rows
  (a line with a tab before its trailing blanks keeps its trailing tabs);
- indented code: lines starting with four spaces or a tab, and blank-line
  runs between two such lines;
- in prose messages, Markdown hard breaks: two or more trailing spaces before
  a non-blank line become exactly two;
- file reads (``cat``, ``head``, ``sed -n``..., read tools): a file's
  whitespace is content an agent may have to match when it edits the file;
- texts a dedup back-reference points into, and texts holding one: its
  offsets must still hold after ``expand``.

A text is only rewritten when that saves tokens, and when it removes at
least 0.2 % of the text's characters (a handful of blanks in a long output
saves a token or two, less than a recount of the whole text costs).  Not reversible for the
whitespace it removes (the one documented exception
to ``expand``), but no non-whitespace character is ever changed: removing
every space, tab, CR and LF from input and output gives the same string
(duplicate system messages aside, which expand restores from the stash).
Linear time: regex scans plus work per changed line only.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence

from workers.core.ansi import SGR_RUN
from workers.engines._shell import is_file_read
from workers.engines._text import dup_sources, nonzero, restores, stash_marker
from workers.engines.base import Engine, EngineContext, EngineOutput
from workers.markers import dup
from workers.messages.model import Unit

__all__ = ["WhitespaceEngine", "normalise"]

MIN_REMOVED = 2  # characters removed below which the token count is not even checked
# ... and the share of the text (per mille): a few blanks in a long output save a
# token or two, not worth a full recount of the text and a gate check.
MIN_REMOVED_PER_MILLE = 2
_TRAILING = re.compile(r"(?<![ \t])[ \t]+(?=\r?(?:\n|\Z))")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})([^\n]*)$", re.M)
_ANSI = SGR_RUN
_DIFF_START = re.compile(
    rf"^{_ANSI}(?:diff (?:--git|-r|-u|-N|--cc|--combined) |Index: \S|@@@? -\d|"
    rf"--- \S[^\n]{{0,4000}}\n{_ANSI}\+\+\+ \S)",
    re.M,
)
_TRAILING_FAST = re.compile(r"(?<![ \t])[ \t]+(?=\r?$)", re.M)
# Runs of lines kept as they are: table rows (``|`` first), tab-separated rows
# (a tab before text) and indented code (four spaces or a tab, then text).
_KEEP_ROWS = re.compile(
    r"(?:^(?:[ ]*\|[^\n]*|[^\t\n]*\t[ \t]*[^ \t\n][^\n]*|(?: {4}|\t)[ \t]*[^ \t\n][^\n]*)"
    r"(?:\n|\Z))+",
    re.M,
)
_NEWLINE_RUN = re.compile(r"\n[\r\n]{3,}")
_LEADING_RUN = re.compile(r"[\r\n]{3,}")


def _fenced(text: str) -> list[tuple[int, int]]:
    """Character ranges of fenced code blocks (fence lines included)."""
    if "```" not in text and "~~~" not in text:
        return []
    ranges: list[tuple[int, int]] = []
    opened: tuple[int, str, int] | None = None
    for m in _FENCE.finditer(text):
        fence, info = m.group(1), m.group(2)
        if opened is None:
            if fence[0] == "`" and "`" in info:
                continue  # inline code, not an opening fence
            opened = (m.start(), fence[0], len(fence))
        elif fence[0] == opened[1] and len(fence) >= opened[2] and not info.strip():
            ranges.append((opened[0], m.end()))
            opened = None
    if opened is not None:
        ranges.append((opened[0], len(text)))
    return ranges


def _protected(text: str) -> tuple[list[int], list[int]]:
    """Sorted, disjoint protected ranges as (starts, ends)."""
    ranges = _fenced(text)
    if "@@" in text or "diff " in text or "Index: " in text or "+++ " in text:
        m = _DIFF_START.search(text)
        if m is not None:
            start = m.start()
            ranges = [r for r in ranges if r[1] <= start]
            ranges.append((start, len(text)))
    return [r[0] for r in ranges], [r[1] for r in ranges]


def _inside(pos: int, starts: list[int], ends: list[int]) -> bool:
    i = bisect_right(starts, pos) - 1
    return i >= 0 and pos < ends[i]


def _indented(line: str) -> bool:
    return line.startswith(("    ", "\t"))


def _next_line_blank(text: str, pos: int) -> bool:
    """Whether the line after the line ending at ``pos`` is blank (or absent)."""
    if text.startswith("\r\n", pos):
        pos += 2
    elif text.startswith("\n", pos):
        pos += 1
    else:
        return True
    end = text.find("\n", pos)
    return not text[pos : end if end >= 0 else len(text)].strip()


def _merge(
    starts: list[int], ends: list[int], extra: list[tuple[int, int]]
) -> tuple[list[int], list[int]]:
    if not extra:
        return starts, ends
    ranges = sorted([*zip(starts, ends, strict=True), *extra])
    merged: list[tuple[int, int]] = []
    for a, b in ranges:
        if merged and a <= merged[-1][1]:
            if b > merged[-1][1]:
                merged[-1] = (merged[-1][0], b)
        else:
            merged.append((a, b))
    return [r[0] for r in merged], [r[1] for r in merged]


def strip_line_ends(stretch: str) -> tuple[str, int]:
    """``_TRAILING_FAST.subn("", stretch)``, ten times faster without ``\\r``."""
    if "\r" in stretch:
        return _TRAILING_FAST.subn("", stretch)
    lines = stretch.split("\n")
    stripped = [line.rstrip(" \t") for line in lines]
    changed = sum(1 for old, new in zip(lines, stripped, strict=True) if len(old) != len(new))
    return ("\n".join(stripped), changed) if changed else (stretch, 0)


def _strip_trailing_fast(text: str, starts: list[int], ends: list[int]) -> tuple[str, int]:
    """Tool output: one C-speed substitution per unprotected stretch."""
    if "|" in text or "\t" in text or "\n    " in text or text.startswith("    "):
        rows = [m.span() for m in _KEEP_ROWS.finditer(text)]
        starts, ends = _merge(starts, ends, rows)
    pieces: list[str] = []
    cursor = 0
    total = 0
    for a, b in [*zip(starts, ends, strict=True), (len(text), len(text))]:
        if a > cursor:
            new, n = strip_line_ends(text[cursor:a])
            pieces.append(new)
            total += n
        pieces.append(text[a:b])
        cursor = b
    return ("".join(pieces), total) if total else (text, 0)


def _strip_trailing(text: str, prose: bool) -> tuple[str, int]:
    starts, ends = _protected(text)
    if not prose:
        return _strip_trailing_fast(text, starts, ends)
    pieces: list[str] = []
    cursor = 0
    lines = 0
    for m in _TRAILING.finditer(text):
        a, b = m.span()
        if starts and _inside(a, starts, ends):
            continue
        line_start = text.rfind("\n", 0, a) + 1
        content = text[line_start:a]
        blanks = m.group(0)
        if content:
            if "\t" in content and "\t" in blanks:
                continue  # tab-separated row: trailing tabs are empty fields
            if content.lstrip(" ").startswith("|"):
                continue  # Markdown table row
            if _indented(content):
                continue  # indented code
        keep = ""
        if (
            prose
            and content.strip()
            and len(blanks) >= 2
            and "\t" not in blanks
            and not _next_line_blank(text, b)
        ):
            keep = "  "  # Markdown hard break
            if blanks == keep:
                continue
        pieces.append(text[cursor:a])
        pieces.append(keep)
        cursor = b
        lines += 1
    if not pieces:
        return text, 0
    pieces.append(text[cursor:])
    return "".join(pieces), lines


def _line_before(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    return text[start:pos]


def _line_after(text: str, pos: int) -> str:
    end = text.find("\n", pos)
    return text[pos : end if end >= 0 else len(text)]


def _collapse_blank_runs(text: str, prose: bool) -> tuple[str, int]:
    if "\n\n\n" not in text and "\n\r\n\r\n" not in text:
        return text, 0
    starts, ends = _protected(text)
    pieces: list[str] = []
    cursor = 0
    runs = 0
    lead = _LEADING_RUN.match(text)
    if (
        lead is not None
        and lead.group(0).count("\n") >= 3
        and not (starts and _inside(0, starts, ends))
    ):
        nl = "\r\n" if "\r\n" in lead.group(0) else "\n"
        pieces.append(nl * 2)
        cursor = lead.end()
        runs += 1
    for m in _NEWLINE_RUN.finditer(text, cursor):
        a, b = m.span()
        if m.group(0).count("\n") < 4:
            continue
        if starts and (_inside(a, starts, ends) or _inside(b - 1, starts, ends)):
            continue
        if _indented(_line_before(text, a)) and _indented(_line_after(text, b)):
            continue  # blank lines inside indented code
        nl = "\r\n" if "\r\n" in m.group(0) else "\n"
        pieces.append(text[cursor:a])
        pieces.append("\n" + nl * 2)
        cursor = b
        runs += 1
    if not runs:
        return text, 0
    pieces.append(text[cursor:])
    return "".join(pieces), runs


def normalise(text: str, prose: bool = False) -> tuple[str, int, int]:
    """``(new_text, lines_stripped, blank_runs_collapsed)`` for one text.

    ``prose`` turns on the Markdown rules (indented code, hard breaks).
    """
    if not (
        " \n" in text
        or "\t\n" in text
        or " \r\n" in text
        or "\t\r\n" in text
        or text.endswith((" ", "\t", " \r", "\t\r"))
    ):
        stripped, lines = text, 0
    else:
        stripped, lines = _strip_trailing(text, prose)
    collapsed, runs = _collapse_blank_runs(stripped, prose)
    return collapsed, lines, runs


def _is_file_read(unit: Unit) -> bool:
    return unit.kind == "tool_result" and is_file_read(unit)


def _restored_system(
    units: Sequence[Unit], pos: int, firsts: dict[str, int], current: dict[str, str]
) -> int | None:
    """Position of an earlier system unit this system unit duplicates, if any."""
    text = units[pos].text
    hit = firsts.get(text)
    if hit is not None:
        return hit
    if dup.LITERAL in text:
        try:
            decoded = dup.decode(text, current)
        except ValueError:
            return None
        return firsts.get(decoded)
    return None


class WhitespaceEngine(Engine):
    name = "whitespace"
    lossless = False
    whitespace_edits = True

    def apply(self, units: Sequence[Unit], ctx: EngineContext) -> EngineOutput:
        texts: list[str] = []
        stash: dict[str, str] = {}
        backrefs: dict[int, list[int]] = {}
        first_system: dict[str, int] = {}
        earlier: dict[str, str] = {}
        lines_total = runs_total = dup_systems = 0
        sources = dup_sources(units)
        for pos, unit in enumerate(units):
            text = unit.text
            earlier[unit.uid] = text
            if unit.role == "system" and unit.kind == "text":
                if not unit.frozen and text.strip():
                    src = _restored_system(units, pos, first_system, earlier)
                    if src is not None:
                        where = units[src].index
                        place = "the system prompt" if where < 0 else f"message {where}"
                        marker, key = stash_marker(
                            f"duplicate of the system message in {place} ({len(text)} chars)",
                            text,
                        )
                        if ctx.tokens.count(marker) < ctx.tokens.count(text) and restores(
                            text, marker, {key: text}
                        ):
                            texts.append(marker)
                            stash[key] = text
                            backrefs[pos] = [src]
                            dup_systems += 1
                            continue
                first_system.setdefault(text, pos)
            if (
                unit.frozen
                or not text
                or unit.uid in sources
                or dup.LITERAL in text
                or _is_file_read(unit)
            ):
                # dedup offsets point into these texts: whitespace must stay as it was
                texts.append(text)
                continue
            new, lines, runs = normalise(text, prose=unit.kind == "text")
            removed = len(text) - len(new)
            if new != text and (
                removed < MIN_REMOVED
                or removed * 1000 < len(text) * MIN_REMOVED_PER_MILLE
                or ctx.tokens.count(new) >= ctx.tokens.count(text)
            ):
                # cl100k folds most trailing blanks into the newline token: a change
                # that saves nothing is not worth the gate's time
                new = text
            texts.append(new)
            if new is not text:
                lines_total += lines
                runs_total += runs
        details = nonzero(
            lines_stripped=lines_total,
            blank_runs_collapsed=runs_total,
            duplicate_system_messages=dup_systems,
            _backrefs=backrefs,
        )
        return EngineOutput(texts=texts, details=details, stash=stash)
