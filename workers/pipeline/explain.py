"""Per tool output: its family and what compression did to its lines (``compress --explain``, ``bench``).

:func:`explain_record` compares every unit of an input record with the same
unit of the compressed record and, for a tool output, counts its non-blank
input lines by what became of them:

- ``kept``: still visible as written (surrounding whitespace aside);
- ``collapsed``: behind a marker, but a visible line of the same shape
  (digits aside) stands for it (repeats, similar lines, log templates);
- ``stashed``: behind a marker with nothing like it left visible;
- ``rewritten``: neither visible nor stashed: re-encoded (JSON tables,
  minified JSON, dedup references, structured views, whitespace edits).

``markers`` counts the stash markers in the output, ``facts``/``facts_kept``
the critical lines of the input and how many are still visible (the
:mod:`workers.pipeline.visibility` oracle).  Units that are not tool outputs
are reported as one row of family ``(messages)``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from workers.core.ansi import strip_ansi
from workers.core.tokens import TokenCounter
from workers.engines._filters import FilterSet
from workers.engines.toolfilter.family import MESSAGES, output_family
from workers.fidelity.facts import critical_lines
from workers.fidelity.lossy import OFFLOAD_REF
from workers.messages import RESERVED_KEY, parse_record
from workers.pipeline.visibility import lost_facts

__all__ = ["UnitReport", "explain_record", "family_rows"]

_DIGITS = re.compile(r"\d+")
_MAX_DEPTH = 32


@dataclass(slots=True)
class UnitReport:
    unit: str
    family: str
    detected_by: str
    command: str | None
    tool: str | None
    tokens_before: int
    tokens_after: int
    lines: int = 0
    kept: int = 0
    collapsed: int = 0
    stashed: int = 0
    rewritten: int = 0
    markers: int = 0
    facts: int = 0
    facts_kept: int = 0
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        before = self.tokens_before
        out["saved_pct"] = (
            round(100.0 * (before - self.tokens_after) / before, 2) if before else 0.0
        )
        return out


def _shape(line: str) -> str:
    return _DIGITS.sub("0", line)


def _stashed_lines(text: str, stash: Mapping[str, str]) -> set[str]:
    """Stripped lines of every stash entry ``text`` points at (nested entries too)."""
    seen: set[str] = set()
    lines: set[str] = set()
    pending = [(key, 0) for key in OFFLOAD_REF.findall(text)]
    while pending:
        key, depth = pending.pop()
        if key in seen or depth > _MAX_DEPTH:
            continue
        seen.add(key)
        value = stash.get(key)
        if value is None:
            continue
        lines.update(line.strip() for line in value.split("\n"))
        pending.extend((k, depth + 1) for k in OFFLOAD_REF.findall(value))
    return lines


def _count_lines(report: UnitReport, before: str, after: str, stash: Mapping[str, str]) -> None:
    # colours (which the ansi engine keeps out of band) do not make a line another line
    plain = strip_ansi if "\x1b" in before else str
    visible = {plain(line).strip() for line in after.split("\n")}
    shapes: set[str] | None = None
    stashed = {plain(line) for line in _stashed_lines(after, stash)} if "<<cx:" in after else set()
    report.markers = len(OFFLOAD_REF.findall(after))
    for raw in before.split("\n"):
        line = plain(raw).strip()
        if not line:
            continue
        report.lines += 1
        if line in visible:
            report.kept += 1
        elif line in stashed:
            if shapes is None:
                shapes = {_shape(v) for v in visible}
            if _shape(line) in shapes:
                report.collapsed += 1
            else:
                report.stashed += 1
        else:
            report.rewritten += 1


def _plain(record: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != RESERVED_KEY}


def explain_record(
    data: dict[str, Any],
    output: dict[str, Any],
    stash: Mapping[str, str],
    tokens: TokenCounter,
    filters: FilterSet | None = None,
    lines: bool = True,
) -> list[UnitReport]:
    """One report per tool output of ``data`` (plus one ``(messages)`` row for the rest)."""
    before = parse_record(_plain(data)).units
    after = parse_record(_plain(output)).units
    lost: dict[str, int] = {}
    for uid, _kind, _line in lost_facts(data, output):
        lost[uid] = lost.get(uid, 0) + 1
    reports: list[UnitReport] = []
    messages: UnitReport | None = None
    for a, b in zip(before, after, strict=True):
        t_before, t_after = tokens.count(a.text), tokens.count(b.text)
        if a.kind != "tool_result":
            if messages is None:
                messages = UnitReport("*", MESSAGES, "", None, None, 0, 0)
            messages.tokens_before += t_before
            messages.tokens_after += t_after
            continue
        family = output_family(a, filters)
        report = UnitReport(
            a.uid,
            family.name,
            family.source,
            a.command,
            a.tool_name,
            t_before,
            t_after,
            note=_note(family.note, t_before, t_after),
        )
        report.facts = len(critical_lines(a.text, "tool_result", a.command))
        report.facts_kept = report.facts - lost.get(a.uid, 0)
        if lines:
            _count_lines(report, a.text, b.text, stash)
        reports.append(report)
    if messages is not None:
        reports.append(messages)
    return reports


def family_rows(reports: list[UnitReport]) -> dict[str, dict[str, int]]:
    """Totals per family: outputs, tokens before/after, facts, facts kept (sorted by tokens)."""
    rows: dict[str, dict[str, int]] = {}
    for r in reports:
        row = rows.setdefault(
            r.family,
            {"outputs": 0, "tokens_before": 0, "tokens_after": 0, "facts": 0, "facts_kept": 0},
        )
        row["outputs"] += r.unit != "*"
        row["tokens_before"] += r.tokens_before
        row["tokens_after"] += r.tokens_after
        row["facts"] += r.facts
        row["facts_kept"] += r.facts_kept
    return dict(sorted(rows.items(), key=lambda kv: (-kv[1]["tokens_before"], kv[0])))


def _note(note: str, before: int, after: int) -> str:
    """The family's note, said of what happened: a read the tool filter leaves alone may
    still be shortened by another engine (a big data file, an old read aged)."""
    if note == "left alone" and after < before:
        return "the tool filter leaves it; other engines shortened it"
    return note
