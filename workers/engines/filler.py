"""``filler``: remove filler and hedging from prose, with the rules kept as data.

Scope: user and assistant prose units (``kind == "text"``) that are not
frozen and are not the latest user message (the request being answered is
left exactly as the user wrote it).  Rules come from a language pack
(``workers/engines/lang/en.json``): whole fluff sentences ("I hope this
helps!"), openers ("Sure! ", "Great, "), sentence-start phrases
("Basically, ", "As you can see, ", "I think that "), phrases removable
anywhere ("basically", "actually") and wordy phrases with a shorter
replacement ("in order to" -> "to").  Phrases are literal text, never
regexes, so a pack cannot make the engine slow.

What is never touched:

- a sentence with a polarity word outside the phrase being removed: every
  negation, modal, hedge and conditional of the pack and of the built-in
  floor (not, no, never, must, should, may, might, can, could, would,
  probably, unless, except, if, only, always, ...): removing "probably"
  changes a claim;
- a line the fidelity gate counts as critical (constraint, negation, error
  lines): it must stay visible verbatim;
- code (fenced blocks, indented lines, inline code), URLs, paths,
  identifiers, versions and numbers: an edit never overlaps them;
- table rows, block quotes, headings, lines carrying markers of other engines.

Lines are never joined: an edit stays inside its line; a line left empty
by the removal of a whole fluff sentence is removed.

Recoverability.  Every removal is stashed, so aggressive mode stays exactly
reversible: a changed line is written as ``… <edited line> <<cx:KEY>>`` with
the original line stashed, and only when that is still shorter in tokens
(an offload marker costs about 17 tokens, so short lines with a little
fluff stay as they are); ``expand`` then restores the line exactly.
``FillerEngine(recoverable=False)`` (no mode uses it) removes the fluff
without stashing: ``expand`` then gives back the text without it.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence

from workers.core.tokens import TokenCounter
from workers.engines._prose import (
    LanguagePack,
    fence_mask,
    gate_keys,
    has_marker,
    inline_spans,
    language_pack,
    layout,
    make_marker,
    normalise_sentence,
    overlaps,
    sentence_starts,
)
from workers.engines.base import Engine, EngineContext, EngineOutput
from workers.fidelity.facts import critical_lines
from workers.messages.model import Unit

__all__ = ["FillerEngine", "FillerStats", "filler_line", "filler_text"]

_PREFIX = re.compile(r"[ \t]*(?:[-*+][ \t]+|\d{1,3}[.)][ \t]+)?")
_WORD = re.compile(r"[\w'’]+")
_SKIP_LINE_START = ("|", ">", "#", "<", "{", "[", "$ ")


class FillerStats:
    __slots__ = ("lines_removed", "phrases_removed", "sentences_removed")

    def __init__(self) -> None:
        self.phrases_removed = 0
        self.sentences_removed = 0
        self.lines_removed = 0

    def add(self, other: FillerStats) -> None:
        self.phrases_removed += other.phrases_removed
        self.sentences_removed += other.sentences_removed
        self.lines_removed += other.lines_removed


Edit = tuple[int, int, str]


def _start_edits(body: str, p: int, pack: LanguagePack) -> tuple[list[Edit], int]:
    """Openers and sentence-start phrases at ``p`` (repeated: "Sure! So basically, ...")."""
    edits: list[Edit] = []
    for _ in range(4):
        m = pack.openers.match(body, p) or pack.sentence_start.match(body, p)
        if m is None or m.end() == m.start():
            break
        end = m.end()
        while end < len(body) and body[end] in " \t":
            end += 1
        edits.append((m.start(), end, ""))
        p = end
    return edits, p


def _case(original: str, replacement: str) -> str:
    if original[:1].isupper() and replacement:
        return replacement[0].upper() + replacement[1:]
    return replacement


def _apply(body: str, edits: Sequence[Edit], start: int) -> str:
    """Apply non-overlapping sorted edits, fixing the spaces and commas around removals."""
    out: list[str] = []
    cursor = 0
    for s, e, repl in edits:
        if s < cursor:
            continue
        if not repl and s > start:
            after = e
            if after < len(body) and body[after] == ",":
                after += 1
            back = s
            while back > cursor and body[back - 1] in " \t":
                back -= 1
            if back > cursor and body[back - 1] == "," and after > e:
                s, e = back - 1, after  # "x, basically, y" -> "x y"
            elif e < len(body) and body[e] in " \t":
                while e < len(body) and body[e] in " \t":
                    e += 1  # "is basically done" -> "is done"
            elif back < s:
                s = back  # "done basically." -> "done."
        out.append(body[cursor:s])
        out.append(repl)
        cursor = e
    out.append(body[cursor:])
    return "".join(out)


def _sentence(
    sent: str, spans: Sequence[tuple[int, int]], pack: LanguagePack, first: bool, stats: FillerStats
) -> str:
    body = sent.rstrip()
    trail = sent[len(body) :]
    if not body:
        return sent
    prefix = _PREFIX.match(body)
    p = prefix.end() if (prefix is not None and first) else len(body) - len(body.lstrip())
    if normalise_sentence(body[p:]) in pack.whole_sentences and not overlaps(p, len(body), spans):
        stats.sentences_removed += 1
        return ""
    edits, content_start = _start_edits(body, p, pack)
    for m in pack.anywhere.finditer(body, content_start):
        edits.append((m.start(), m.end(), ""))
    for m in pack.replacement_regex.finditer(body, p):
        key = re.sub(r"[ \t]+", " ", m.group(0).lower().replace("’", "'"))
        repl = pack.replacements.get(key)
        if repl is not None:
            edits.append((m.start(), m.end(), _case(m.group(0), repl)))
    if not edits:
        return sent
    edits.sort()
    kept: list[Edit] = []
    end = -1
    for s, e, repl in edits:
        if s < end or (spans and overlaps(s, e, spans)):
            continue
        kept.append((s, e, repl))
        end = e
    if not kept:
        return sent
    # A polarity word outside the removed phrases: the sentence is left alone.
    removals = [(s, e) for s, e, repl in kept if not repl]
    for a, b in pack.polarity_spans(body):
        k = bisect_right(removals, (a, len(body) + 1)) - 1
        if k < 0 or not (removals[k][0] <= a and b <= removals[k][1]):
            return sent
    new_body = _apply(body, kept, p)
    rest = new_body[p:]
    if rest.strip() and len(_WORD.findall(rest)) < 2:
        return sent  # "I think so." must not become "so."
    stats.phrases_removed += sum(1 for _, _, r in kept if not r)
    if not rest.strip():
        stats.sentences_removed += 1
        return ""
    return new_body + trail


def filler_line(line: str, pack: LanguagePack, stats: FillerStats | None = None) -> str | None:
    """The line without its filler; ``None`` when nothing is left of it."""
    stats = stats or FillerStats()
    spans = inline_spans(line)
    starts = [*sentence_starts(line, pack, spans), len(line)]
    count = len(starts) - 1
    buckets: list[list[tuple[int, int]]] = [[] for _ in range(count)]
    for s, e in spans:
        k = max(0, bisect_right(starts, s) - 1)
        while k < count and starts[k] < e:
            buckets[k].append((s - starts[k], e - starts[k]))
            k += 1
    pieces: list[str] = []
    for k in range(count):
        a, b = starts[k], starts[k + 1]
        pieces.append(_sentence(line[a:b], buckets[k], pack, k == 0, stats))
    new = "".join(pieces)
    if new == line:
        return line
    if line[-1:] not in (" ", "\t"):
        new = new.rstrip()
    if not new.strip():
        return None
    return new


def _skip(line: str) -> bool:
    stripped = line.lstrip()
    return (
        not stripped
        or line.startswith(("    ", "\t"))
        or stripped.startswith(_SKIP_LINE_START)
        or has_marker(line)
    )


def filler_text(
    text: str,
    pack: LanguagePack,
    stats: FillerStats | None = None,
    *,
    recoverable: bool = False,
    tokens: TokenCounter | None = None,
    stash: dict[str, str] | None = None,
) -> str:
    """``text`` with filler removed line by line (see the module docstring)."""
    total = FillerStats()  # counts of the edits that are kept
    lines = text.split("\n")
    owner, _ = fence_mask(text, lines)
    critical = {line for _, line in critical_lines(text, "text")}
    out: list[str] = []
    changed = False
    for i, line in enumerate(lines):
        if owner[i] >= 0 or _skip(line) or any(k in critical for k in gate_keys(line)):
            out.append(line)
            continue
        line_stats = FillerStats()
        new = filler_line(line, pack, line_stats)
        if new == line:
            out.append(line)
            continue
        if recoverable:
            assert tokens is not None and stash is not None
            indent = line[: len(line) - len(line.lstrip())]
            original = line[len(indent) :]
            note = "" if new is None else new[len(new) - len(new.lstrip()) :]
            if len(note) > 300:
                out.append(line)
                continue
            marker, key = make_marker(note, original)
            candidate = indent + marker
            if tokens.count(candidate) >= tokens.count(line):
                out.append(line)
                continue
            stash[key] = original
            out.append(candidate)
            changed = True
            total.add(line_stats)
            continue
        changed = True
        total.add(line_stats)
        if new is None:
            total.lines_removed += 1
            continue
        out.append(new)
    if not changed:
        return text
    new_text = "\n".join(out)
    if not new_text.strip():
        return text  # never empty a message
    if stats is not None:
        stats.add(total)
    return new_text


class FillerEngine(Engine):
    name = "filler"
    lossless = False

    def __init__(self, language: str = "en", recoverable: bool = True) -> None:
        self.language = language
        self.recoverable = recoverable

    def apply(self, units: Sequence[Unit], ctx: EngineContext) -> EngineOutput:
        pack = language_pack(self.language)
        recoverable = self.recoverable
        positions = layout(units)
        stats = FillerStats()
        stash: dict[str, str] = {}
        texts: list[str] = []
        changed = 0
        for unit, pos in zip(units, positions, strict=True):
            if (
                unit.frozen
                or unit.kind != "text"
                or unit.role not in ("user", "assistant")
                or pos.latest_user
                or not unit.text.strip()
            ):
                texts.append(unit.text)
                continue
            new = filler_text(
                unit.text, pack, stats, recoverable=recoverable, tokens=ctx.tokens, stash=stash
            )
            changed += new != unit.text
            texts.append(new)
        details: dict[str, object] = {}
        if changed:
            details = {
                "units_changed": changed,
                "phrases_removed": stats.phrases_removed,
                "sentences_removed": stats.sentences_removed,
                "lines_removed": stats.lines_removed,
                "recoverable": recoverable,
            }
        return EngineOutput(texts=texts, details=details, stash=stash)
