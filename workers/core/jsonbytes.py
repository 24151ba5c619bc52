"""Byte-level work on one JSON text: where its strings are, and how each was spelled.

``string_spans`` finds the byte span of the string values at given paths
without re-serialising anything: one C-speed regex walks the string tokens and
the structural characters in document order (outside strings a JSON text has
no ``"``, so every match is a real token), and a small state machine keeps the
path.  A key that occurs twice in one object maps to its last occurrence, the
value every JSON parser here (orjson, the stdlib) keeps.

A JSON string can be spelled many ways (``"é"``, ``"\\u00e9"``, ``"\\u00E9"``;
``"/"`` or ``"\\/"``).  ``spelling_of`` names the style that reproduces one
string token exactly, ``encode_string`` writes a text in a style:

- ``utf8``: what orjson and ``json.dumps(ensure_ascii=False)`` write;
- ``ascii``: ``json.dumps`` with its default ``ensure_ascii`` (``\\uXXXX``,
  surrogate pairs beyond the BMP, DEL escaped);

with modifiers joined by ``+``: ``upper`` (upper-case hex digits in ``\\u``
escapes, as .NET and Java write), ``slash`` (``\\/``, as PHP writes) and
``html`` (``<``, ``>``, ``&``, U+2028 and U+2029 as ``\\u`` escapes, as Go
writes).  A token no style reproduces has no spelling (``None``); the caller
keeps its bytes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable
from functools import lru_cache

import orjson

__all__ = ["Path", "encode_string", "spelling_of", "splice", "string_spans"]

Path = tuple[str | int, ...]

# A string token (unrolled loop, possessive: C speed on long strings) or one
# structural character.
_TOKEN = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"|[\[\]{},]', re.DOTALL)
_QUOTE, _COMMA, _OPEN_OBJ = 0x22, 0x2C, 0x7B
_OPENING = (0x7B, 0x5B)


def _key(token: bytes) -> str:
    if b"\\" in token:
        key: str = orjson.loads(token)
        return key
    return token[1:-1].decode("utf-8")


def string_spans(text: bytes, paths: Collection[Path]) -> dict[Path, tuple[int, int]]:
    """Byte spans (start, end; quotes included) of the string values at ``paths``.

    ``text`` must be valid JSON (decoded before).  Paths that do not address a
    string are absent from the result.  Subtrees off every path are skipped by
    bracket counting alone.
    """
    targets = set(paths)
    if not targets:
        return {}
    prefixes: set[Path] = {p[:i] for p in targets for i in range(len(p))}
    spans: dict[Path, tuple[int, int]] = {}
    stack: list[tuple[Path, bool, str | int]] = []
    path: Path = ()
    in_object = False
    member: str | int = 0  # the current key (object) or index (array)
    expect_key = False
    started = False
    skip = 0  # depth inside a subtree no target lies in
    for match in _TOKEN.finditer(text):
        start = match.start()
        char = text[start]
        if skip:
            if char in _OPENING:
                skip += 1
            elif char != _QUOTE and char != _COMMA:
                skip -= 1
            continue
        if char == _QUOTE:
            if expect_key:
                member = _key(match.group())
                expect_key = False
            else:
                here = (*path, member)
                if here in targets:
                    spans[here] = (start, match.end())
        elif char == _COMMA:
            if in_object:
                expect_key = True
            else:
                member = int(member) + 1
        elif char in _OPENING:
            if started:
                child = (*path, member)
            else:
                child, started = (), True
            if child not in prefixes:
                skip = 1
                continue
            stack.append((path, in_object, member))
            path, in_object, member = child, char == _OPEN_OBJ, 0
            expect_key = in_object
        else:  # a closing bracket
            if not stack:
                break  # the end of the top-level value
            path, in_object, member = stack.pop()
            expect_key = False
    return spans


def splice(text: bytes, replacements: Iterable[tuple[int, int, bytes]]) -> bytes:
    """``text`` with each (start, end) span replaced; spans must not overlap."""
    parts: list[bytes] = []
    at = 0
    for start, end, new in sorted(replacements):
        parts.append(text[at:start])
        parts.append(new)
        at = end
    parts.append(text[at:])
    return b"".join(parts)


_ESCAPE = re.compile(r"\\(u[0-9a-f]{4}|.)", re.DOTALL)
_HTML = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}
_SEPARATORS = {"\u2028": "\\u2028", "\u2029": "\\u2029"}
_MODIFIERS = frozenset({"upper", "slash", "html"})


@lru_cache(maxsize=64)
def _style(style: str) -> tuple[bool, bool, bool, bool]:
    base, *mods = style.split("+")
    if base not in ("utf8", "ascii") or not _MODIFIERS.issuperset(mods):
        raise ValueError(f"unknown string spelling {style!r}")
    return base == "ascii", "upper" in mods, "slash" in mods, "html" in mods


def _upper(match: re.Match[str]) -> str:
    escape = match.group(0)
    return "\\u" + escape[2:].upper() if escape[1] == "u" else escape


def encode_string(text: str, style: str = "utf8") -> bytes:
    """The JSON string token of ``text`` (quotes included) in ``style``."""
    ascii_only, upper, slash, html = _style(style)
    if not (upper or slash or html):
        return json.dumps(text).encode("ascii") if ascii_only else orjson.dumps(text)
    out = json.dumps(text) if ascii_only else orjson.dumps(text).decode("utf-8")
    if html:
        for char, escape in (_HTML if ascii_only else {**_HTML, **_SEPARATORS}).items():
            out = out.replace(char, escape)
    if slash:
        out = out.replace("/", "\\/")
    if upper:
        out = _ESCAPE.sub(_upper, out)
    return out.encode("utf-8")


_UPPER_HEX = re.compile(rb"\\u(?=[0-9a-fA-F]{0,3}[A-F])[0-9a-fA-F]{4}")
_DEL_ESCAPE = re.compile(rb"\\u007[fF]")
_HTML_ESCAPE = re.compile(rb"\\u00(?:3[ce]|26)|\\u202[89]", re.IGNORECASE)


def spelling_of(text: str, token: bytes) -> str | None:
    """The style whose :func:`encode_string` of ``text`` is ``token``, or None."""
    if orjson.dumps(text) == token:
        return "utf8"
    ascii_only = token.isascii() and not text.isascii()
    if not ascii_only and _DEL_ESCAPE.search(token):
        ascii_only = True  # only ensure_ascii escapes DEL
    mods = [
        name
        for name, present in (
            ("upper", _UPPER_HEX.search(token) is not None),
            ("slash", b"\\/" in token),
            ("html", _HTML_ESCAPE.search(token) is not None),
        )
        if present
    ]
    style = "+".join(["ascii" if ascii_only else "utf8", *mods])
    if style != "utf8" and encode_string(text, style) == token:
        return style
    return None
