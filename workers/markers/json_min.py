"""The ``[[json-min:v1 LAYOUT]]...[[/json-min]]`` marker: grammar, writer, decoder.

The body is the compact JSON of a document (every lexeme as written);
``LAYOUT`` (:mod:`workers.markers.jsonlayout`) says how to lay it out again.

The layout is out of band, as the JSON tables' are
(:mod:`workers.markers.json_table`): the engine writes the attributes in the
header (its decode check needs them), and as soon as the pipeline has
accepted its changes it moves them (:func:`take_layouts`) into the record's
``compression`` manifest (``markers.min``), one entry per document keyed by
the unit and a digest of its compact body (:func:`body_digest`); the visible
marker is the plain ``[[json-min:v1]]{...}[[/json-min]]``.
:func:`decode_with` re-applies them.  A layout entry can only choose JSON
whitespace and separators: every lexeme comes from the visible body.
Markers with the attributes inline (records written before, documents kept
inside a stash, two documents with one body and two layouts) still decode; a
plain marker without its entry decodes to the compact body.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping

from workers.core.memo import text_memo
from workers.markers.json_table import parse_layout, splice_layouts
from workers.markers.jsonlayout import ATTRS_PATTERN, Layout, decode_markers, load, render

__all__ = [
    "CLOSE",
    "DIGEST_HEX",
    "MIN_HEADER",
    "OPEN",
    "OWN_LITERAL",
    "body_digest",
    "decode",
    "decode_with",
    "min_marker",
    "take_layouts",
]

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


def _restore(header: re.Match[str], payload: str, layout: Layout | None = None) -> str | None:
    """The original text of one compacted document, or None when it is not one we wrote."""
    value = load(payload) if payload[:1] in ("[", "{") else None
    if value is None:
        return None
    try:
        return render(
            payload, Layout.from_groups(header.groups()) if layout is None else layout, value
        )
    except ValueError:
        return None


# -- layout out of band ----------------------------------------------------------

DIGEST_HEX = 12  # hex digits of a body digest (per unit: only whitespace rides on it)
PLAIN = f"{OPEN}]]"


def body_digest(payload: str) -> str:
    """The key of a document's layout: a digest of its compact body."""
    data = payload.encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=DIGEST_HEX // 2).hexdigest()


def decode_with(text: str, layouts: Mapping[str, str]) -> str:
    """:func:`decode`, with the out-of-band layouts of the text's unit.

    ``layouts``: :func:`body_digest` -> attribute list (as :func:`take_layouts`
    gives them).  A plain marker whose digest is not there, or whose
    attributes do not parse, decodes to its compact body; a marker with
    inline attributes keeps them.
    """
    if not layouts:
        return decode(text)

    def restore(header: re.Match[str], payload: str) -> str | None:
        layout = None
        if not any(header.groups()):
            attrs = layouts.get(body_digest(payload))
            layout = None if attrs is None else parse_layout(attrs)
        return _restore(header, payload, layout)

    return decode_markers(text, OPEN, CLOSE, MIN_HEADER, restore)


def _markers(text: str) -> Iterator[tuple[re.Match[str], str]]:
    """(header, body) of every whole marker of ``text``, in order."""
    pos = text.find(OPEN)
    while pos >= 0:
        m = MIN_HEADER.match(text, pos)
        if m is None:
            pos = text.find(OPEN, pos + 1)
            continue
        end = text.find(CLOSE, m.end())
        if end < 0:
            return
        yield m, text[m.end() : end]
        pos = text.find(OPEN, end + len(CLOSE))


def take_layouts(text: str) -> tuple[str, dict[str, str]]:
    """``text`` with every json-min header's layout attributes taken out, and those layouts.

    Returns the text with plain headers and :func:`body_digest` -> attribute
    list (no leading space).  A document keeps its attributes inline when
    taking them would be ambiguous (another document of ``text`` with the same
    body and another layout) or when they are beyond what
    :func:`~workers.markers.json_table.parse_layout` reads back the same.
    """
    if OPEN not in text:
        return text, {}
    found: list[tuple[re.Match[str], str]] = []
    layouts: dict[str, str] = {}
    conflicts: set[str] = set()
    for m, payload in _markers(text):
        attrs = m.group(0)[len(OPEN) + 1 : -2]
        if not attrs:
            continue
        digest = body_digest(payload)
        found.append((m, digest))
        if layouts.setdefault(digest, attrs) != attrs:
            conflicts.add(digest)
    return splice_layouts(text, found, layouts, conflicts, lambda _: PLAIN)
