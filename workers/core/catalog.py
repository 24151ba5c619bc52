"""Modes -> engine names, as a plain table.

Order is part of the design: dedup first (it points at first copies in the
untouched text), then the JSON table engine before anything that reads JSON
as lines, then command-aware filters, then the JSON crushers, then the
engines that trade meaning-preserving prose for budget.
"""

from __future__ import annotations

__all__ = ["AGGRESSIVE", "LOSSLESS", "MODES", "STANDARD"]

LOSSLESS: tuple[str, ...] = ("dedup", "jsontable", "jsonminify")
STANDARD: tuple[str, ...] = (
    *LOSSLESS,
    "whitespace",
    "read-lifecycle",
    "datauri",
    "toolfilter",
    "smartcrush",
    "structured",
)
AGGRESSIVE: tuple[str, ...] = (*STANDARD, "filler", "relevance", "aging", "budget")

MODES: dict[str, tuple[str, ...]] = {
    "off": (),
    "lossless": LOSSLESS,
    "standard": STANDARD,
    "aggressive": AGGRESSIVE,
}
