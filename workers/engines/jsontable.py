"""``jsontable``: uniform arrays of JSON objects become a column header plus rows.

An array of at least :data:`MIN_ROWS` objects that all have the same keys in
the same order (values scalars or nested), found in a tool result whose whole
text is JSON (the array itself, or nested anywhere inside it) or in a fenced
code block (```` ```json ````, ```` ``` ````, ``~~~``) of any message, is
replaced by::

    [[json-table:v1 columns=["id","name"] rows=2 indent=2]]
    [1,"a"]
    [2,"b"]
    [[/json-table]]

``columns`` holds the keys and every row line one JSON array of the values,
each exactly as written in the input (``1.50``, ``1E+2``, ``-0``,
``12345678901234567890``, ``"\\u00e9"``; nested values in compact JSON).  The
engine writes the attributes of the original layout after ``rows`` (see
:mod:`workers.markers.jsonlayout`: ``indent``, ``depth``, ``margin``, ``eol``,
``item``, ``key``), so the gate's decode check is exact; once the gate has
accepted a change the pipeline moves them into ``compression.markers.table``
(:func:`workers.markers.json_table.take_layouts`), so the visible header is the
plain ``[[json-table:v1 columns=[...] rows=N]]`` other pipelines decode.
When the array is nested, the marker replaces just the array's text; the
document around it stays as written.

Lossless: a table is only written after :func:`decode` was checked to give
back the exact original text, and only where it saves tokens.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from itertools import compress
from typing import Any

import orjson

from workers.engines._jsonlayout import encode_units, splice_saving
from workers.engines.base import EngineContext, EngineOutput, LosslessEngine
from workers.markers.json_table import (
    LITERAL,
    SENTINEL,
    TABLE_HEADER,
    decode,
    row_segments,
    table_marker,
)
from workers.markers.jsonlayout import (
    SCALAR_FIND,
    SCALAR_SPLIT,
    WS,
    Rewrite,
    doc_spans,
    infer_layout,
    loads_orjson,
    offsets,
)
from workers.messages.model import Unit

__all__ = ["MIN_ROWS", "TABLE_HEADER", "JsonTableEngine", "decode"]

MIN_ROWS = 8
MIN_CHARS = 64


class JsonTableEngine(LosslessEngine):
    name = "jsontable"
    lossless = True

    def apply(self, units: Sequence[Unit], ctx: EngineContext) -> EngineOutput:
        texts, rewrites = encode_units(units, ctx, _encode_unit)
        details: dict[str, Any] = {}
        if rewrites:
            details = {"tables": len(rewrites), "rows": sum(r[3] for r in rewrites)}
        return EngineOutput(texts=texts, details=details)

    def decode(self, text: str, originals: Mapping[str, str]) -> str:
        return decode(text)


# -- encoding ------------------------------------------------------------------


def _is_table(value: list[Any]) -> bool:
    if len(value) < MIN_ROWS:
        return False
    first = value[0]
    if type(first) is not dict or not first:
        return False
    keys = tuple(first)
    width = len(keys)
    for row in value:
        if type(row) is not dict or len(row) != width or tuple(row) != keys:
            return False
    return True


def _find_tables(value: Any) -> list[tuple[Any, Any, list[Any]]]:
    """(parent, key, array) of the outermost tables inside ``value`` (iterative)."""
    found: list[tuple[Any, Any, list[Any]]] = []
    stack = [value]
    while stack:
        node = stack.pop()
        items = node.items() if type(node) is dict else enumerate(node)
        for k, v in items:
            kind = type(v)
            if kind is list:
                if _is_table(v):
                    found.append((node, k, v))
                elif v:
                    stack.append(v)
            elif kind is dict and v:
                stack.append(v)
    return found


def _consume(segment: str, tail: str) -> int:
    """Index in ``segment`` just after its non-whitespace prefix ``tail``; -1 if none."""
    k = 0
    for i, ch in enumerate(segment):
        if ch in WS:
            continue
        if ch != tail[k]:
            return -1
        k += 1
        if k == len(tail):
            return i + 1
    return -1


def _doc_tables(
    text: str, ds: int, de: int, value: Any
) -> list[tuple[int, int, list[Any], list[str]]]:
    """(start, end, array, scalar lexemes) of every table in the document ``text[ds:de]``."""
    doc = text[ds:de]
    if type(value) is list and _is_table(value):
        return [(ds, de, value, SCALAR_FIND.findall(doc))]
    found = _find_tables(value)
    if not found:
        return []
    lexemes: list[str] = []
    for i, (parent, key, _) in enumerate(found):
        sentinel = f"{SENTINEL}{i}"
        parent[key] = sentinel
        lexemes.append(orjson.dumps(sentinel).decode())
    try:
        canon = orjson.dumps(value).decode()
    except orjson.JSONEncodeError:  # nested deeper than orjson renders
        return []
    finally:
        for parent, key, table in found:
            parent[key] = table
    canon_scalars = SCALAR_FIND.findall(canon)
    parts = SCALAR_SPLIT.split(doc)
    ends = offsets(parts)
    table_of = {lex: i for i, lex in enumerate(lexemes)}
    hits = list(compress(range(len(canon_scalars)), map(table_of.__contains__, canon_scalars)))
    order = [(idx, table_of[canon_scalars[idx]]) for idx in hits]
    if len(order) != len(lexemes):  # a string of the data looks like a sentinel
        return []
    sizes: list[tuple[int, str]] = []
    shift = 0
    for _, i in order:
        tparts = SCALAR_SPLIT.split(orjson.dumps(found[i][2]).decode())
        sizes.append((len(tparts) // 2, tparts[-1]))
        shift += len(tparts) // 2 - 1
    if len(canon_scalars) + shift != len(parts) // 2:
        return []  # duplicate keys (orjson merged them): leave the document alone
    out: list[tuple[int, int, list[Any], list[str]]] = []
    shift = 0
    for (idx, i), (size, tail) in zip(order, sizes, strict=True):
        j = idx + shift
        shift += size - 1
        seg = parts[2 * j]
        b = seg.rfind("{")
        a = seg.rfind("[", 0, b)
        if b < 0 or a < 0 or seg[a + 1 : b].strip(WS) or seg[b + 1 :].strip(WS):
            continue
        start = ds + ends[2 * j] - len(seg) + a
        seg2 = parts[2 * (j + size)]
        e = _consume(seg2, tail)
        if e < 0:
            continue
        end = ds + ends[2 * (j + size)] - len(seg2) + e
        out.append((start, end, found[i][2], parts[2 * j + 1 : 2 * (j + size) : 2]))
    return out


def _nested_rows(table: list[Any], scalars: list[str]) -> tuple[list[str], list[str]] | None:
    """(column lexemes, row pieces) of a table with nested cells, or None."""
    ncols = len(table[0])
    nrows = len(table)
    # The row keys, renamed to sentinels, tell which lexemes are row keys.
    sentinels = [f"\x00{i}" for i in range(ncols)]
    try:
        canon = orjson.dumps(
            [dict(zip(sentinels, row.values(), strict=True)) for row in table]
        ).decode()
        rows = "\n".join([orjson.dumps(list(row.values())).decode() for row in table])
    except orjson.JSONEncodeError:  # nested deeper than orjson renders
        return None
    canon_scalars = SCALAR_FIND.findall(canon)
    if len(canon_scalars) != len(scalars):
        return None
    key_lexemes = {orjson.dumps(s).decode() for s in sentinels}
    is_key = list(map(key_lexemes.__contains__, canon_scalars))
    keys = list(compress(scalars, is_key))
    cols = keys[:ncols]
    if len(keys) != ncols * nrows or keys != cols * nrows:
        return None
    values = list(compress(scalars, map(operator.not_, is_key)))
    block_parts = SCALAR_SPLIT.split(rows)
    if len(block_parts) != 2 * len(values) + 1:
        return None
    block_parts[1::2] = values
    return cols, block_parts


def encode_table(
    text: str, start: int, end: int, table: list[Any], scalars: list[str]
) -> tuple[str, int] | None:
    """The marker for the array ``text[start:end]`` (its value and scalar lexemes), or None."""
    layout = infer_layout(text, start, end)
    if layout is None:
        return None
    ncols = len(table[0])
    nrows = len(table)
    cell_types = {type(v) for row in table for v in row.values()}
    if list not in cell_types and dict not in cell_types:
        # Scalar cells only: lexemes alternate key, value.
        if len(scalars) != 2 * ncols * nrows:
            return None
        keys = scalars[0::2]
        cols = keys[:ncols]
        if keys != cols * nrows:
            return None
        block_parts = [""] * (2 * ncols * nrows + 1)
        block_parts[0::2] = row_segments(ncols, nrows)
        block_parts[1::2] = scalars[1::2]
    else:
        parts = _nested_rows(table, scalars)
        if parts is None:
            return None
        cols, block_parts = parts
    marker = table_marker(cols, nrows, layout, "".join(block_parts))
    try:
        if decode(marker) != text[start:end]:
            return None
    except ValueError:
        return None
    return marker, nrows


def _encode_unit(text: str, whole: bool, ctx: EngineContext) -> tuple[str, list[Rewrite]] | None:
    spans = list(doc_spans(text, whole))
    if not spans or LITERAL.search(text):
        return None
    found: list[Rewrite] = []
    for ds, de in spans:
        if de - ds < MIN_CHARS:
            continue
        value = loads_orjson(text[ds:de])
        if type(value) is not list and type(value) is not dict:
            continue
        for start, end, table, scalars in _doc_tables(text, ds, de, value):
            encoded = encode_table(text, start, end, table, scalars)
            if encoded is not None:
                found.append((start, end, encoded[0], encoded[1]))
    return splice_saving(text, found, ctx.tokens)
