"""The lossy check of the fidelity gate: one changed message against its previous version.

- Lossless engines are judged by decoding: the engine's own decoder applied to
  the new text must give back the old text exactly.
- Lossy engines are judged on protected content: every recoverable span of
  the old text must be in the new text or in a stash the new text points at
  (``<<cx:HASH>>``); every critical line must still be visible in the new
  text (or in a message the engine names as an explicit back-reference).

A failing message is reverted by the pipeline for that engine only; the
violations (kind + missing token) go to the dead letter.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from workers.core.redact import redact_known
from workers.fidelity.facts import (
    SHAPED_KINDS,
    critical_lines,
    line_shape,
    protected_spans,
    visible_lines,
)
from workers.markers import structured_view
from workers.markers.stash import LITERAL as STASH_LITERAL
from workers.markers.stash import expand_offload

__all__ = [
    "MAX_VIOLATIONS",
    "OFFLOAD_REF",
    "Violation",
    "check_lossy",
    "hidden_critical",
    "referenced_stash",
]

MAX_VIOLATIONS = 20
OFFLOAD_REF = re.compile(r"<<cx:([0-9a-f]{8,64})>>")


@dataclass(frozen=True, slots=True)
class Violation:
    kind: str
    token: str

    def as_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "token": self.token[:300]}


def referenced_stash(
    after: str, stash: Mapping[str, str], keys: set[str] | None = None
) -> list[str]:
    """The stashed texts ``after`` points at, directly or through other stashes, in the
    order met; the keys met are added to ``keys``."""
    texts: list[str] = []
    seen: set[str] = set()
    pending = OFFLOAD_REF.findall(after)
    while pending:
        key = pending.pop()
        if key in seen or key not in stash:
            continue
        seen.add(key)
        texts.append(stash[key])
        pending.extend(OFFLOAD_REF.findall(stash[key]))
    if keys is not None:
        keys |= seen
    return texts


def check_lossy(
    before: str,
    after: str,
    unit_kind: str,
    stash: dict[str, str],
    backrefs: Iterable[str] = (),
    command: str | None = None,
    whitespace_edits: bool = False,
) -> list[Violation]:
    """Violations of ``after`` against ``before`` (empty list = accepted).

    ``whitespace_edits``: the engine mostly strips blanks, so try the cheap
    whitespace-equality check first.
    """
    if (
        whitespace_edits
        and "```" not in before
        and "~~~" not in before
        and len(after) < len(before)
        and _ws_normal(after) == _ws_normal(before)
    ):
        # Only trailing blanks and blank-line runs changed: every line, and so
        # every span and every critical line, is still there as it was.
        return []
    violations: list[Violation] = []
    if not _restores(before, after, stash):
        violations = _lost_spans(before, after, stash)
        if len(violations) >= MAX_VIOLATIONS:
            return violations
    return (
        violations
        + _hidden_lines(before, after, unit_kind, backrefs, command)[
            : MAX_VIOLATIONS - len(violations)
        ]
    )


class _DictStore:
    def __init__(self, items: dict[str, str]) -> None:
        self.items = items

    def get(self, key: str) -> str | None:
        return self.items.get(key)


_BLANK_RUNS = re.compile(r"\n{3,}")


def _ws_normal(text: str) -> str:
    """Trailing spaces and tabs of every line removed, blank-line runs collapsed."""
    stripped = "\n".join([line.rstrip(" \t") for line in text.split("\n")])
    return _BLANK_RUNS.sub("\n\n", stripped) if "\n\n\n" in stripped else stripped


def _restores(before: str, after: str, stash: dict[str, str]) -> bool:
    """Whether expanding ``after``'s stash markers gives ``before`` back.

    Then no protected span can be lost (each is in the text or the stash),
    so the span-by-span check is skipped.  Equality up to the documented
    whitespace normalisation counts too, unless fenced code is involved.
    """
    store = _DictStore(stash)
    restored = expand_offload(after, store, []) if STASH_LITERAL in after else after  # type: ignore[arg-type]
    if restored == before:
        return True
    # ``before`` may hold markers of earlier engines: compare the expansions
    # (a structured view expands to a header plus the original it stands for).
    if STASH_LITERAL in before:
        before = expand_offload(before, store, [])  # type: ignore[arg-type]
    if structured_view.LITERAL in restored or structured_view.LITERAL in before:
        restored, before = structured_view.decode(restored), structured_view.decode(before)
    if restored == before:
        return True
    if "```" in before or "~~~" in before:
        return False
    return _ws_normal(restored) == _ws_normal(before)


def _lost_spans(before: str, after: str, stash: dict[str, str]) -> list[Violation]:
    violations: list[Violation] = []
    recoverable_texts = [after, *referenced_stash(after, stash)]
    after_spans: set[tuple[str, str]] = set()
    for text in recoverable_texts:
        after_spans.update(protected_spans(text))
    for kind, token in sorted(protected_spans(before) - after_spans):
        if any(token in t for t in recoverable_texts):
            continue  # tokenised differently in its new context but still present
        if redact_known(token) != token:
            continue  # a secret of the record: the store keeps it redacted, never recoverable
        violations.append(Violation(kind, token))
        if len(violations) >= MAX_VIOLATIONS:
            break
    return violations


def hidden_critical(
    critical: Iterable[tuple[str, str]], visible_texts: Sequence[str]
) -> Iterator[tuple[str, str]]:
    """The ``(kind, line)`` of ``critical`` readable in none of ``visible_texts``, in order given.

    A line is readable when it is one of the texts' visible lines or a
    substring of a text; lines of a shaped kind (error lines that differ only
    in numbers) also when a visible line has the same shape.
    """
    lines_after: set[str] = set()
    for text in visible_texts:
        lines_after.update(visible_lines(text))
    shapes_after: set[str] | None = None
    for kind, line in critical:
        if line in lines_after or any(line in text for text in visible_texts):
            continue
        if kind in SHAPED_KINDS:
            if shapes_after is None:
                shapes_after = {line_shape(v) for v in lines_after}
            if line_shape(line) in shapes_after:
                continue
        yield kind, line


def _hidden_lines(
    before: str, after: str, unit_kind: str, backrefs: Iterable[str], command: str | None
) -> list[Violation]:
    violations: list[Violation] = []
    critical = sorted(critical_lines(before, unit_kind, command))
    for kind, line in hidden_critical(critical, [after, *backrefs]):
        violations.append(Violation(kind, line))
        if len(violations) >= MAX_VIOLATIONS:
            break
    return violations
