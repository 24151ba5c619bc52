"""``jsonminify``: large pretty-printed JSON is written compactly behind a layout header.

A JSON object or array of at least :data:`MIN_CHARS` characters (a tool
result whose whole text is JSON, or a fenced code block of any message) that
is laid out in a supported style (``json.dumps`` with ``indent`` or the
default ``", "``/``": "`` separators, ``JSON.stringify(x, null, n)``, jq, Go
``MarshalIndent``...) becomes::

    [[json-min:v1 indent=2]]{"a":1,"b":[true,null]}[[/json-min]]

The payload is the original text without the whitespace between tokens:
every string and number keeps its exact lexeme.  The header's attributes
(see :mod:`workers.engines._jsonlayout`: ``indent``, ``depth``, ``margin``,
``eol``, ``item``, ``key``) say how to lay it out again; the header has no
line break and the payload ends at the first ``[[/json-min]]``.

Runs after ``jsontable``: a text holding a ``[[json-table:`` marker is no
longer JSON and is skipped.  Lossless: a document is only compacted after
:func:`decode` was checked to give back the exact original bytes, and only
where it saves tokens.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from workers.engines._jsonlayout import (
    ATTRS_PATTERN,
    Layout,
    compact,
    doc_spans,
    infer_layout,
    load,
    render,
)
from workers.engines.base import Engine, EngineContext, EngineOutput
from workers.messages.model import Unit

__all__ = ["MIN_CHARS", "MIN_HEADER", "JsonMinifyEngine", "decode"]

MIN_CHARS = 200
_OPEN = "[[json-min:v1"
_CLOSE = "[[/json-min]]"
MIN_HEADER = re.compile(r"\[\[json-min:v1" + ATTRS_PATTERN + r"\]\]")
_OWN_LITERAL = re.compile(r"\[\[/?json-min[:\]]")
_WS = " \t\r\n"


class JsonMinifyEngine(Engine):
    name = "jsonminify"
    lossless = True

    def apply(self, units: Sequence[Unit], ctx: EngineContext) -> EngineOutput:
        texts: list[str] = []
        documents = chars_saved = 0
        for unit in units:
            text = unit.text
            new = None
            if not unit.frozen and len(text) >= MIN_CHARS and ("[" in text or "{" in text):
                new = _encode_unit(text, unit.kind == "tool_result", ctx)
            if new is None:
                texts.append(text)
                continue
            texts.append(new[0])
            documents += new[1]
            chars_saved += len(text) - len(new[0])
        details: dict[str, Any] = (
            {"documents": documents, "chars_saved": chars_saved} if documents else {}
        )
        return EngineOutput(texts=texts, details=details)

    def decode(self, text: str, originals: Mapping[str, str]) -> str:
        return decode(text)


def decode(text: str) -> str:
    """Replace every ``[[json-min:v1 ...]]...[[/json-min]]`` with the original JSON.

    Text that only looks like a marker (bad header, no end, no JSON) stays as it is.
    """
    pos = text.find(_OPEN)
    if pos < 0:
        return text
    out: list[str] = []
    cursor = 0
    while pos >= 0:
        m = MIN_HEADER.match(text, pos)
        if m is not None:
            end = text.find(_CLOSE, m.end())
            if end < 0:
                break  # no end marker after this point: nothing more to decode
            restored = _restore(m, text[m.end() : end])
            if restored is not None:
                out.append(text[cursor:pos])
                out.append(restored)
                cursor = end + len(_CLOSE)
                pos = text.find(_OPEN, cursor)
                continue
        pos = text.find(_OPEN, pos + 1)
    out.append(text[cursor:])
    return "".join(out)


def _restore(header: re.Match[str], payload: str) -> str | None:
    """The original text of one compacted document, or None when it is not one we wrote."""
    if payload[:1] not in ("[", "{") or load(payload) is None:
        return None
    try:
        return render(payload, Layout.from_groups(header.groups()))
    except ValueError:
        return None


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
    marker = f"{_OPEN}{layout.attrs()}]]{compact(span)}{_CLOSE}"
    try:
        if decode(marker) != span:
            return None
    except ValueError:
        return None
    return marker


def _encode_unit(text: str, whole: bool, ctx: EngineContext) -> tuple[str, int] | None:
    spans = list(doc_spans(text, whole))
    if not spans or _OWN_LITERAL.search(text):
        return None
    found: list[tuple[int, int, str]] = []
    for start, end in spans:
        marker = encode_document(text, start, end)
        if marker is not None:
            found.append((start, end, marker))
    if not found:
        return None
    tokens = ctx.tokens
    if (
        len(found) == 1
        and not text[: found[0][0]].strip(_WS)
        and not text[found[0][1] :].strip(_WS)
    ):
        start, end, marker = found[0]
        new = text[:start] + marker + text[end:]
        if tokens.count(new) >= tokens.count(text):
            return None
        return new, 1
    kept = [f for f in found if tokens.count(f[2]) < tokens.count(text[f[0] : f[1]])]
    if not kept:
        return None
    pieces: list[str] = []
    cursor = 0
    for start, end, marker in kept:
        pieces.append(text[cursor:start])
        pieces.append(marker)
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces), len(kept)
