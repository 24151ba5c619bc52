"""Rendering: each run of dropped lines becomes one marker line, its text stashed.

``… 412 lines omitted (all PASSED) <<cx:KEY>>`` replaces a run only when
that saves at least ``MIN_SAVED_TOKENS`` tokens beyond the marker's own (a
run that does not pay as a whole is tried piece by piece between its blank
lines: one label each, so shorter notes); an over-long shown line keeps its start and stashes the
rest.  Expanding the markers gives back the input exactly.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from workers.core.offload import stash_key
from workers.core.tokens import TokenCounter
from workers.engines._filters import ANSI, LINE_CAP, Filter
from workers.engines._prose import make_marker
from workers.engines.toolfilter.plan import (
    BLANK,
    DROP,
    NORMAL,
    PLAIN,
    REPEAT,
    SHOWN,
    SIMILAR,
    Label,
    Plan,
)
from workers.fidelity.facts import protected_spans
from workers.markers.stash import NOTE_CAP, offload_marker

__all__ = ["LONG_LINE", "LONG_LINE_KEEP", "MIN_SAVED_TOKENS", "FilterResult", "filter_text"]

MIN_SAVED_TOKENS = 12  # a run is dropped only when it saves at least this much, marker paid
LONG_LINE = 800  # a shown context line longer than this keeps only its start
LONG_LINE_KEEP = 240


@dataclass(slots=True)
class FilterResult:
    text: str
    stash: dict[str, str]
    lines_omitted: int
    markers: int
    structure: str = ""  # what :mod:`.blocks` found: ``report``, ``diagnostics``, both or ""


def _counted(count: int, noun: str) -> str:
    """``1 passing test``, ``3 passing tests``: singular for one, label as written otherwise."""
    if count == 1 and noun.endswith("s") and not noun.endswith("ss"):
        noun = noun[:-1]
    return f"{count} {noun}"


def _note(plan: Plan, a: int, b: int) -> str:
    labels: Counter[Label] = Counter()
    for i in range(a, b):
        if plan.cls[i] == DROP:
            label = plan.labels[i]
            labels[label if label is not None else PLAIN] += 1
    n = b - a
    lines = _counted(n, "lines")
    if any(label.item for label in labels):
        return _structure_note(labels, lines, _repeats(plan, a, b))
    if len(labels) == 1:
        label = next(iter(labels))
        if label.note:
            values: dict[str, Any] = {
                "n": n,
                "total": plan.total_rows,
                "label": label.text,
                "key": label.key,
            }
            for name, pattern in label.counts:
                values[name] = sum(
                    1 for line in plan.lines[a:b] if pattern.search(ANSI.sub("", line[:LINE_CAP]))
                )
            try:
                return label.note.format(**values)
            except (KeyError, IndexError, ValueError):
                pass
        if label.rows:
            return f"{n} of {plan.total_rows} rows omitted"
        if not label.text:
            return f"{lines} omitted"
        if label is REPEAT:
            return f"{_counted(n, 'repeated lines')} omitted (shown above)"
        if label is SIMILAR:
            return f"{_counted(n, 'similar lines')} omitted"
        return f"{lines} omitted (all {label.text})"
    parts = [
        _counted(count, label.text or ("rows" if label.rows else "other lines"))
        for label, count in labels.most_common(3)
    ]
    if len(labels) > 3:
        parts.append("…")
    return f"{lines} omitted ({', '.join(parts)})"


def _repeats(plan: Plan, a: int, b: int) -> list[str]:
    """``warning -Wunused-variable 5 more times at main.c:4:33 ...`` per kind in ``[a, b)``."""
    found = plan.structure.repeats
    if not found:
        return []
    kinds: dict[str, list[str]] = {}
    for i in range(a, b):
        repeat = found.get(i)
        if repeat is not None and plan.cls[i] == DROP:
            kinds.setdefault(repeat.kind, []).append(repeat.where)
    return [
        f"{kind} {len(w)} more time{'s' if len(w) > 1 else ''} at {' '.join(w)}"
        for kind, w in kinds.items()
    ]


def _structure_note(labels: Counter[Label], lines: str, repeats: list[str]) -> str:
    """``30 passing tests omitted``, ``12 snippet lines, 3 help lines omitted``.

    Structure labels (:mod:`.blocks`) count their items; quiet ones (a test's
    ``=== RUN`` line) belong to the items they run and are not named unless
    alone; any other label makes the note count lines first.  Repeats of a
    diagnostic come first, each kind with every location.
    """
    named = [(label, c) for label, c in labels.most_common() if not label.quiet]
    if not named and not repeats:
        named = list(labels.most_common())
    if repeats:
        rest = [_counted(count, label.text) for label, count in named[:3] if label.item]
        note = "; ".join(repeats)
        more = f"{note} (and {', '.join(rest)})"
        return more if rest and len(more) <= NOTE_CAP else note
    parts = [
        _counted(count, label.text or ("rows" if label.rows else "other lines"))
        for label, count in named[:3]
    ]
    if len(named) > 3:
        parts.append("…")
    if all(label.item for label, _ in named):
        return f"{', '.join(parts)} omitted"
    return f"{lines} omitted ({', '.join(parts)})"


def filter_text(text: str, filt: Filter, tokens: TokenCounter) -> FilterResult | None:
    """Apply one filter to one output; None when nothing worth dropping was found."""
    plan = Plan(text, filt)
    lines = plan.lines
    if len(lines) < filt.min_lines:
        return None
    plan.budget()
    cls = plan.cls
    n = len(lines)
    out: list[str] = []
    stash: dict[str, str] = {}
    omitted = markers = 0
    i = 0
    while i < n:
        if cls[i] != DROP:
            line = lines[i]
            if len(line) > LONG_LINE and cls[i] in (NORMAL, SHOWN):
                capped = _cap_line(line)
                if capped is not None:
                    line, key, rest = capped
                    stash[key] = rest
                    markers += 1
            out.append(line)
            i += 1
            continue
        # maximal run of DROP/BLANK lines starting at a DROP line
        j = i
        while j < n and cls[j] in (DROP, BLANK):
            j += 1
        end = j
        while end > i and cls[end - 1] == BLANK:
            end -= 1
        # the whole run, else (when it does not pay) its pieces between blank lines
        if _stash_run(plan, i, end, tokens, out, stash):
            omitted += end - i
            markers += 1
        else:
            pieces = _pieces(cls, i, end)
            at = i
            for a, b in pieces if len(pieces) > 1 else ():
                out.extend(lines[at:a])  # the blank lines between pieces
                if _stash_run(plan, a, b, tokens, out, stash):
                    omitted += b - a
                    markers += 1
                else:
                    out.extend(lines[a:b])
                at = b
            out.extend(lines[at:end])
        out.extend(lines[end:j])
        i = j
    if not markers:
        return None
    new = "\n".join(out)
    if plan.trailing:
        new += "\n"
    return FilterResult(new, stash, omitted, markers, plan.structure.family)


def _stash_run(
    plan: Plan, a: int, b: int, tokens: TokenCounter, out: list[str], stash: dict[str, str]
) -> bool:
    """Append the marker of lines ``[a, b)`` to ``out`` and stash them, when that pays."""
    run = "\n".join(plan.lines[a:b])
    marker, key = make_marker(_note(plan, a, b), run)
    if not _worth(run, marker, tokens):
        return False
    out.append(marker)
    stash[key] = run
    return True


def _pieces(cls: bytearray, a: int, b: int) -> list[tuple[int, int]]:
    """The runs of dropped lines in ``[a, b)`` between its blank lines."""
    pieces: list[tuple[int, int]] = []
    start = -1
    for k in range(a, b):
        if cls[k] == BLANK:
            if start >= 0:
                pieces.append((start, k))
                start = -1
        elif start < 0:
            start = k
    if start >= 0:
        pieces.append((start, b))
    return pieces


def _cap_line(line: str) -> tuple[str, str, str] | None:
    """(shown prefix + marker, key, stashed rest) for an over-long context line.

    The cut falls after a space, ``;`` or ``,`` and never inside a protected
    span (URL, path, number, ...): each span must stay whole on one side.
    """
    # spans near the cut are enough: a span that crosses the cut lies in this prefix
    near = line[: LONG_LINE_KEEP + 4096]
    spans = protected_spans(near)
    window = line[LONG_LINE_KEEP // 2 : LONG_LINE_KEEP]
    for seps in (" ;,", " "):
        cut = LONG_LINE_KEEP
        sep = max(window.rfind(c) for c in seps)
        if sep > 0:
            cut = LONG_LINE_KEEP // 2 + sep + 1
        ellipsis = line.find("…", 0, cut)
        if ellipsis >= 0:
            cut = ellipsis  # the expand pattern starts at the first "…" of a line
        if cut < 20:
            return None
        head, tail = near[:cut], near[cut:]
        if all(token in head or token in tail for _, token in spans):
            break
    else:
        return None
    rest = line[cut:]
    key = stash_key(rest)
    return (
        head + offload_marker(f"{len(rest)} more characters of this line omitted", key),
        key,
        rest,
    )


def _worth(run: str, marker: str, tokens: TokenCounter) -> bool:
    if len(run) <= len(marker):
        return False
    if len(run) > 8 * len(marker) + 400:
        return True
    marker_tokens = tokens.count(marker)
    return tokens.count(run) >= marker_tokens + MIN_SAVED_TOKENS
