"""``jsonminify``: large pretty-printed JSON is written compactly behind a layout header.

A JSON object or array of at least :data:`MIN_CHARS` characters (a tool
result whose whole text is JSON, or a fenced code block of any message) that
is laid out in a supported style (``json.dumps`` with ``indent`` or the
default ``", "``/``": "`` separators, ``JSON.stringify(x, null, n)``, jq, Go
``MarshalIndent``...) becomes::

    [[json-min:v1]]{"a":1,"b":[true,null]}[[/json-min]]

The payload is the original text without the whitespace between tokens:
every string and number keeps its exact lexeme.  The engine writes the
layout's attributes in the header (see :mod:`workers.markers.jsonlayout`:
``indent``, ``depth``, ``margin``, ``eol``, ``item``, ``key``), so the gate's
decode check is exact; once the gate has accepted a change the pipeline
moves them into ``compression.markers.min``
(:func:`workers.markers.json_min.take_layouts`), so the visible header is the
plain ``[[json-min:v1]]``.  The header has no line break and the payload ends
at the first ``[[/json-min]]``.

Runs after ``jsontable``: a text holding a ``[[json-table:`` marker is no
longer JSON and is skipped.  Lossless: a document is only compacted after
:func:`decode` was checked to give back the exact original bytes, and only
where it saves tokens.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from workers.engines._jsonlayout import encode_units, splice_saving
from workers.engines.base import EngineContext, EngineOutput, LosslessEngine
from workers.markers.json_min import MIN_HEADER, OWN_LITERAL, decode, min_marker
from workers.markers.jsonlayout import (
    Rewrite,
    compact,
    doc_spans,
    infer_layout,
    load,
)
from workers.messages.model import Unit

__all__ = ["MIN_CHARS", "MIN_HEADER", "JsonMinifyEngine", "decode"]

MIN_CHARS = 200


class JsonMinifyEngine(LosslessEngine):
    name = "jsonminify"
    lossless = True

    def apply(self, units: Sequence[Unit], ctx: EngineContext) -> EngineOutput:
        texts, rewrites = encode_units(units, ctx, _encode_unit, MIN_CHARS)
        details: dict[str, Any] = {}
        if rewrites:
            # each marker replaced its document: the characters saved add up per marker
            saved = sum(end - start - len(marker) for start, end, marker, _ in rewrites)
            details = {"documents": len(rewrites), "chars_saved": saved}
        return EngineOutput(texts=texts, details=details)

    def decode(self, text: str, originals: Mapping[str, str]) -> str:
        return decode(text)


def encode_document(text: str, start: int, end: int) -> str | None:
    """The marker for the JSON document ``text[start:end]``, or None."""
    span = text[start:end]
    if len(span) < MIN_CHARS or "[[json-" in span or "[[/json-" in span:
        return None
    if load(span) is None:
        return None
    layout = infer_layout(text, start, end)
    if layout is None or (layout.indent is None and layout.canonical):
        return None
    marker = min_marker(layout, compact(span))
    try:
        if decode(marker) != span:
            return None
    except ValueError:
        return None
    return marker


def _encode_unit(text: str, whole: bool, ctx: EngineContext) -> tuple[str, list[Rewrite]] | None:
    spans = list(doc_spans(text, whole))
    if not spans or OWN_LITERAL.search(text):
        return None
    found: list[Rewrite] = []
    for start, end in spans:
        marker = encode_document(text, start, end)
        if marker is not None:
            found.append((start, end, marker, 1))
    return splice_saving(text, found, ctx.tokens)
