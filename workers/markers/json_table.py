"""The ``[[json-table:v1 ...]]`` marker: its grammar, its writer and its decoder.

``[[json-table:v1 columns=["id","name"] rows=2]]``, one compact JSON array per
row line, ``[[/json-table]]``: an array of objects with the same keys in the
same order, keys written once.  Every key and value lexeme is kept as written,
so decoding gives back the original bytes.

The visible header is exactly the plain form other pipelines decode.  How the
original was laid out (the attribute list of :mod:`workers.markers.jsonlayout`:
``indent=2 depth=1 item=", "`` ...) is out of band: the engine writes the
attributes after ``rows=N`` (its decode check needs them), and as soon as the
pipeline has accepted its changes it moves them (:func:`take_layouts`) into
the record's ``compression`` manifest, one entry per table keyed by the unit
and a digest of the plain header line (:func:`table_digest`).  :func:`decode_with` re-applies them.  A layout entry
can only choose JSON whitespace and separators between the tokens of a table
the unit's text holds: every lexeme comes from the visible marker.  Markers
with the attributes inline (records written before, and tables kept inside a
stash) still decode.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
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
    "DIGEST_HEX",
    "LITERAL",
    "MAX_PREFIX",
    "OPEN",
    "SENTINEL",
    "TABLE_HEADER",
    "decode",
    "decode_with",
    "parse_layout",
    "render_table",
    "row_segments",
    "splice_layouts",
    "table_digest",
    "table_marker",
    "take_layouts",
]

OPEN = "[[json-table:v1 "
CLOSE = "\n[[/json-table]]"
_KEY = r'"[^"\\\n]*(?:\\[^\n][^"\\\n]*)*"'  # a key lexeme (one line)
TABLE_HEADER = re.compile(
    rf"\[\[json-table:v1 columns=(\[(?:{_KEY}(?:,{_KEY})*)?\]) rows=(\d{{1,9}})"
    + ATTRS_PATTERN
    + r"\]\]\n"
)
# Input that already looks like a JSON marker changes only where expand gives it back.
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


def decode_with(text: str, layouts: Mapping[str, str]) -> str:
    """:func:`decode`, with the out-of-band layouts of the text's unit.

    ``layouts``: :func:`table_digest` of a plain header -> its attribute list
    (as :func:`take_layouts` gives them).  A plain marker whose digest is not
    there, or whose attributes do not parse (:func:`parse_layout`), decodes to
    compact JSON; a marker with inline attributes keeps them.
    """
    if not layouts:
        return decode(text)

    def restore(header: re.Match[str], block: str) -> str | None:
        layout = None
        if not any(header.groups()[2:]):
            attrs = layouts.get(table_digest(header.group(0)))
            layout = None if attrs is None else parse_layout(attrs)
        return _restore(header, block, layout)

    return decode_markers(text, OPEN, CLOSE, TABLE_HEADER, restore)


def _restore(header: re.Match[str], block: str, layout: Layout | None = None) -> str | None:
    """The JSON text of one table block, or None when it is not one we wrote."""
    rows = load("[" + block.replace("\n", ",") + "]")
    if rows is None:
        return None
    try:
        return render_table(
            SCALAR_FIND.findall(header.group(1)),
            int(header.group(2)),
            block,
            Layout.from_groups(header.groups()[2:]) if layout is None else layout,
            rows,
        )
    except ValueError:
        return None


# -- layout out of band ----------------------------------------------------------

DIGEST_HEX = 12  # hex digits of a table digest (per unit: only whitespace rides on it)
MAX_PREFIX = 1024  # longest continuation-line prefix an out-of-band layout may give
_ATTRS = re.compile(ATTRS_PATTERN)


def table_digest(header: str) -> str:
    """The key of a table's layout: a digest of its plain header line (columns, rows).

    Only the header: a lossy engine may stash some of the rows, and what expand
    sees once the stashes are back is the same header over the original rows.
    """
    data = header.encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=DIGEST_HEX // 2).hexdigest()


def parse_layout(attrs: str) -> Layout | None:
    """The layout of an out-of-band attribute list (``indent=2 depth=1``), or None.

    Only the grammar of :data:`ATTRS_PATTERN` (whole, non-empty) is accepted,
    with continuation lines at most :data:`MAX_PREFIX` characters in: a
    layout gives whitespace and separators, nothing else.
    """
    m = _ATTRS.fullmatch(" " + attrs)
    if m is None or not attrs:
        return None
    try:
        layout = Layout.from_groups(m.groups())
    except ValueError:
        return None
    return layout if len(layout.prefix) <= MAX_PREFIX else None


def take_layouts(text: str, others: Iterable[str] = ()) -> tuple[str, dict[str, str]]:
    """``text`` with every table header's layout attributes taken out, and those layouts.

    Returns the text with plain headers and :func:`table_digest` -> attribute
    list (no leading space) for every table that had any.  A table keeps its
    attributes inline when taking them would be ambiguous: another table with
    the same plain header and another layout in ``text`` or in ``others``
    (the texts expand may splice into it: the record's stashes), or a layout
    beyond what :func:`parse_layout` accepts.
    """
    if OPEN not in text:
        return text, {}
    layouts: dict[str, str] = {}
    conflicts: set[str] = set()
    plain_of: list[tuple[re.Match[str], str]] = []
    for m in _headers(text):
        attrs = m.group(0)[len(_plain_header(m)) - 2 : -3]  # no leading space
        digest = table_digest(_plain_header(m))
        if attrs:
            plain_of.append((m, digest))
        if layouts.setdefault(digest, attrs) != attrs:
            conflicts.add(digest)
    if not plain_of:
        return text, {}
    for other in others:
        for m in _headers(other):
            digest = table_digest(_plain_header(m))
            attrs = m.group(0)[len(_plain_header(m)) - 2 : -3]
            if layouts.get(digest, attrs) != attrs:
                conflicts.add(digest)
    return splice_layouts(text, plain_of, layouts, conflicts, _plain_header)


def splice_layouts(
    text: str,
    found: Sequence[tuple[re.Match[str], str]],
    layouts: Mapping[str, str],
    conflicts: set[str],
    plain: Callable[[re.Match[str]], str],
) -> tuple[str, dict[str, str]]:
    """The end of a ``take_layouts`` (this module's, :mod:`workers.markers.json_min`'s).

    ``found``: (header match, digest) of the headers with attributes, in order;
    ``layouts``: digest -> attribute list; ``conflicts``: digests with two layouts.
    A layout goes out of band when its digest has no conflict and its attributes
    read back the same (:func:`parse_layout`); the headers of those are written
    ``plain(match)``.  Returns the text and the layouts taken.
    """
    taken = {
        d: a
        for d, a in layouts.items()
        if d not in conflicts
        and (layout := parse_layout(a)) is not None
        # the grammar writes each layout one way: its attributes read back the same
        and layout.attrs() == " " + a
    }
    if not taken:
        return text, {}
    out: list[str] = []
    cursor = 0
    for m, digest in found:
        if digest in taken:
            out.append(text[cursor : m.start()])
            out.append(plain(m))
            cursor = m.end()
    out.append(text[cursor:])
    return "".join(out), taken


def _headers(text: str) -> Iterator[re.Match[str]]:
    """Every table header of ``text``.  Its end line need not be visible: a lossy engine
    may have stashed it, and expand decodes the table once the stash is back."""
    return TABLE_HEADER.finditer(text) if OPEN in text else iter(())


def _plain_header(m: re.Match[str]) -> str:
    return f"{OPEN}columns={m.group(1)} rows={m.group(2)}]]\n"


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
