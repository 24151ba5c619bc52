"""``relevance``: in older prose, keep what bears on the latest user message.

Scope: user and assistant prose units (``kind == "text"``) that are not
frozen, not the latest user message and not in the last ``keep_turns``
user turns (default 2).  Tool outputs are left to ``aging``.

Scoring: the latest user message gives the query terms (content words of
three letters or more, minus the pack's stopwords).  Each term weighs its
rarity over the conversation's prose units (IDF), and a sentence scores the
sum of the weights of the query terms it contains.  In each unit, a
sentence is kept when it scores at least ``min_share`` (default 0.5) of the
unit's best sentence.  With no query terms, or when no older unit shares
a term with the query, the engine does nothing (there is nothing to rank
by); a unit that shares no term while others do is irrelevant and keeps
only its protected lines and first sentence.

Always kept, whatever the score:

- the first sentence of a unit (the request or the topic);
- every line the gate counts as critical (constraints, negations, errors)
  and every line with a polarity word of the language pack (modals, hedges,
  conditionals): a kept line is kept verbatim, so no polarity can change;
- sentences with protected content (inline code, URLs, paths, identifiers,
  versions, numbers), fenced code blocks, indented code, tables, headings,
  quotes and lines carrying markers of other engines.

Dropping keeps the line structure: a line whose sentences are all dropped
joins a run of dropped lines that becomes one ``… N lines omitted <<cx:KEY>>``
line; dropped sentences inside a kept line become one inline
``… N sentences omitted <<cx:KEY>>`` per run of sentences.  Every run is
stashed exactly, so ``expand`` restores the text, and a run is dropped only
when the marker is shorter than the run.

A scorer can replace the IDF score (``RelevanceEngine(scorer=...)``: a
function from the query and the candidate sentences to one score each), for
example one backed by a local sentence-embedding model; the default needs
no model.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from workers.core.tokens import TokenCounter
from workers.engines._prose import (
    MIN_SAVING,
    LanguagePack,
    critical_flags,
    fence_mask,
    inline_spans,
    language_pack,
    layout,
    make_marker,
    sentence_starts,
    stash_runs,
    term_weights,
    terms,
)
from workers.engines.base import Engine, EngineContext, EngineOutput
from workers.messages.model import Unit

__all__ = ["RelevanceEngine", "Scorer"]

Scorer = Callable[[str, Sequence[str]], Sequence[float]]

_PREFIX = re.compile(r"[ \t]*(?:[-*+][ \t]+|\d{1,3}[.)][ \t]+)?")
_STRUCTURAL = ("|", ">", "#", "<", "{", "[", "$ ", "```", "~~~")


def _structural(line: str) -> bool:
    return line.startswith(("    ", "\t")) or line.lstrip().startswith(_STRUCTURAL)


class _Candidate:
    __slots__ = ("end", "line", "score", "start", "text")

    def __init__(self, line: int, start: int, end: int, text: str) -> None:
        self.line = line
        self.start = start
        self.end = end
        self.text = text
        self.score = 0.0


class _Counts:
    __slots__ = ("lines", "markers", "sentences")

    def __init__(self) -> None:
        self.sentences = 0
        self.lines = 0
        self.markers = 0


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''} omitted"


def _inline(
    line: str,
    starts: Sequence[int],
    dropped: Sequence[bool],
    tokens: TokenCounter,
    stash: dict[str, str],
    counts: _Counts,
) -> str:
    """The line with each run of dropped sentences replaced by one inline marker."""
    if "…" in line:
        return line  # a literal ellipsis before a marker would confuse expand's matcher
    bounds = [*starts, len(line)]
    out: list[str] = []
    cursor = 0
    k = 0
    n = len(starts)
    while k < n:
        if not dropped[k]:
            k += 1
            continue
        j = k
        while j < n and dropped[j]:
            j += 1
        a, b = bounds[k], bounds[j]
        if k == 0:
            prefix = _PREFIX.match(line)
            a = prefix.end() if prefix is not None else 0
        run = line[a:b]
        body = run.rstrip()
        trail = run[len(body) :]
        if body:
            marker, key = make_marker(_plural(j - k, "sentence"), body)
            if tokens.count(body) - tokens.count(marker) >= MIN_SAVING:
                out.append(line[cursor:a])
                out.append(marker + trail)
                cursor = b
                stash[key] = body
                counts.sentences += j - k
                counts.markers += 1
        k = j
    if not cursor:
        return line
    out.append(line[cursor:])
    return "".join(out)


class RelevanceEngine(Engine):
    name = "relevance"
    lossless = False

    def __init__(
        self,
        language: str = "en",
        keep_turns: int = 2,
        min_share: float = 0.5,
        scorer: Scorer | None = None,
    ) -> None:
        self.language = language
        self.keep_turns = keep_turns
        self.min_share = min_share
        self.scorer = scorer

    def apply(self, units: Sequence[Unit], ctx: EngineContext) -> EngineOutput:
        texts = [u.text for u in units]
        pack = language_pack(self.language)
        keep_turns = self.keep_turns
        min_share = self.min_share
        positions = layout(units)
        targets = [
            i
            for i, (u, pos) in enumerate(zip(units, positions, strict=True))
            if not u.frozen
            and u.kind == "text"
            and u.role in ("user", "assistant")
            and not pos.latest_user
            and pos.turn_age >= keep_turns
            and u.text.strip()
        ]
        if not targets:
            return EngineOutput(texts=texts)
        query = ctx.latest_user_text
        query_terms = terms(query, pack)
        if not query_terms and self.scorer is None:
            return EngineOutput(texts=texts, details={"skipped": "no query terms"})
        unit_terms = {i: terms(u.text, pack) for i, u in enumerate(units) if u.kind == "text"}
        weights = term_weights(unit_terms.values(), query_terms)
        if self.scorer is None and not any(unit_terms[i] & query_terms for i in targets):
            # Nothing old shares a word with the request: no signal to rank by.
            return EngineOutput(texts=texts, details={"skipped": "no shared terms"})
        counts = _Counts()
        stash: dict[str, str] = {}
        changed = 0
        for i in targets:
            new = self._unit(
                units[i].text, query, query_terms, weights, pack, ctx, stash, counts, min_share
            )
            if new != units[i].text:
                texts[i] = new
                changed += 1
        details: dict[str, object] = {}
        if changed:
            details = {
                "units_changed": changed,
                "sentences_dropped": counts.sentences,
                "lines_dropped": counts.lines,
                "markers": counts.markers,
                "query_terms": len(query_terms),
            }
        return EngineOutput(texts=texts, details=details, stash=stash)

    def _unit(
        self,
        text: str,
        query: str,
        query_terms: set[str],
        weights: dict[str, float],
        pack: LanguagePack,
        ctx: EngineContext,
        stash: dict[str, str],
        counts: _Counts,
        min_share: float,
    ) -> str:
        lines = text.split("\n")
        owner, _ = fence_mask(text, lines)
        protected = critical_flags(text, lines, "text", distinct=False, pack=pack)
        first = next((k for k, line in enumerate(lines) if line.strip()), 0)
        candidates: list[_Candidate] = []
        line_starts: dict[int, list[int]] = {}
        line_has_kept: dict[int, bool] = {}
        for k, line in enumerate(lines):
            if protected[k] or owner[k] >= 0 or not line.strip() or _structural(line):
                continue
            spans = inline_spans(line)
            starts = sentence_starts(line, pack, spans)
            line_starts[k] = starts
            bounds = [*starts, len(line)]
            kept_here = False
            for s in range(len(starts)):
                a, b = bounds[s], bounds[s + 1]
                if (k == first and s == 0) or any(x < b and a < y for x, y in spans):
                    kept_here = True  # protected content: always kept
                    continue
                candidates.append(_Candidate(k, s, s + 1, line[a:b]))
            line_has_kept[k] = kept_here
        if not candidates:
            return text
        if self.scorer is not None:
            scores = list(self.scorer(query, [c.text for c in candidates]))
            for c, score in zip(candidates, scores, strict=True):
                c.score = float(score)
        else:
            for c in candidates:
                shared = terms(c.text, pack) & query_terms
                c.score = sum(weights[t] for t in shared)
        best = max(c.score for c in candidates)
        threshold = best * min_share if best > 0 else 0.0
        dropped_by_line: dict[int, list[bool]] = {}
        for c in candidates:
            if c.score < threshold or best <= 0:
                flags = dropped_by_line.setdefault(c.line, [False] * len(line_starts[c.line]))
                flags[c.start] = True
        if not dropped_by_line:
            return text
        keep = [True] * len(lines)
        new_lines = list(lines)
        for k, flags in dropped_by_line.items():
            if all(flags) and not line_has_kept[k]:
                keep[k] = False
            else:
                new_lines[k] = _inline(lines[k], line_starts[k], flags, ctx.tokens, stash, counts)
        for k, line in enumerate(lines):
            if not line.strip():
                keep[k] = False  # blank lines may join a run (edges stay)
        result = stash_runs(new_lines, keep, ctx.tokens, min_saving=MIN_SAVING)
        stash.update(result.stash)
        counts.lines += result.lines_dropped
        counts.markers += result.runs
        return result.text
