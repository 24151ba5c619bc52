"""The ``[[json-table:v1 ...]]`` marker: its grammar, its writer and its decoder.

``[[json-table:v1 columns=["id","name"] rows=2 LAYOUT]]``, one compact JSON
array per row line, ``[[/json-table]]``: an array of objects with the same
keys in the same order, keys written once.  ``LAYOUT`` is the attribute list of
:mod:`workers.markers.jsonlayout`.  Every key and value lexeme is kept as
written, so decoding gives back the original bytes.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from workers.core.memo import text_memo
from workers.markers.jsonlayout import (
    ATTRS_PATTERN,
    SCALAR_FIND,
    SCALAR_SPLIT,
    Layout,
    decode_markers,
    load,
    render,
    render_canonical_parts,
    split_top,
)

__all__ = [
    "CLOSE",
    "LITERAL",
    "OPEN",
    "SENTINEL",
    "TABLE_HEADER",
    "decode",
    "render_table",
    "row_segments",
    "table_marker",
]

OPEN = "[[json-table:v1 "
CLOSE = "\n[[/json-table]]"
_KEY = r'"[^"\\\n]*(?:\\[^\n][^"\\\n]*)*"'  # a key lexeme (one line)
TABLE_HEADER = re.compile(
    rf"\[\[json-table:v1 columns=(\[(?:{_KEY}(?:,{_KEY})*)?\]) rows=(\d{{1,9}})"
    + ATTRS_PATTERN
    + r"\]\]\n"
)
# Input that already looks like a JSON marker is never touched.
LITERAL = re.compile(r"\[\[/?json-(?:table|min)[:\]]")
SENTINEL = "\x00\x01ctxpress-table-"


def table_marker(cols: list[str], nrows: int, layout: Layout, block: str) -> str:
    """The marker for a table: column key lexemes, row count, layout and row lines."""
    return f"{OPEN}columns=[{','.join(cols)}] rows={nrows}{layout.attrs()}]]\n{block}{CLOSE}"


@text_memo(chars=16_000_000)  # pure; the gate and later engines decode the same texts
def decode(text: str) -> str:
    """Replace every ``[[json-table:v1 ...]]`` block with the JSON it came from.

    Text that only looks like a marker (bad header, rows or end) stays as it is.
    """
    return decode_markers(text, OPEN, CLOSE, TABLE_HEADER, _restore)


def _restore(header: re.Match[str], block: str) -> str | None:
    """The JSON text of one table block, or None when it is not one we wrote."""
    rows = load("[" + block.replace("\n", ",") + "]")
    if rows is None:
        return None
    try:
        return render_table(
            SCALAR_FIND.findall(header.group(1)),
            int(header.group(2)),
            block,
            Layout.from_groups(header.groups()[2:]),
            rows,
        )
    except ValueError:
        return None


def row_segments(ncols: int, nrows: int) -> list[str]:
    inner = [","] * (ncols - 1)
    return ["[", *inner] + (["]\n[", *inner] * (nrows - 1)) + ["]"]


def render_table(cols: list[str], nrows: int, block: str, layout: Layout, rows: Any) -> str:
    """The JSON text of a table (column key lexemes, row lines) in ``layout``.

    ``rows`` is the block loaded as one JSON array (the caller has checked it loads).
    """
    ncols = len(cols)
    if not ncols or nrows < 1:
        raise ValueError("json-table without columns or rows")
    parts = SCALAR_SPLIT.split(block)
    if len(parts) == 2 * ncols * nrows + 1 and parts[0::2] == row_segments(ncols, nrows):
        # Scalar cells only: interleave fixed pieces and the values (C speed).
        key, item = layout.key, layout.item
        nl1, nl2 = layout.newline(1), layout.newline(2)
        inner = [item + nl2 + c + key for c in cols[1:]]
        head = "[" + nl1 + "{" + nl2 + cols[0] + key
        boundary = nl1 + "}" + item + nl1 + "{" + nl2 + cols[0] + key
        tail = nl1 + "}" + layout.newline(0) + "]"
        parts[0::2] = [head, *inner] + [boundary, *inner] * (nrows - 1) + [tail]
        return "".join(parts)
    fast = _render_nested(cols, nrows, rows, layout, parts[1::2])
    if fast is not None:
        return fast
    lines = block.split("\n")
    if len(lines) != nrows:
        raise ValueError(f"json-table announces {nrows} rows, has {len(lines)}")
    objects: list[str] = []
    for line in lines:
        cells = split_top(line) if line.startswith("[") else []
        if len(cells) != ncols:
            raise ValueError(f"json-table row does not have {ncols} cells: {line[:60]!r}")
        objects.append(
            "{" + ",".join([k + ":" + c for k, c in zip(cols, cells, strict=True)]) + "}"
        )
    return render("[" + ",".join(objects) + "]", layout)


def _render_nested(
    cols: list[str], nrows: int, rows: Any, layout: Layout, values: list[str]
) -> str | None:
    """The JSON text of a table with nested cells, at C speed; None to take the slow path.

    A canonical dump of the loaded ``rows`` as objects (keys renamed to
    sentinels; indented when the layout is) gives the structure, and the
    scalars are put back as written: each key slot gets its column lexeme,
    every other slot the next lexeme of the block (``values``, the block's
    scalars in order).  The segments then take the layout, as :func:`render`
    does.  Anything unexpected (a row of the wrong width, a value that reads
    like a sentinel, values orjson cannot dump) returns None.
    """
    ncols = len(cols)
    if (
        type(rows) is not list
        or len(rows) != nrows
        or not all(type(r) is list and len(r) == ncols for r in rows)
    ):
        return None
    sentinels = [f"{SENTINEL}{i}" for i in range(ncols)]
    option = orjson.OPT_INDENT_2 if layout.indent is not None else None
    try:
        canon = orjson.dumps(
            [dict(zip(sentinels, row, strict=True)) for row in rows], option=option
        ).decode()
    except orjson.JSONEncodeError:  # nested deeper than orjson renders
        return None
    parts = SCALAR_SPLIT.split(canon)
    key_lexemes = {orjson.dumps(k).decode() for k in sentinels}
    is_key = list(map(key_lexemes.__contains__, parts[1::2]))
    if sum(is_key) != ncols * nrows or len(is_key) - ncols * nrows != len(values):
        return None
    keys = iter(cols * nrows)
    vals = iter(values)
    parts[1::2] = [next(keys) if k else next(vals) for k in is_key]
    return render_canonical_parts(parts, layout)
