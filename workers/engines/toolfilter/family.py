"""The output family of one tool result: what ``ctxpress bench`` and ``compress --explain`` report.

The family is the filter the ``toolfilter`` engine picks for the output
(:meth:`~workers.engines._filters.FilterSet.detect`), named for people:
``generic`` chosen by a log signature is ``log``, the ``generic`` fallback
is ``unknown`` (``test report`` or ``diagnostics`` when :mod:`.blocks` finds
one in the lines), file reads (left alone) are ``file read``; JSON documents are
``json`` (the JSON engines handle them).  ``source`` says what decided
(``command``, ``tool``, ``output`` signature, ``content`` scoring,
``fallback``, ``skip``, ``none``) and ``note`` why the engine may leave the
output alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from workers.engines._filters import FilterSet, builtin_filters
from workers.engines._text import is_json_document
from workers.engines.toolfilter.blocks import structure_family
from workers.engines.toolfilter.engine import _JSON_BLOCK, MIN_CHARS
from workers.messages.model import Unit

__all__ = ["MESSAGES", "Family", "output_family"]

MESSAGES = "(messages)"  # the family of every text that is not a tool output

_STRUCTURES = {"report": "test report", "crash": "crash report"}
_READS = {"read": "file read", "read-vcs": "file read", "fetch": "fetched document"}


@dataclass(frozen=True, slots=True)
class Family:
    name: str
    source: str
    note: str = ""


def output_family(unit: Unit, filters: FilterSet | None = None) -> Family:
    """The family of one unit (``(messages)`` for anything but a tool result)."""
    if unit.kind != "tool_result":
        return Family(MESSAGES, "")
    text = unit.text
    if _JSON_BLOCK.search(text) or is_json_document(text):
        return Family("json", "output", "JSON: left to the JSON engines")
    found = (filters if filters is not None else builtin_filters()).detect(
        unit.command, unit.tool_name, text
    )
    note = ""
    if unit.frozen:
        note = "frozen: never changed"
    elif len(text) < MIN_CHARS:
        note = f"shorter than {MIN_CHARS} characters: not filtered"
    if found.source == "skip":
        return Family(_READS.get(found.family, found.family), "skip", note or "left alone")
    if found.filter is None or found.filter.name == "generic":
        structure = structure_family(text)
        if structure:  # the lines are a test report or diagnostics (:mod:`.blocks`)
            first = structure.split("+", 1)[0]  # ``report+crash`` is a test report
            return Family(_STRUCTURES.get(first, first), "content", note)
    if found.filter is None:
        return Family("unknown", found.source, note or "no filter for this output")
    if found.filter.name == "generic":
        name = "unknown" if found.source == "fallback" else "log"
        return Family(name, found.source, note)
    return Family(found.family, found.source, note)
