"""Shared helpers of the aggressive-mode engines (filler, relevance, aging, budget).

Everything here works one line at a time and never joins lines: a text is
``text.split("\\n")`` and is rebuilt with ``"\\n".join``, so a run of whole
lines replaced by one marker line expands back exactly.

- :func:`language_pack`: the rules kept as data (``lang/en.json``): filler
  phrases, the polarity words (negations, modals, hedges, conditionals) that
  make a sentence untouchable, abbreviations, decision words, stopwords;
- :func:`layout`: where each unit sits in the conversation (user-turn age,
  agent-step age, latest user message);
- :func:`critical_flags`: which lines the fidelity gate needs visible (the
  same :func:`workers.fidelity.facts.critical_lines` the gate uses), with the
  polarity lines of prose added;
- :func:`fence_mask`: fenced code blocks, which are kept or stashed whole (the
  gate protects a fenced block as one span);
- :func:`stash_runs`: every maximal run of dropped lines becomes one marker
  line ``… N lines omitted <<cx:KEY>>`` when that saves tokens;
- :func:`sentence_starts` and :func:`inline_spans`: sentence splitting that
  never splits inside code, URLs, paths, versions, identifiers or numbers.

Every function is linear in its input (regexes with bounded repetition, one
pass per line).
"""

from __future__ import annotations

import json
import math
import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from workers.core.offload import stash_key
from workers.core.tokens import TokenCounter

# The gate's own span patterns: a sentence boundary is never placed inside a
# span the gate protects, so a span is always kept or stashed whole.
from workers.fidelity.facts import (
    _ANSI,
    _ERROR_LINE,
    _SPAN_PATTERNS,
    SHAPED_KINDS,
    critical_lines,
    finding_sections,
    line_shape,
    repeat_key,
)
from workers.markers import has_marker
from workers.markers.stash import LITERAL as STASH_LITERAL
from workers.markers.stash import offload_marker, short_note
from workers.messages.model import Unit

__all__ = [
    "CRITICAL_CAP",
    "LanguagePack",
    "Position",
    "RunResult",
    "critical_flags",
    "dropped_runs",
    "fence_mask",
    "flag_critical_before",
    "has_marker",
    "has_reference",
    "inline_spans",
    "language_pack",
    "layout",
    "sentence_starts",
    "stash_runs",
    "term_weights",
    "terms",
]

LANG_DIR = Path(__file__).resolve().parent / "lang"
CRITICAL_CAP = 600  # the gate compares stripped lines truncated to this length
MIN_SAVING = 6  # a run is stashed only when it saves at least this many tokens
_LONG_RUN_CHARS = 400  # runs this long save far more than a marker: not counted

# Characters str.splitlines() breaks on besides "\n" (the gate splits that way).
_OTHER_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
# Back-references to a copy that stays visible elsewhere: the facts of the
# message are readable through them, so they are never stashed.
_BACKREF = re.compile(r"\[\[(?:dup|read):")

# The floor of the polarity set, whatever a language pack says: the gate's
# constraint and negation words plus the modals and hedges a claim hangs on.
_CORE_POLARITY = re.compile(
    r"(?<![\w'’-])(?:not|no|never|none|nothing|nobody|nowhere|neither|nor|without|unless|except|"
    r"must|should|shall|may|might|could|would|can|cannot|will|ought|probably|possibly|perhaps|"
    r"maybe|likely|unlikely|always|only|required|requires|require|forbidden|prohibited|"
    r"important|security|do not|don't)(?![\w'’-])|n['’]t(?![\w'’-])",
    re.I,
)

# Spans in a line that a sentence boundary or a filler edit must not cut.
_INLINE_KINDS = ("url", "inline_code", "path", "version", "identifier", "number")
_INLINE_PATTERNS = tuple(p for kind, p in _SPAN_PATTERNS if kind in _INLINE_KINDS)
_REFERENCE_PATTERNS = tuple(
    p for kind, p in _SPAN_PATTERNS if kind in ("url", "inline_code", "path")
)

_TERM = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,40}")
_BOUNDARY = re.compile(r"[.!?]+[\"')\]]*([ \t]+)(?=[A-Z0-9\"'`(\[*_#])")
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]{0,11})[.!?]*$")


# --- language packs -----------------------------------------------------------


def _phrase_alternation(phrases: Iterable[str]) -> str:
    """A regex alternation of literal phrases (longest first), whole words only."""
    parts: list[str] = []
    for phrase in sorted({p.strip() for p in phrases if p.strip()}, key=lambda p: (-len(p), p)):
        escaped = re.escape(phrase)
        escaped = escaped.replace(r"\ ", r"[ \t]+").replace("'", "['’]")
        parts.append(escaped)
    return "|".join(parts) if parts else r"(?!x)x"


def _phrase_regex(phrases: Iterable[str]) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w'’-])(?:{_phrase_alternation(phrases)})(?![\w'’-])", re.I)


def normalise_sentence(text: str) -> str:
    """Lower case, straight apostrophes, single spaces, no trailing punctuation."""
    text = text.replace("’", "'").lower()
    text = re.sub(r"[ \t]+", " ", text).strip()
    return text.rstrip(" .!?,;:)").strip()


@dataclass(frozen=True, slots=True)
class LanguagePack:
    """Filler and polarity rules of one language (see ``lang/en.json``)."""

    language: str
    polarity: re.Pattern[str]
    whole_sentences: frozenset[str]
    openers: re.Pattern[str]
    sentence_start: re.Pattern[str]
    anywhere: re.Pattern[str]
    replacements: dict[str, str]
    replacement_regex: re.Pattern[str]
    abbreviations: frozenset[str]
    decision: re.Pattern[str]
    stopwords: frozenset[str]

    def has_polarity(self, text: str) -> bool:
        return bool(_CORE_POLARITY.search(text) or self.polarity.search(text))

    def polarity_spans(self, text: str) -> list[tuple[int, int]]:
        spans = [m.span() for m in _CORE_POLARITY.finditer(text)]
        spans.extend(m.span() for m in self.polarity.finditer(text))
        return spans


@cache
def language_pack(language: str = "en") -> LanguagePack:
    """Load ``lang/<language>.json`` (cached)."""
    if not re.fullmatch(r"[a-z]{2,3}(?:[-_][A-Za-z]{2,4})?", language):
        raise ValueError(f"invalid language pack name {language!r}")
    path = LANG_DIR / f"{language}.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    filler: dict[str, Any] = data.get("filler", {})
    replacements = {str(k).lower(): str(v) for k, v in filler.get("replacements", {}).items()}
    return LanguagePack(
        language=str(data.get("language", language)),
        polarity=_phrase_regex(data.get("polarity", ())),
        whole_sentences=frozenset(normalise_sentence(s) for s in filler.get("whole_sentences", ())),
        openers=re.compile(
            rf"(?:{_phrase_alternation(filler.get('openers', ()))})(?:[!.,]+|[ \t]+[-—–])(?=[ \t]|$)",
            re.I,
        ),
        sentence_start=re.compile(
            rf"(?:{_phrase_alternation(filler.get('sentence_start', ()))})(?![\w'’-]),?(?=[ \t])",
            re.I,
        ),
        anywhere=re.compile(
            rf"(?<![\w'’-])(?:{_phrase_alternation(filler.get('anywhere', ()))})(?![\w'’-])",
            re.I,
        ),
        replacements=replacements,
        replacement_regex=_phrase_regex(replacements),
        abbreviations=frozenset(a.lower().rstrip(".") for a in data.get("abbreviations", ())),
        decision=_phrase_regex(data.get("decision_words", ())),
        stopwords=frozenset(w.lower() for w in data.get("stopwords", ())),
    )


# --- where a unit sits ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Position:
    """A unit's age: user turns after it, agent steps after it."""

    turn_age: int
    step_age: int
    latest_user: bool


def layout(units: Sequence[Unit]) -> list[Position]:
    """Turn and step ages of every unit.

    A *turn* starts at each user prose message; ``turn_age`` counts the user
    prose messages after the unit's message (0 = the latest turn).  A *step*
    starts at each new message, except that tool results of consecutive
    messages (parallel calls) share one step; ``step_age`` counts the steps
    after the unit (0 = the last step: a tool result nobody has answered yet).
    """
    user_messages = sorted({u.index for u in units if u.role == "user" and u.kind == "text"})
    latest_user = user_messages[-1] if user_messages else None
    steps: list[int] = []
    step = -1
    prev: Unit | None = None
    for unit in units:
        same = prev is not None and (
            unit.index == prev.index
            or (unit.is_tool_output and prev.is_tool_output and unit.index == prev.index + 1)
        )
        if not same:
            step += 1
        steps.append(step)
        prev = unit
    last_step = step
    total_turns = len(user_messages)
    return [
        Position(
            turn_age=total_turns - bisect_right(user_messages, unit.index),
            step_age=last_step - s,
            latest_user=(unit.index == latest_user and unit.role == "user" and unit.kind == "text"),
        )
        for unit, s in zip(units, steps, strict=True)
    ]


# --- lines ------------------------------------------------------------------------


def gate_keys(line: str) -> list[str]:
    """The stripped, truncated forms under which the gate sees ``line``."""
    if _OTHER_BREAKS.search(line):
        return [piece.strip()[:CRITICAL_CAP] for piece in line.splitlines()]
    return [line.strip()[:CRITICAL_CAP]]


# an error line of a retry loop: its last one says where the loop ended
_RETRY = re.compile(r"(?i)\b(?:attempts?|retr(?:y|ies|ying|ied)|tries)\b")


def critical_flags(
    text: str,
    lines: Sequence[str],
    kind: str,
    *,
    distinct: bool = True,
    pack: LanguagePack | None = None,
    keep_markers: bool = True,
    command: str | None = None,
    shape: Callable[[str], str] = line_shape,
    last_too: bool = False,
) -> list[bool]:
    """Lines that must stay visible.

    ``kind`` is the unit kind and ``command`` the shell command of a tool
    result (what counts as critical depends on it, as in the gate).  A
    critical token that is not a whole line (a grep match's file name) keeps
    the first line that holds it.  With ``distinct``, only the first line of each
    critical string is flagged (one visible copy satisfies the gate), and for
    error lines the first of each ``shape`` (by default the gate's: lines that
    differ only in numbers and hex ids; the engines that condense pass
    :func:`~workers.fidelity.facts.repeat_key`, which folds only timestamps,
    pids, durations and such); ``last_too`` flags the last of each shape of a retry
    (a line that says attempt, retry or tries) as well: ``attempt 30/30`` is where it
    ended.  With ``pack`` (prose), lines with
    a polarity word are flagged too.  With ``keep_markers``, lines carrying
    markers of earlier engines are flagged (engines that would only re-stash
    a marker leave it); without, an offload marker line may join a run (a
    nested stash), but back-references (``[[dup:``, ``[[read:``) stay: the
    facts they stand for are visible through them.
    """
    flags = [False] * len(lines)
    critical = critical_lines(text, kind, command)
    exact: set[str] = set()
    shaped: set[str] = set()
    for ckind, cline in critical:
        (shaped if ckind in SHAPED_KINDS else exact).add(cline)
    # Lines flagged for another reason first (markers, polarity, an error word
    # past the gate's 600 characters): they take no part in the distinct counts.
    other: set[int] = set()
    if STASH_LITERAL in text or "[[" in text:
        for i, line in enumerate(lines):
            if has_marker(line) if keep_markers else "[[" in line and _BACKREF.search(line):
                other.add(i)
    if pack is not None:
        other.update(
            i for i, line in enumerate(lines) if i not in other and pack.has_polarity(line)
        )
    other.update(
        i
        for i, line in enumerate(lines)
        if len(line) > CRITICAL_CAP
        and i not in other
        and _ERROR_LINE.search(line, CRITICAL_CAP - 40)
    )
    for i in other:
        flags[i] = True
    seen: set[str] = set()
    seen_scoped: set[str] = set()
    seen_shapes: set[str] = set()
    last_of_shape: dict[str, int] = {}
    shape_of: dict[str, str] = {}
    # one copy per file header for findings that name no file (eslint's ``9:23  error ...``)
    sections = finding_sections(lines) if critical and distinct else None
    if critical:
        wanted = exact | shaped
        if _OTHER_BREAKS.search(text) is None:
            hits = [
                (i, [key])
                for i, key in enumerate([line.strip()[:CRITICAL_CAP] for line in lines])
                if key in wanted and i not in other
            ]
        else:
            hits = [(i, gate_keys(line)) for i, line in enumerate(lines) if i not in other]
        for i, keys in hits:
            scope = sections[i] if sections is not None else ""
            for key in keys:
                scoped = f"{scope}\x00{key}" if scope else key
                if key in exact and (not distinct or scoped not in seen_scoped):
                    seen.add(key)
                    seen_scoped.add(scoped)
                    flags[i] = True
                if key in shaped:
                    folded = shape_of.get(key) or shape_of.setdefault(key, shape(key))
                    if scope:
                        folded = f"{scope}\x00{folded}"
                    if not distinct or folded not in seen_shapes:
                        seen_shapes.add(folded)
                        flags[i] = True
                    elif last_too and _RETRY.search(key) is not None:
                        last_of_shape[folded] = i
    for i in last_of_shape.values():
        flags[i] = True
    if critical and len(seen) < len(exact):
        _flag_partial_tokens(text, lines, exact - seen, flags)
    return flags


def flag_critical_before(
    original: str,
    lines: Sequence[str],
    flags: list[bool],
    command: str | None,
    *,
    distinct: bool = True,
    last_too: bool = False,
) -> None:
    """Flag the lines of ``lines`` (a tool output as earlier engines left it) that were
    critical in ``original`` (the output as it came in).  ``last_too``: the last line of
    each repeat key of a retry line as well as the first (see :func:`critical_flags`).

    An earlier engine's markers can change what is critical in the text: the first user
    frame under a crash headline is found again further down, a line of pip's ``The conflict
    is caused by:`` block whose header went into a marker is no longer read as one.  With
    ``distinct``, error lines are flagged one per :func:`~workers.fidelity.facts.repeat_key`
    (none whose key a flagged line shows already); other critical lines every time.
    """
    critical = critical_lines(original, "tool_result", command)
    if not critical:
        return
    exact = {line for kind, line in critical if kind not in SHAPED_KINDS}
    shaped = {line for kind, line in critical if kind in SHAPED_KINDS}
    keys = [line.strip()[:CRITICAL_CAP] for line in lines]
    sections = finding_sections(lines) if distinct else None

    def fold(k: int, key: str) -> str:
        scope = sections[k] if sections is not None else ""
        return f"{scope}\x00{repeat_key(key)}" if scope else repeat_key(key)

    shown = (
        {fold(k, key) for k, key in enumerate(keys) if flags[k] and key in shaped}
        if distinct
        else set()
    )
    last_of_key: dict[str, int] = {}
    for k, key in enumerate(keys):
        if flags[k]:
            if last_too and key in shaped and _RETRY.search(key) is not None:
                last_of_key.pop(fold(k, key), None)  # shown: the last so far is this one
            continue
        if key in exact:
            flags[k] = True
        elif key in shaped:
            if distinct:
                folded = fold(k, key)
                if folded in shown:
                    if last_too and _RETRY.search(key) is not None:
                        last_of_key[folded] = k
                    continue
                shown.add(folded)
            flags[k] = True
    for k in last_of_key.values():
        flags[k] = True


def _flag_partial_tokens(
    text: str, lines: Sequence[str], missing: set[str], flags: list[bool]
) -> None:
    """Flag the first line holding each critical token that is not a whole line.

    Tokens like a grep match's file name (``path:12:...`` -> ``path``) are
    found by the text before the first colon in one pass; anything else by
    one ``str.find`` per token.
    """
    for i, line in enumerate(lines):
        if not missing:
            return
        head = line.split(":", 1)[0] if ":" in line else None
        if head is not None and "\x1b" in head:
            head = _ANSI.sub("", line).split(":", 1)[0]
        if head is not None and head in missing:
            missing.discard(head)
            flags[i] = True
    if not missing:
        return
    starts = line_starts(lines)
    for token in sorted(missing):
        pos = text.find(token)
        if pos >= 0:
            flags[bisect_right(starts, pos) - 1] = True


def line_starts(lines: Sequence[str]) -> list[int]:
    starts: list[int] = []
    pos = 0
    for line in lines:
        starts.append(pos)
        pos += len(line) + 1
    return starts


def fence_mask(text: str, lines: Sequence[str]) -> tuple[list[int], list[tuple[int, int]]]:
    """Per line, the index of its fenced block (-1: none), and the blocks' line ranges."""
    owner = [-1] * len(lines)
    ranges: list[tuple[int, int]] = []
    if "```" not in text and "~~~" not in text:
        return owner, ranges
    fenced = next(p for kind, p in _SPAN_PATTERNS if kind == "fenced_code")
    starts = line_starts(lines)
    for match in fenced.finditer(text):
        a = bisect_right(starts, match.start()) - 1
        b = bisect_right(starts, max(match.start(), match.end() - 1))
        block = len(ranges)
        ranges.append((a, b))
        for k in range(a, b):
            owner[k] = block
    return owner, ranges


def close_fences(keep: list[bool], ranges: Sequence[tuple[int, int]]) -> None:
    """A fenced block with any kept line is kept whole (the gate protects it whole)."""
    for a, b in ranges:
        if any(keep[a:b]):
            for k in range(a, b):
                keep[k] = True


@dataclass(slots=True)
class RunResult:
    text: str
    stash: dict[str, str]
    runs: int
    lines_dropped: int


def _lines_note(count: int, run: str) -> str:
    return f"{count} line{'s' if count != 1 else ''} omitted"


def worth_stashing(run: str, marker: str, tokens: TokenCounter, min_saving: int) -> bool:
    if len(run) >= _LONG_RUN_CHARS:
        return True
    return tokens.count(run) - tokens.count(marker) >= min_saving


def make_marker(note: str, run: str) -> tuple[str, str]:
    """(marker, key) for a stashed run; the note is one short line."""
    key = stash_key(run)
    return offload_marker(short_note(note), key), key


def dropped_runs(lines: Sequence[str], keep: Sequence[bool]) -> Iterator[tuple[int, int]]:
    """Maximal runs ``[a, b)`` of lines not kept, blank lines at their edges left out.

    A run of blank lines only gives nothing.
    """
    n = len(lines)
    i = 0
    while i < n:
        if keep[i]:
            i += 1
            continue
        j = i
        while j < n and not keep[j]:
            j += 1
        a, b = i, j
        while a < b and not lines[a].strip():
            a += 1
        while b > a and not lines[b - 1].strip():
            b -= 1
        if a < b:
            yield a, b
        i = j


def stash_runs(
    lines: Sequence[str],
    keep: Sequence[bool],
    tokens: TokenCounter,
    *,
    note: Callable[[int, str], str] = _lines_note,
    min_saving: int = MIN_SAVING,
) -> RunResult:
    """Replace each maximal run of dropped lines by one marker line.

    Blank lines at the edges of a run stay (they are layout, not content); a
    run that would not save ``min_saving`` tokens stays visible.  The stash
    holds the run exactly, so expanding the marker gives the lines back.
    """
    out: list[str] = []
    stash: dict[str, str] = {}
    runs = dropped = 0
    cursor = 0
    for a, b in dropped_runs(lines, keep):
        out.extend(lines[cursor:a])
        run = "\n".join(lines[a:b])
        marker, key = make_marker(note(b - a, run), run)
        if worth_stashing(run, marker, tokens, min_saving):
            out.append(marker)
            stash[key] = run
            runs += 1
            dropped += b - a
        else:
            out.extend(lines[a:b])
        cursor = b
    out.extend(lines[cursor:])
    return RunResult("\n".join(out), stash, runs, dropped)


# --- spans and sentences ------------------------------------------------------------


def inline_spans(line: str) -> list[tuple[int, int]]:
    """Character spans of ``line`` the gate protects (code, URLs, paths, numbers...).

    Overlapping spans are merged, so the result is sorted and disjoint.
    """
    spans: list[tuple[int, int]] = []
    for pattern in _INLINE_PATTERNS:
        spans.extend(m.span() for m in pattern.finditer(line))
    if len(spans) < 2:
        return spans
    spans.sort()
    merged = [spans[0]]
    for a, b in spans[1:]:
        last_a, last_b = merged[-1]
        if a < last_b:
            if b > last_b:
                merged[-1] = (last_a, b)
        else:
            merged.append((a, b))
    return merged


def has_reference(line: str) -> bool:
    """Does the line name a file path, a URL or a command (inline code)?"""
    if "/" not in line and "`" not in line:
        return False
    return any(p.search(line) for p in _REFERENCE_PATTERNS)


def inside(pos: int, spans: Sequence[tuple[int, int]]) -> bool:
    """Is ``pos`` strictly inside one of the sorted, disjoint ``spans``?"""
    k = bisect_right(spans, (pos, math.inf)) - 1
    return k >= 0 and spans[k][0] < pos < spans[k][1]


def overlaps(a: int, b: int, spans: Sequence[tuple[int, int]]) -> bool:
    """Does ``[a, b)`` overlap one of the sorted, disjoint ``spans``?"""
    k = bisect_right(spans, (b, math.inf)) - 1
    while k >= 0 and spans[k][0] >= b:
        k -= 1
    return k >= 0 and spans[k][1] > a


def sentence_starts(
    line: str, pack: LanguagePack, spans: Sequence[tuple[int, int]] | None = None
) -> list[int]:
    """Start offsets of the sentences of ``line`` (always begins with 0).

    Sentence ``k`` is ``line[starts[k]:starts[k+1]]`` and includes its trailing
    whitespace, so the sentences partition the line.
    """
    starts = [0]
    if len(line) < 4:
        return starts
    spans = inline_spans(line) if spans is None else spans
    for match in _BOUNDARY.finditer(line):
        dot = match.start()
        if spans and inside(dot, spans):
            continue
        before = _WORD_BEFORE.search(line, max(0, dot - 12), dot + 1)
        if before is not None:
            word = before.group(1).lower().rstrip(".")
            if word in pack.abbreviations or len(word) == 1:
                continue
        starts.append(match.end())
    return starts


def terms(text: str, pack: LanguagePack) -> set[str]:
    """Lower-cased content words (3+ characters, not stopwords)."""
    found = {m.group(0).lower() for m in _TERM.finditer(text)}
    return found - pack.stopwords


def term_weights(documents: Iterable[set[str]], query: set[str]) -> dict[str, float]:
    """IDF weight of each query term over the documents (rarer = heavier)."""
    docs = list(documents)
    n = len(docs)
    weights: dict[str, float] = {}
    for term in query:
        df = sum(1 for d in docs if term in d)
        weights[term] = math.log((n + 1) / (df + 0.5)) + 0.1
    return weights
