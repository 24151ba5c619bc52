"""Savings over a ``ctxpress compress --stats`` file (or the worker's stats topic, see
:func:`records_from_engine_rows`): per mode, engine and command family.

Pure computing, no I/O: :func:`summarize` takes the stats lines (bytes, one
JSON object each) and returns a :class:`Report`; :func:`render_table`,
:func:`render_chart` and :meth:`Report.as_json` turn it into text.

What is counted:

- per mode: every record; tokens before and after are the record's own.
- per engine: the records in which the engine's status is ``applied``; tokens
  before and after are the engine's own (what it was given, what it left).
- per command family: the ``filters_hit`` of the ``toolfilter`` engine (the tool
  output filter that matched, e.g. ``pytest``); a record's toolfilter saving is
  split between the families it hit in proportion to their hit counts.  No
  record with ``filters_hit``: no family table.
- money: tokens saved / 1,000,000 * the price per million tokens.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from workers.core.errors import CtxpressError

__all__ = [
    "BadStatsLine",
    "Report",
    "Row",
    "records_from_engine_rows",
    "render_chart",
    "render_table",
    "summarize",
]

CHART_WIDTH = 40


class BadStatsLine(CtxpressError, ValueError):
    """A stats line that is not a JSON object with the fields ``--stats`` writes."""


@dataclass
class Row:
    """Totals of one group: records, tokens before and after."""

    name: str
    records: int = 0
    tokens_before: int = 0
    tokens_after: float = 0.0

    @property
    def saved(self) -> float:
        return self.tokens_before - self.tokens_after

    @property
    def saved_pct(self) -> float:
        return round(100.0 * self.saved / self.tokens_before, 1) if self.tokens_before else 0.0

    def add(self, before: int, after: float) -> None:
        self.records += 1
        self.tokens_before += before
        self.tokens_after += after

    def as_json(self, price: float | None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "records": self.records,
            "tokens_before": self.tokens_before,
            "tokens_after": _whole(self.tokens_after),
            "tokens_saved": _whole(self.saved),
            "saved_pct": self.saved_pct,
        }
        if price is not None:
            out["usd_saved"] = money(self.saved, price)
        return out


@dataclass
class Report:
    total: Row = field(default_factory=lambda: Row("total"))
    modes: dict[str, Row] = field(default_factory=dict)
    engines: dict[str, Row] = field(default_factory=dict)
    families: dict[str, Row] = field(default_factory=dict)
    price: float | None = None

    def as_json(self) -> dict[str, Any]:
        def table(rows: dict[str, Row]) -> dict[str, Any]:
            return {name: row.as_json(self.price) for name, row in rows.items()}

        out: dict[str, Any] = {
            "total": self.total.as_json(self.price),
            "modes": table(self.modes),
            "engines": table(self.engines),
        }
        if self.families:
            out["families"] = table(self.families)
        if self.price is not None:
            out["price_per_million_usd"] = self.price
        return out


def money(tokens: float, price: float) -> float:
    return round(tokens * price / 1_000_000, 6)


def _whole(value: float) -> int | float:
    return int(value) if float(value).is_integer() else round(value, 2)


def _int_field(record: dict[str, Any], key: str, line_no: int, where: str = "") -> int:
    value = record.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise BadStatsLine(
            f"line {line_no}: {where}{key!r} must be a non-negative integer, got {value!r}"
        )
    return value


def summarize(lines: Iterable[bytes], price: float | None = None) -> Report:
    """Add up the stats lines; a line that is not a stats object raises :class:`BadStatsLine`."""
    report = Report(price=price)
    for line_no, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            record = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise BadStatsLine(f"line {line_no}: not JSON ({exc})") from exc
        if not isinstance(record, dict):
            raise BadStatsLine(
                f"line {line_no}: expected a JSON object, got {type(record).__name__}"
            )
        before = _int_field(record, "tokens_before", line_no)
        after = _int_field(record, "tokens_after", line_no)
        mode = str(record.get("mode", "unknown"))
        report.total.add(before, after)
        report.modes.setdefault(mode, Row(mode)).add(before, after)
        engines = record.get("engines", [])
        if not isinstance(engines, list):
            raise BadStatsLine(f"line {line_no}: 'engines' must be a list")
        for step in engines:
            if not isinstance(step, dict) or not isinstance(step.get("engine"), str):
                raise BadStatsLine(f"line {line_no}: an 'engines' entry without an engine name")
            if step.get("status") != "applied":
                continue
            name = step["engine"]
            where = f"engine {name}: "
            e_before = _int_field(step, "tokens_before", line_no, where)
            e_after = _int_field(step, "tokens_after", line_no, where)
            report.engines.setdefault(name, Row(name)).add(e_before, e_after)
            details = step.get("details")
            hits = details.get("filters_hit") if isinstance(details, dict) else None
            if isinstance(hits, dict) and hits:
                _add_families(report, hits, e_before, e_after)
    return report


def records_from_engine_rows(rows: Iterable[bytes]) -> Iterable[bytes]:
    """The worker's stats topic (one row per engine run, in chain order per record) as the
    per-record lines :func:`summarize` reads: a record's tokens before are its first
    engine's, its tokens after its last engine's.  Rows of one record are consecutive on
    its partition (the key is the record id); a record whose rows are interleaved with
    another's is still grouped by its id within a run of rows."""
    current: dict[str, Any] | None = None
    for line_no, raw in enumerate(rows, 1):
        try:
            row = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise BadStatsLine(f"row {line_no}: not JSON ({exc})") from exc
        if not isinstance(row, dict) or not isinstance(row.get("engine"), str):
            raise BadStatsLine(f"row {line_no}: not a stats-topic row (no 'engine')")
        rid = row.get("record_id")
        if current is not None and (current["record_id"] != rid or _repeats(current, row)):
            yield orjson.dumps(current)
            current = None
        if current is None:
            current = {
                "record_id": rid,
                "mode": row.get("mode", "unknown"),
                "tokens_before": row.get("tokens_before"),
                "engines": [],
            }
        current["engines"].append(row)
        current["tokens_after"] = row.get("tokens_after")
    if current is not None:
        yield orjson.dumps(current)


def _repeats(current: dict[str, Any], row: dict[str, Any]) -> bool:
    """A record's rows again (the same id processed twice): a new record."""
    return any(step.get("engine") == row["engine"] for step in current["engines"])


def _add_families(report: Report, hits: dict[str, Any], before: int, after: int) -> None:
    counts = {str(k): v for k, v in hits.items() if isinstance(v, int) and v > 0}
    total = sum(counts.values())
    for family, count in sorted(counts.items()):
        share = count / total
        row = report.families.setdefault(family, Row(family))
        row.records += 1
        row.tokens_before += round(before * share)
        row.tokens_after += after * share


def _fmt(value: float) -> str:
    return f"{value:,.0f}"


def _table(title: str, rows: Iterable[Row], price: float | None) -> list[str]:
    head = f"{title:<16}{'records':>9}{'tokens before':>15}{'tokens after':>14}{'saved':>12}{'saved %':>9}"
    if price is not None:
        head += f"{'USD saved':>12}"
    lines = [head]
    for row in rows:
        line = (
            f"{row.name:<16}{row.records:>9,}{row.tokens_before:>15,}{_fmt(row.tokens_after):>14}"
            f"{_fmt(row.saved):>12}{row.saved_pct:>8.1f}%"
        )
        if price is not None:
            line += f"{money(row.saved, price):>12.4f}"
        lines.append(line)
    return lines


def render_table(report: Report) -> str:
    """The mode, engine and (when known) command family tables, blank-line separated."""
    price = report.price
    parts = [_table("mode", [*report.modes.values(), report.total], price)]
    parts.append(_table("engine", report.engines.values(), price))
    if report.families:
        parts.append(_table("command family", report.families.values(), price))
    text = "\n\n".join("\n".join(p) for p in parts)
    if price is not None:
        text += (
            f"\n\n{_fmt(report.total.saved)} tokens saved at ${price:g} per million tokens:"
            f" ${money(report.total.saved, price):,.4f}"
        )
    return text + "\n"


def render_chart(report: Report, width: int = CHART_WIDTH) -> str:
    """Tokens saved per engine as horizontal bars; the largest saving gets ``width`` cells."""
    rows = [r for r in report.engines.values() if r.saved > 0]
    lines = ["tokens saved per engine"]
    if not rows:
        return lines[0] + "\n(no engine saved tokens)\n"
    top = max(r.saved for r in rows)
    for row in sorted(rows, key=lambda r: (-r.saved, r.name)):
        cells = max(1, round(width * row.saved / top))
        lines.append(f"{row.name:<16}{'█' * cells:<{width}} {_fmt(row.saved)}")
    return "\n".join(lines) + "\n"
