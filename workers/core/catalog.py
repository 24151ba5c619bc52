"""The one table of ctxpress: engines (name -> class path, lossless or not) and modes.

Engine names are registry keys, metric labels and stats keys.

Order is part of the design: dedup first (it points at first copies in the
untouched text), then the JSON table engine before anything that reads JSON
as lines, then command-aware filters, then the JSON crushers, then the
engines that trade meaning-preserving prose for budget.  Lossless mode ends by
taking the column padding out of band (``align``); standard and aggressive leave
padding alone, because the engines there read columns by their padding (eslint's
rule id after two spaces) and a critical line is read as written (ctest's
``8/25 Test  #8: vec_case_07 ...***Failed``): once squeezed it would read as lost.
Then it writes runs of lines of one template as a table of their values (``template``:
a log's ``synced acct_751 balance=4901``, go test's ``--- PASS: TestX/case_3``), and runs of
lines that start alike once under a header (``prefix``): lossless only too, where the
lossy engines read every line whole.
"""

from __future__ import annotations

__all__ = ["AGGRESSIVE", "ENGINES", "LOSSLESS", "MODES", "STANDARD"]

# name -> "module:Class"; modules are imported on first use (workers.engines.resolve),
# so that a mode only pays for its own engines.
ENGINES: dict[str, str] = {
    "dedup": "workers.engines.dedup:DedupEngine",
    "ansi": "workers.engines.ansi:AnsiEngine",
    "jsontable": "workers.engines.jsontable:JsonTableEngine",
    "jsonminify": "workers.engines.jsonminify:JsonMinifyEngine",
    "whitespace": "workers.engines.whitespace:WhitespaceEngine",
    "read-lifecycle": "workers.engines.readlifecycle:ReadLifecycleEngine",
    "outline": "workers.engines.outline:OutlineEngine",
    "datauri": "workers.engines.datauri:DataUriEngine",
    "toolfilter": "workers.engines.toolfilter:ToolFilterEngine",
    "logtemplate": "workers.engines.logtemplate:LogTemplateEngine",
    "smartcrush": "workers.engines.smartcrush:SmartCrushEngine",
    "structured": "workers.engines.structured:StructuredEngine",
    "filler": "workers.engines.filler:FillerEngine",
    "relevance": "workers.engines.relevance:RelevanceEngine",
    "aging": "workers.engines.aging:AgingEngine",
    "budget": "workers.engines.budget:BudgetEngine",
    "align": "workers.engines.align:AlignEngine",
    "template": "workers.engines.template:TemplateEngine",
    "prefix": "workers.engines.prefix:PrefixEngine",
}

_LOSSLESS_FIRST: tuple[str, ...] = ("dedup", "ansi", "jsontable", "jsonminify")
LOSSLESS: tuple[str, ...] = (*_LOSSLESS_FIRST, "align", "template", "prefix")
# Standard and aggressive are exactly reversible: every engine of their chains stashes what
# it drops.  The whitespace engine's normalisation (trailing blanks, blank-line runs) is the
# one change that is not stashed, so neither mode runs it: on the held-out sets it saved 7 to
# 23 tokens of 1.5 to 4.6 million (aggressive left it out first, for the same reason), and
# without it ``expand`` gives every standard record back byte for byte.
STANDARD: tuple[str, ...] = (
    *_LOSSLESS_FIRST,
    "read-lifecycle",
    "outline",
    "datauri",
    "toolfilter",
    "logtemplate",
    "smartcrush",
    "structured",
)
AGGRESSIVE: tuple[str, ...] = (
    *STANDARD,
    "filler",
    "relevance",
    "aging",
    "budget",
)

MODES: dict[str, tuple[str, ...]] = {
    "off": (),
    "lossless": LOSSLESS,
    "standard": STANDARD,
    "aggressive": AGGRESSIVE,
}
