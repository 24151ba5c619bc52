"""The JSON layout grammar of the ``[[json-table:...]]`` and ``[[json-min:...]]`` markers.

Written once, read by the JSON engines (to write markers) and by the
decoders (to restore texts).  It imports nothing from the engines.

Both engines rewrite a JSON text into a shorter form and must give back the
exact original bytes.  They never parse numbers or strings into Python values
to re-serialise them: every scalar keeps its original *lexeme* (``1.50``,
``1E+2``, ``-0``, ``12345678901234567890``, ``"\\u00e9"``, ``"\\/"``), and
the whitespace between tokens is described by a :class:`Layout` (indent unit,
base indentation, line ending, item and key separators) that the decoders
re-apply.  An engine only writes a marker after checking that decoding it
reproduces the original text exactly; texts in any other layout are left
alone.

Speed: everything runs at C speed through ``re`` and ``orjson``.  A JSON text
is cut into *scalars* (strings, numbers, ``true``/``false``/``null``) and the
*segments* between them (brackets, commas, colons, whitespace).  To render a
compact text in a layout, ``orjson`` renders the same structure canonically,
its segments are translated to the layout and its scalars are replaced by the
original lexemes.  A token loop (no recursion, any depth) is the fallback for
texts orjson cannot load (lone surrogate escapes, duplicate keys).

Layout attributes in markers (fixed order, defaults omitted):

``indent=N`` / ``indent=tab``
    one level is N spaces (a tab); absent: the JSON is on one line.
``depth=N`` / ``margin=N``
    continuation lines start with N extra indent units / N extra spaces (the
    value is nested in a bigger document, or sits in an indented block).
``eol=crlf``
    lines end with CR LF.
``item=", "``
    the item separator is ``", "`` (default ``","``; with ``indent`` the
    separator comes before the line break).
``key=": "``
    the key separator (default ``":"`` on one line, ``": "`` with ``indent``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

import orjson

__all__ = [
    "ATTRS_PATTERN",
    "SCALAR_FIND",
    "SCALAR_SPLIT",
    "STRING",
    "WS",
    "Layout",
    "Rewrite",
    "compact",
    "decode_markers",
    "doc_spans",
    "infer_layout",
    "load",
    "loads_orjson",
    "render",
    "render_canonical_parts",
    "split_top",
]

STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_BARE = r'[^ \t\r\n\[\]{},:"]+'
# Scalars (strings and bare words) with the segments between them.
SCALAR_SPLIT = re.compile(f"({STRING}|{_BARE})")
SCALAR_FIND = re.compile(f"{STRING}|{_BARE}")
# Everything but whitespace outside strings: joined, the compact text.
_COMPACT_FIND = re.compile(f'{STRING}|[^ \\t\\r\\n"]+')
# Tokens of a compact text, empty containers as one token.
_TOKENS = re.compile(f"{STRING}|\\[\\]|\\{{\\}}|[\\[\\]{{}},:]|{_BARE}")
# First separators of a text (strings skipped).
_SEPS = re.compile(f"{STRING}|( ?)([,:])( ?)")
_LEADINGWS = re.compile(r"[ \t\r\n]*")
_LINE_INDENT = re.compile(r"[ \t]*")
_NL_INDENT = re.compile(r"\n( *)")
# A fence line: indentation, fence, rest of the line (info string).
_FENCE_LINE = re.compile(r"^[ \t]*(`{3,}|~{3,})([^\n]*)$", re.M)
_INFO = re.compile(r"[ \t]*([A-Za-z0-9_.+-]*)")
_FENCE_INFOS = frozenset({"", "json"})
_KEYS = (":", ": ", " :", " : ")
WS = " \t\r\n"  # JSON whitespace
_ITEMS = (",", ", ")
MAX_INDENT = 16

ATTRS_PATTERN = (
    r"(?: indent=(\d{1,2}|tab))?(?: depth=(\d{1,4}))?(?: margin=(\d{1,3}))?"
    r'(?: eol=(crlf))?(?: item="(, )")?(?: key="( ?: ?)")?'
)


@dataclass(frozen=True, slots=True)
class Layout:
    """How a JSON value was laid out: enough to re-render it byte for byte."""

    indent: str | None = None  # one level; None: single line
    prefix: str = ""  # start of every continuation line (indented only)
    eol: str = "\n"
    item: str = ","
    key: str = ":"

    @property
    def canonical(self) -> bool:
        """Same segments as orjson's output (compact, or ``OPT_INDENT_2``)."""
        if self.indent is None:
            return self.item == "," and self.key == ":"
        return (
            self.indent == "  "
            and not self.prefix
            and self.eol == "\n"
            and self.item == ","
            and self.key == ": "
        )

    def newline(self, depth: int) -> str:
        if self.indent is None:
            return ""
        return self.eol + self.prefix + self.indent * depth

    def attrs(self) -> str:
        """Marker attributes (leading space included), defaults left out."""
        out: list[str] = []
        if self.indent is not None:
            unit = self.indent
            out.append(" indent=tab" if unit == "\t" else f" indent={len(unit)}")
            depth, margin = _split_prefix(self.prefix, unit)
            if depth:
                out.append(f" depth={depth}")
            if margin:
                out.append(f" margin={margin}")
            if self.eol == "\r\n":
                out.append(" eol=crlf")
        if self.item != ",":
            out.append(f' item="{self.item}"')
        if self.key != (":" if self.indent is None else ": "):
            out.append(f' key="{self.key}"')
        return "".join(out)

    @classmethod
    def from_groups(cls, groups: tuple[str | None, ...]) -> Layout:
        """Build from the six groups of :data:`ATTRS_PATTERN`."""
        indent_s, depth_s, margin_s, eol_s, item_s, key_s = groups
        if indent_s is None:
            if depth_s or margin_s or eol_s:
                raise ValueError("depth/margin/eol need indent")
            return cls(None, "", "\n", item_s or ",", ":" if key_s is None else key_s)
        unit = "\t" if indent_s == "tab" else " " * int(indent_s)
        prefix = " " * int(margin_s or 0) + unit * int(depth_s or 0)
        return cls(
            unit,
            prefix,
            "\r\n" if eol_s else "\n",
            item_s or ",",
            ": " if key_s is None else key_s,
        )

    def convert(self, segment: str) -> str:
        """Translate one segment of orjson's canonical output into this layout."""
        if self.indent is None:
            return segment.replace(",", self.item).replace(":", self.key)
        eol, prefix, unit = self.eol, self.prefix, self.indent
        out = _NL_INDENT.sub(lambda m: eol + prefix + unit * (len(m.group(1)) // 2), segment)
        return out.replace(": ", "\x01").replace(",", self.item).replace("\x01", self.key)


def _split_prefix(prefix: str, unit: str) -> tuple[int, int]:
    """(depth, margin) with ``prefix == " " * margin + unit * depth``."""
    if unit and prefix == unit * (len(prefix) // len(unit)):
        return len(prefix) // len(unit), 0
    if not prefix.strip(" "):
        return 0, len(prefix)
    depth = 0
    rest = prefix
    if unit:
        while rest.endswith(unit):
            rest = rest[: -len(unit)]
            depth += 1
    if rest.strip(" "):
        raise ValueError("prefix is not spaces plus indent units")
    return depth, len(rest)


# -- finding JSON ------------------------------------------------------------


# A tool result whose last lines are one JSON document after lines that are not JSON (``curl
# -v``'s request and response headers, then the body; a script's banner, then its JSON): the
# document is a span too.  Tried from the first lines that start with ``{`` or ``[``: at most
# this many (a JSON-lines log fails on each, after its first object)
TRAILING_TRIES = 8
TRAILING_MIN_CHARS = 400
_JSON_LINE_START = re.compile(r"\n(?=[\[{])")


def _trailing_document(text: str) -> tuple[int, int] | None:
    """The span of a JSON object or array that runs from a line's start to the end of
    ``text``, or None."""
    end = len(text.rstrip(" \t\r\n"))
    if end < TRAILING_MIN_CHARS or text[end - 1] not in "]}":
        return None
    for tries, m in enumerate(_JSON_LINE_START.finditer(text, 0, end)):
        if tries >= TRAILING_TRIES:
            return None
        start = m.end()
        if end - start < TRAILING_MIN_CHARS:
            return None
        try:
            value = orjson.loads(text[start:end])
        except orjson.JSONDecodeError:
            continue
        return (start, end) if isinstance(value, (list, dict)) else None
    return None


def doc_spans(text: str, whole: bool) -> Iterator[tuple[int, int]]:
    """Spans of candidate JSON values: the whole (stripped) text, or a document that ends
    it after lines of other text (:func:`_trailing_document`), or fenced blocks.

    Only spans starting with ``[`` or ``{`` are given.
    """
    if whole:
        start = _LEADINGWS.match(text).end()  # type: ignore[union-attr]
        if start < len(text) and text[start] in "[{":
            yield start, len(text.rstrip(" \t\r\n"))
            # valid JSON has no line starting with a fence: both cannot overlap
        elif "```" not in text and "~~~" not in text:
            trailing = _trailing_document(text)
            if trailing is not None:
                yield trailing
    if "```" not in text and "~~~" not in text:
        return
    for a, b in _fenced_bodies(text):
        start = _LEADINGWS.match(text, a, b).end()  # type: ignore[union-attr]
        if start >= b or text[start] not in "[{":
            continue
        yield start, len(text[start:b].rstrip(" \t\r\n")) + start


def _fenced_bodies(text: str) -> Iterator[tuple[int, int]]:
    """Spans of the bodies of closed ```` ``` ````/``~~~`` blocks whose info is empty or json.

    One pass over the fence lines (linear: no backtracking between an
    opening fence and its closing one).  A block closes at the first fence
    line of the same character, at least as long, with nothing after it.
    """
    fence = ""
    info_ok = False
    body = 0
    for m in _FENCE_LINE.finditer(text):
        mark, rest = m.group(1), m.group(2)
        if not fence:
            if mark[0] == "`" and "`" in rest:
                continue  # inline code, not a fence
            fence = mark
            info_ok = _INFO.match(rest).group(1).lower() in _FENCE_INFOS  # type: ignore[union-attr]
            body = m.end() + 1
        elif mark[0] == fence[0] and len(mark) >= len(fence) and not rest.strip(" \t\r"):
            if info_ok and body <= m.start():
                yield body, m.start()
            fence = ""


def loads_orjson(span: str) -> Any:
    """orjson's value of ``span``, or None when orjson rejects it."""
    try:
        return orjson.loads(span)
    except orjson.JSONDecodeError:
        return None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def load(span: str) -> Any:
    """The value of a JSON text (orjson, then the stdlib for lone surrogates), or None."""
    try:
        return orjson.loads(span)
    except orjson.JSONDecodeError as exc:
        if "surrogate" not in str(exc):
            return None
    try:
        return json.loads(span, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return None


def compact(span: str) -> str:
    """``span`` without whitespace outside strings (lexemes untouched)."""
    return "".join(_COMPACT_FIND.findall(span))


# -- layouts -----------------------------------------------------------------


def infer_layout(text: str, start: int, end: int) -> Layout | None:
    """Guess the layout of the JSON value at ``text[start:end]``; None if unsupported.

    The guess is checked by the caller (render, compare); this only needs to
    be right for the layouts the engines support.
    """
    if end - start < 2:
        return None
    line_start = text.rfind("\n", 0, start) + 1
    prefix = _LINE_INDENT.match(text, line_start, start).group(0)  # type: ignore[union-attr]
    nxt = text[start + 1]
    item: str | None = None
    key: str | None = None
    limit = min(end, start + 65536)
    for m in _SEPS.finditer(text, start, limit):
        sep = m.group(2)
        if sep is None:
            continue
        if sep == "," and item is None:
            if m.group(1):
                return None
            item = "," + m.group(3)
        elif sep == ":" and key is None:
            key = m.group(1) + ":" + m.group(3)
        if item is not None and key is not None:
            break
    if nxt == "\n" or text.startswith("\r\n", start + 1):
        eol = "\n" if nxt == "\n" else "\r\n"
        line = start + 1 + len(eol)
        lead = _LINE_INDENT.match(text, line, end).group(0)  # type: ignore[union-attr]
        if not lead.startswith(prefix):
            return None
        unit = lead[len(prefix) :]
        if len(unit) > MAX_INDENT or (unit and unit != " " * len(unit) and unit != "\t"):
            return None
        layout = Layout(unit, prefix, eol, item or ",", key if key is not None else ": ")
        try:
            _split_prefix(prefix, unit)
        except ValueError:
            return None
    else:
        layout = Layout(None, "", "\n", item or ",", key if key is not None else ":")
    if layout.item not in _ITEMS or layout.key not in _KEYS:
        return None
    return layout


def render(text: str, layout: Layout, value: Any = None) -> str:
    """Render a compact JSON text (original lexemes) in ``layout``.

    ``value``: the text already loaded, when the caller has it (saves a parse).
    """
    if layout.indent is None:
        if layout.canonical:
            return text
        return _convert_segments(SCALAR_SPLIT.split(text), layout)
    try:
        loaded = orjson.loads(text) if value is None else value
        canon = orjson.dumps(loaded, option=orjson.OPT_INDENT_2).decode()
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):  # lone surrogates, depth > 254
        return _render_loop(text, layout)
    parts = SCALAR_SPLIT.split(canon)
    scalars = SCALAR_FIND.findall(text)
    if len(parts) != 2 * len(scalars) + 1:  # duplicate keys: orjson merged them
        return _render_loop(text, layout)
    parts[1::2] = scalars
    return render_canonical_parts(parts, layout)


def render_canonical_parts(parts: list[str], layout: Layout) -> str:
    """Finish a render from the scalar-split parts of orjson's canonical text.

    ``parts`` come from ``SCALAR_SPLIT.split`` of ``orjson.dumps(value)``
    (``OPT_INDENT_2`` when ``layout.indent`` is set), with the original
    lexemes put in the scalar slots; the segments take the layout.
    """
    if layout.canonical:
        return "".join(parts)
    return _convert_segments(parts, layout)


def _convert_segments(parts: list[str], layout: Layout) -> str:
    segments = parts[0::2]
    table = {s: layout.convert(s) for s in set(segments)}
    parts[0::2] = map(table.__getitem__, segments)
    return "".join(parts)


def _render_loop(text: str, layout: Layout) -> str:
    """Token-loop renderer (iterative, any depth) for what orjson cannot load."""
    item, key = layout.item, layout.key
    lines: list[str] = [layout.newline(0)]
    out: list[str] = []
    append = out.append
    depth = 0
    for tok in _TOKENS.findall(text):
        c = tok[0]
        if (c == "[" or c == "{") and len(tok) == 1:
            depth += 1
            if depth == len(lines):
                lines.append(layout.newline(depth))
            append(tok)
            append(lines[depth])
        elif c == "]" or c == "}":
            depth -= 1
            if depth < 0:
                raise ValueError("unbalanced JSON text")
            append(lines[depth])
            append(tok)
        elif c == ",":
            append(item)
            append(lines[depth])
        elif c == ":":
            append(key)
        else:
            append(tok)
    return "".join(out)


def split_top(text: str) -> list[str]:
    """Top-level items of a compact JSON array (or members of an object)."""
    toks = _TOKENS.findall(text)
    if len(toks) < 2 or toks[0] not in ("[", "{") or toks[-1] != ("]" if toks[0] == "[" else "}"):
        raise ValueError(f"not a JSON container: {text[:40]!r}")
    items: list[str] = []
    current: list[str] = []
    depth = 0
    for tok in toks[1:-1]:
        c = tok[0]
        if (c == "[" or c == "{") and len(tok) == 1:
            depth += 1
        elif c == "]" or c == "}":
            depth -= 1
        elif c == "," and depth == 0:
            items.append("".join(current))
            current = []
            continue
        current.append(tok)
    if depth != 0:
        raise ValueError("unbalanced JSON text")
    if current or items:
        items.append("".join(current))
    return items


def offsets(parts: list[str]) -> list[int]:
    """End offset of every part (for positions of scalars and segments)."""
    return list(accumulate(map(len, parts)))


# -- markers -------------------------------------------------------------------

# ``(start, end, marker, count)``: the document ``text[start:end]`` of a unit's
# text and the marker that replaces it (``count``: rows of a table, else 1).
Rewrite = tuple[int, int, str, int]


def decode_markers(
    text: str,
    opener: str,
    closer: str,
    header: re.Pattern[str],
    restore: Callable[[re.Match[str], str], str | None],
) -> str:
    """Replace every marker (``header``, body, ``closer``) by ``restore(header, body)``.

    A marker whose header does not match or whose body ``restore`` rejects
    (None) stays as text; after a header without ``closer`` nothing more is
    decoded.
    """
    pos = text.find(opener)
    if pos < 0:
        return text
    out: list[str] = []
    cursor = 0
    while pos >= 0:
        m = header.match(text, pos)
        if m is not None:
            end = text.find(closer, m.end())
            if end < 0:
                break  # no end marker after this point: nothing more to decode
            restored = restore(m, text[m.end() : end])
            if restored is not None:
                out.append(text[cursor:pos])
                out.append(restored)
                cursor = end + len(closer)
                pos = text.find(opener, cursor)
                continue
        pos = text.find(opener, pos + 1)
    out.append(text[cursor:])
    return "".join(out)
