"""``ctxpress compress --explain FILE``: per tool output, its family and what became of its lines.

One JSON line per tool output (see :mod:`workers.pipeline.explain`)::

    {"id": "r1", "unit": "m3", "family": "pytest", "detected_by": "command",
     "command": "pytest -q", "tool": "bash", "tokens_before": 1840, "tokens_after": 310,
     "saved_pct": 83.15, "lines": 212, "kept": 31, "collapsed": 150, "stashed": 31,
     "rewritten": 0, "markers": 4, "facts": 12, "facts_kept": 12, "note": ""}

and, in the summary on stderr, the same totals per family.  The compressed
output, the stats file and the dead letters are the same with or without
``--explain``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, BinaryIO

import orjson

from workers.core.jsonl import BadLine, decode_line
from workers.pipeline.batch import LineResult
from workers.pipeline.explain import UnitReport, explain_record, family_rows
from workers.pipeline.runner import Pipeline

__all__ = ["Explainer"]


class Explainer:
    """Watches the input lines, explains each compressed record, keeps per-family totals."""

    def __init__(self, out: BinaryIO, pipeline: Pipeline) -> None:
        self.out = out
        self.pipeline = pipeline
        self.filters = getattr(pipeline, "_filters", None)  # the set its toolfilter uses
        self.reports: list[UnitReport] = []
        self._raw: dict[int, bytes] = {}

    def watch(self, lines: Iterable[bytes]) -> Iterator[bytes]:
        """The input lines, unchanged; the latest ones are kept until explained."""
        for line_no, raw in enumerate(lines, start=1):
            self._raw[line_no] = raw
            yield raw

    def add(self, result: LineResult) -> None:
        raw = self._raw.pop(result.line_no, None)
        for old in [k for k in self._raw if k < result.line_no]:
            del self._raw[old]  # blank or dead-lettered lines
        if raw is None or result.outcome is None:
            return
        value = decode_line(raw.strip(), result.line_no, self.pipeline.settings.max_record_bytes)
        if isinstance(value, BadLine) or not isinstance(value, dict):
            return
        outcome = result.outcome
        reports = explain_record(
            value, outcome.record, outcome.stash, self.pipeline.tokens, self.filters
        )
        for report in reports:
            self.reports.append(report)
            if report.unit == "*":
                continue
            row: dict[str, Any] = {"id": outcome.record_id, **report.as_dict()}
            self.out.write(orjson.dumps(row) + b"\n")

    def render(self) -> str:
        """Totals per family, for the summary on stderr."""
        lines = [
            "",
            f"{'family':<18}{'outputs':>8}{'tokens before':>15}{'after':>10}{'saved %':>9}"
            f"{'facts kept':>12}  detected by",
        ]
        sources: dict[str, set[str]] = {}
        for r in self.reports:
            if r.detected_by:
                sources.setdefault(r.family, set()).add(r.detected_by)
        for family, row in family_rows(self.reports).items():
            before, after = row["tokens_before"], row["tokens_after"]
            pct = 100.0 * (before - after) / before if before else 0.0
            facts = f"{row['facts_kept']}/{row['facts']}" if row["facts"] else "-"
            lines.append(
                f"{family[:17]:<18}{row['outputs']:>8}{before:>15,}{after:>10,}{pct:>8.1f}%"
                f"{facts:>12}  {', '.join(sorted(sources.get(family, ())))}"
            )
        return "\n".join(lines)
