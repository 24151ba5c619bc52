"""A one-line JSON object as written, cut into its keys and its raw values.

``{"time":"09:14:03","level":"INFO","n":{"a":1}}`` is
``['{"time":', '"09:14:03"', ',"level":', '"INFO"', ',"n":', '{"a":1}', '}']``: the text
before each value (the brace or comma, the key, the colon and any spaces) and each top-level
value as written (a string with its quotes and escapes, a number, a nested object or array
whole).  ``"".join(parts)`` is the line.  A line that is not one JSON object of this shape
(a bare value, an array, a trailing comma, text after the closing brace) gives None; the
cut only reads the JSON's structure, it never decodes a value.
"""

from __future__ import annotations

__all__ = ["members"]

_SPACE = " \t"


def _string_end(line: str, at: int) -> int:
    """Index just past the string that starts with the quote at ``at`` (-1: unterminated)."""
    i = at + 1
    n = len(line)
    while i < n:
        c = line[i]
        if c == "\\":
            i += 2
            continue
        if c == '"':
            return i + 1
        i += 1
    return -1


def _value_end(line: str, at: int) -> int:
    """Index just past the value that starts at ``at`` (-1: none that ends on this line)."""
    n = len(line)
    if at >= n:
        return -1
    c = line[at]
    if c == '"':
        return _string_end(line, at)
    if c in "{[":
        depth = 0
        i = at
        while i < n:
            c = line[i]
            if c == '"':
                i = _string_end(line, i)
                if i < 0:
                    return -1
                continue
            if c in "{[":
                depth += 1
            elif c in "}]":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return -1
    i = at
    while i < n and line[i] not in ",}]" and line[i] not in _SPACE:
        i += 1
    return i if i > at else -1


def _skip_space(line: str, at: int) -> int:
    n = len(line)
    while at < n and line[at] in _SPACE:
        at += 1
    return at


def members(line: str) -> list[str] | None:
    """The line cut as the module says, or None."""
    if not line.startswith("{") or not line.endswith("}"):
        return None
    parts: list[str] = []
    start = 0  # where the text before the next value starts
    i = _skip_space(line, 1)
    n = len(line)
    while True:
        if i >= n or line[i] != '"':
            return None
        i = _string_end(line, i)
        if i < 0:
            return None
        i = _skip_space(line, i)
        if i >= n or line[i] != ":":
            return None
        i = _skip_space(line, i + 1)
        end = _value_end(line, i)
        if end < 0:
            return None
        parts += (line[start:i], line[i:end])
        start = end
        i = _skip_space(line, end)
        if i >= n:
            return None
        if line[i] == "}":
            if i != n - 1:
                return None
            parts.append(line[start:])
            return parts
        if line[i] != ",":
            return None
        i = _skip_space(line, i + 1)
