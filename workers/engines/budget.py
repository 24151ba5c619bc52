"""``budget``: stash the lowest-value spans until the record fits a token budget.

Runs last in aggressive mode, and only when the record asks for a budget
(``budget_tokens`` in the record, ``--budget-tokens`` on the CLI, or the
``budget_tokens`` engine option).  The record's size is the sum of its
units' token counts (the same counter the pipeline reports with).

Order (lowest value first, oldest first):

1. tool outputs, oldest first (the last, unanswered one last);
2. prose of user and assistant messages, oldest first.

In each unit, the runs of lines outside the *protected floor* are stashed
top to bottom, each behind one ``… N lines omitted <<cx:KEY>>`` line, until
the deficit is covered; the last run may be cut so that only what is needed
goes (its head stays visible).  The floor never goes: frozen units (cached
prefix, pinned, leading system), system messages, the latest user message,
every critical line of the gate in a tool output, every copy of it (the
output comes from the engines before, which folded what only repeats: the same
line under another file's header, stack or headline is another fact there),
the lines that were critical in the output as it came in (an earlier engine's
markers can hide why a line is critical: the pip filter's view of a conflict;
error lines one per :func:`~workers.fidelity.facts.repeat_key`, so each
candidate version stays), every constraint, negation and polarity line of
prose, and fenced code
blocks that contain one of those.  Protected spans (numbers, paths, code...)
only have to be recoverable, so they may go into the stash.

Details: ``budget_tokens``, ``tokens_before``, ``tokens_after``,
``budget_met`` and ``missed_by`` (0 when met); when the budget cannot be met,
``floor_reason`` says what the floor is made of.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from workers.core.tokens import TokenCounter
from workers.engines._prose import (
    LanguagePack,
    Position,
    close_fences,
    critical_flags,
    dropped_runs,
    fence_mask,
    flag_critical_before,
    language_pack,
    layout,
    stash_runs,
)
from workers.engines.base import Engine, EngineContext, EngineOutput
from workers.messages.model import Unit

__all__ = ["BudgetEngine"]

_SLACK = 3  # tokens of margin per stashed run (joins tokenise a little differently)
_MAX_PASSES = 4
_MARKER_COST = 18
_EXACT_CHARS = 2000  # longer runs are estimated at the unit's tokens-per-character rate


@dataclass(slots=True)
class _Plan:
    lines: list[str]
    floor: list[bool]
    owner: list[int]


def _plan(unit: Unit, text: str, pack: LanguagePack, original: str | None = None) -> _Plan:
    lines = text.split("\n")
    owner, ranges = fence_mask(text, lines)
    if unit.kind == "tool_result":
        floor = critical_flags(
            text, lines, "tool_result", distinct=False, keep_markers=False, command=unit.command
        )
        if original is not None and original != text:
            # a line critical in the output as it came in stays too (as in aging: after an
            # earlier engine's markers the first user frame under a crash headline can be
            # found on another line of this text); error lines one per repeat key
            flag_critical_before(original, lines, floor, unit.command)
    else:
        floor = critical_flags(text, lines, "text", distinct=False, pack=pack, keep_markers=False)
    close_fences(floor, ranges)
    return _Plan(lines, floor, owner)


def _cut(plan: _Plan, a: int, b: int, need: int, ratio: float, tokens: TokenCounter) -> int:
    """Start of a short tail of run [a, b) that saves ``need`` tokens (``a``: all of it).

    The cut is placed by characters at the unit's tokens-per-character
    ``ratio``; a short tail is then checked with an exact count (and moved up
    if it falls short), so a huge run costs at most a few small counts.
    """
    lengths = [len(plan.lines[k]) + 1 for k in range(a, b)]
    target = (need * 1.1 + 8) / max(ratio, 1e-6)
    if target >= 0.9 * sum(lengths):
        return a
    c, got = b, 0
    while c > a + 1 and got < target:
        c -= 1
        got += lengths[c - a]
    for _ in range(8):
        while c > a and not _cut_ok(plan, c):
            c -= 1
        if c <= a:
            return a
        tail = "\n".join(plan.lines[c:b])
        if len(tail) >= _EXACT_CHARS or tokens.count(tail) >= need:
            return c
        c -= max(1, (c - a) // 4)
    return a


def _cut_ok(plan: _Plan, c: int) -> bool:
    """May a run start at line ``c`` (not inside a fenced block, not on a blank line)?"""
    fence_ok = plan.owner[c] < 0 or plan.owner[c] != plan.owner[c - 1]
    return fence_ok and bool(plan.lines[c].strip())


class BudgetEngine(Engine):
    name = "budget"
    lossless = False

    def __init__(self, language: str = "en", budget_tokens: int | None = None) -> None:
        self.language = language
        self.budget_tokens = budget_tokens

    def apply(self, units: Sequence[Unit], ctx: EngineContext) -> EngineOutput:
        texts = [u.text for u in units]
        budget = ctx.budget_tokens if ctx.budget_tokens is not None else self.budget_tokens
        if budget is None:
            return EngineOutput(texts=texts)
        tokens = ctx.tokens
        pack = language_pack(self.language)
        counts = [tokens.count(t) for t in texts]
        before = total = sum(counts)
        positions = layout(units)
        movable = [
            i
            for i, (u, pos) in enumerate(zip(units, positions, strict=True))
            if not u.frozen and u.role != "system" and not pos.latest_user and u.text.strip()
        ]
        order = [i for i in movable if units[i].kind == "tool_result"]
        order += [i for i in movable if units[i].kind != "tool_result"]
        stash: dict[str, str] = {}
        markers = lines_omitted = 0
        changed: set[int] = set()
        exhausted: set[int] = set()  # units with nothing droppable left
        for _ in range(_MAX_PASSES):
            if total <= budget:
                break
            progress = False
            for i in order:
                if total <= budget:
                    break
                if i in exhausted:
                    continue
                original = ctx.input_texts[i] if i < len(ctx.input_texts) else None
                plan = _plan(units[i], texts[i], pack, original)
                keep = [True] * len(plan.lines)
                deficit = total - budget
                left = False  # droppable lines remain after this round
                for a, b in dropped_runs(plan.lines, plan.floor):
                    if deficit <= 0:
                        left = True
                        break
                    run = "\n".join(plan.lines[a:b])
                    run_tokens = (
                        tokens.count(run)
                        if len(run) < _EXACT_CHARS
                        else int(len(run) * counts[i] / max(1, len(texts[i])))
                    )
                    saving = run_tokens - _MARKER_COST
                    if saving <= 0:
                        continue
                    if saving > deficit + 2 * _MARKER_COST and b - a > 1:
                        ratio = counts[i] / max(1, len(texts[i]))
                        cut = _cut(plan, a, b, deficit + _MARKER_COST + _SLACK, ratio, tokens)
                        left = left or cut > a
                        a = cut
                        tail = "\n".join(plan.lines[a:b])
                        tail_tokens = (
                            tokens.count(tail) if len(tail) < _EXACT_CHARS else len(tail) * ratio
                        )
                        saving = int(tail_tokens) - _MARKER_COST
                    for k in range(a, b):
                        keep[k] = False
                    deficit -= saving - _SLACK
                if not left:
                    exhausted.add(i)
                if all(keep):
                    continue
                result = stash_runs(plan.lines, keep, tokens, min_saving=1)
                if result.runs == 0:
                    continue
                new_count = tokens.count(result.text)
                if new_count >= counts[i]:
                    exhausted.add(i)
                    continue
                total += new_count - counts[i]
                counts[i] = new_count
                texts[i] = result.text
                stash.update(result.stash)
                markers += result.runs
                lines_omitted += result.lines_dropped
                changed.add(i)
                progress = True
            if not progress:
                break
        details: dict[str, object] = {
            "budget_tokens": budget,
            "tokens_before": before,
            "tokens_after": total,
            "budget_met": total <= budget,
            "missed_by": max(0, total - budget),
        }
        if changed:
            details.update(
                {"units_changed": len(changed), "markers": markers, "lines_omitted": lines_omitted}
            )
        if total > budget:
            details["floor_reason"] = self._floor_reason(units, positions, counts, total, budget)
        return EngineOutput(texts=texts, details=details, stash=stash)

    @staticmethod
    def _floor_reason(
        units: Sequence[Unit],
        positions: Sequence[Position],
        counts: Sequence[int],
        total: int,
        budget: int,
    ) -> str:
        frozen = sum(
            c for u, c in zip(units, counts, strict=True) if u.frozen or u.role == "system"
        )
        latest = sum(
            c
            for u, p, c in zip(units, positions, counts, strict=True)
            if p.latest_user and not u.frozen
        )
        rest = total - frozen - latest
        return (
            f"protected floor: {total} tokens stay visible after every droppable span was "
            f"stashed ({frozen} in frozen/cached or system messages, {latest} in the latest "
            f"user message, {rest} in critical lines, constraints, negations and markers of "
            f"other messages); the budget of {budget} is {total - budget} tokens below it"
        )
