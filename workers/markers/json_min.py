"""The ``[[json-min:v1 LAYOUT]]...[[/json-min]]`` marker: grammar, writer, decoder.

The body is the compact JSON of a document (every lexeme as written);
``LAYOUT`` (:mod:`workers.markers.jsonlayout`) says how to lay it out again.
"""

from __future__ import annotations

import re

from workers.core.memo import text_memo
from workers.markers.jsonlayout import ATTRS_PATTERN, Layout, decode_markers, load, render

__all__ = ["CLOSE", "MIN_HEADER", "OPEN", "OWN_LITERAL", "decode", "min_marker"]

OPEN = "[[json-min:v1"
CLOSE = "[[/json-min]]"
MIN_HEADER = re.compile(r"\[\[json-min:v1" + ATTRS_PATTERN + r"\]\]")
# Input that already holds this marker's literals is never minified.
OWN_LITERAL = re.compile(r"\[\[/?json-min[:\]]")


def min_marker(layout: Layout, compact_json: str) -> str:
    """The marker for a document: its layout attributes and compact text."""
    return f"{OPEN}{layout.attrs()}]]{compact_json}{CLOSE}"


@text_memo(chars=16_000_000)  # pure; the gate and later engines decode the same texts
def decode(text: str) -> str:
    """Replace every ``[[json-min:v1 ...]]...[[/json-min]]`` with the original JSON.

    Text that only looks like a marker (bad header, no end, no JSON) stays as it is.
    """
    return decode_markers(text, OPEN, CLOSE, MIN_HEADER, _restore)


def _restore(header: re.Match[str], payload: str) -> str | None:
    """The original text of one compacted document, or None when it is not one we wrote."""
    value = load(payload) if payload[:1] in ("[", "{") else None
    if value is None:
        return None
    try:
        return render(payload, Layout.from_groups(header.groups()), value)
    except ValueError:
        return None
