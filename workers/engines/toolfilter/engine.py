"""The ``toolfilter`` engine: pick a filter per tool output and apply it."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from workers.engines._filters import builtin_filters
from workers.engines._shell import (
    TABLE_SUFFIXES,
    is_big_data_read,
    read_path,
    read_paths,
    read_patterns,
)
from workers.engines._text import is_json_document, json_tail, named_lines, request_terms
from workers.engines.base import Engine, EngineContext, EngineOutput
from workers.engines.listing import compact_listing
from workers.engines.toolfilter.blocks import structure_family
from workers.engines.toolfilter.render import filter_text
from workers.fidelity.facts import SOURCE_FILE
from workers.messages.model import Unit

__all__ = ["MIN_CHARS", "ToolFilterEngine"]

MIN_CHARS = 400  # outputs shorter than this are left alone
_JSON_BLOCK = re.compile(r"\[\[(?:json-table|json-min):")


class ToolFilterEngine(Engine):
    name = "toolfilter"
    lossless = False

    def apply(self, units: Sequence[Unit], ctx: EngineContext) -> EngineOutput:
        filters = ctx.filters if ctx.filters is not None else builtin_filters()
        texts: list[str] = []
        stash: dict[str, str] = {}
        hits: Counter[str] = Counter()
        structures: Counter[str] = Counter()
        listings: Counter[str] = Counter()
        omitted = markers = 0
        asked = request_terms(ctx.latest_user_text)
        for unit in units:
            text = unit.text
            if (
                unit.frozen
                or unit.kind != "tool_result"
                or len(text) < MIN_CHARS
                or _JSON_BLOCK.search(text)
                or is_json_document(text)
                or json_tail(text) is not None  # (a report after a few lines: the crusher's)
            ):
                texts.append(text)
                continue
            found = filters.detect(unit.command, unit.tool_name, text)
            view = (
                None
                if found.source == "skip"
                else compact_listing(text, ctx.tokens, found.family, unit.command)
            )
            if view is not None:  # a listing: the compact view, every path visible
                texts.append(view.text)
                stash.update(view.stash)
                listings[view.kind] += 1
                hits[found.family] += 1
                markers += 1
                continue
            filt = found.filter
            if filt is None and found.source == "skip" and is_big_data_read(unit, TABLE_SUFFIXES):
                # a big CSV or TSV read: its header, head and tail, the rows with an error word
                # or a name the request says stay, runs of alike rows go to the stash
                filt = filters.by_name.get("generic")
            elif filt is None and _reads_a_report(unit, found.source, found.family, text):
                # ``cat target/surefire-reports/X.txt``, ``tail -n 200 build.log``: a read of a
                # file that is no source code and holds a test report, diagnostics or a crash
                filt = filters.by_name.get("generic")
            elif filt is None and found.source == "none" and structure_family(text):
                # no command, tool or signature named a filter, but the lines are a
                # test report or diagnostics: the generic filter with the structure
                filt = filters.by_name.get("generic")
            if filt is None:
                texts.append(text)
                continue
            result = filter_text(text, filt, ctx.tokens, named_lines(text, asked), unit.command)
            if result is None:
                texts.append(text)
                continue
            texts.append(result.text)
            stash.update(result.stash)
            hits[filt.name] += 1
            omitted += result.lines_omitted
            markers += result.markers
            if result.structure:
                structures[result.structure] += 1
        details: dict[str, Any] = {}
        if hits:
            details = {
                "filters_hit": dict(sorted(hits.items())),
                "lines_omitted": omitted,
                "markers": markers,
            }
            if structures:
                details["structures"] = dict(sorted(structures.items()))
        if listings:  # (each listing counted in hits too: details has its markers)
            details["listings"] = dict(sorted(listings.items()))
        return EngineOutput(texts=texts, details=details, stash=stash)


def _reads_a_report(unit: Unit, source: str, family: str, text: str) -> bool:
    """Whether ``unit`` read a file that is no source code (a test runner's report, a build
    log) and whose lines are a test report, diagnostics or a crash (:func:`structure_family`):
    read as the output that wrote it.  Reads of source code stay whole."""
    if source != "skip" or family != "read":
        return False
    paths = _read_targets(unit)
    return (
        bool(paths)
        and not any(SOURCE_FILE.search(path) for path in paths)
        and not _prose(text)
        and bool(structure_family(text))
    )


def _read_targets(unit: Unit) -> tuple[str, ...]:
    """The files a read names: its one path, the paths of a ``cat`` of several, or the
    patterns of a read by glob (``cat target/surefire-reports/*.txt``)."""
    path = read_path(unit)
    if path is not None:
        return (path,)
    return read_paths(unit) or read_patterns(unit.command)


# a sentence: eight words or more, mostly lower case, ending as sentences do
_SENTENCE = re.compile(
    r"^\s*(?:[-*>#]+\s+|\d{1,3}[.)]\s+)?[A-Za-z][\w'’()-]*\S?(?:\s+\S+){7,}[.:!?]\s*$"
)
PROSE_SHARE = 0.2  # of a read's non-blank lines, that make it a document, not a report


def _prose(text: str) -> bool:
    """Whether a read is a document (a guide with a report pasted in), not a report: a fifth
    of its first 400 non-blank lines are sentences."""
    lines = [line for line in text.split("\n", 800)[:800] if line.strip()][:400]
    return bool(lines) and sum(1 for line in lines if _SENTENCE.match(line)) > PROSE_SHARE * len(
        lines
    )
