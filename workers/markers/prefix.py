"""``[[prefix:v1 "PREFIX" lines=N]]`` ... ``[[/prefix]]``: lines that all start alike.

A run of lines that share a prefix (a log burst's ``2026-12-03 13:39:``, cargo's
``   Compiling ``, pip's ``Requirement already satisfied: ``, ``ls -l``'s ``-rw-r--r-- 1
root root ``) is written once as a header, then the lines without it::

    [[prefix:v1 "   Compiling " lines=3]]
    serde v1.0.188
    libc v0.2.149
    ctxpress-demo v0.1.0 (/src/demo)
    [[/prefix]]

The prefix is a JSON string (any character, quotes and backslashes escaped); ``lines``
counts the lines between the header and the closing line.  :func:`decode` puts the
prefix back on each of them; a header whose count, closing line or string does not read
right stays literal text.
"""

from __future__ import annotations

import json
import re

from workers.markers.blocks import decode_blocks

__all__ = ["CLOSE", "OPEN", "block", "decode"]

OPEN = "[[prefix:v1 "
CLOSE = "[[/prefix]]"
_HEADER = re.compile(
    r'\[\[prefix:v1 (?P<prefix>"(?:[^"\\\n]|\\.){1,400}") lines=(?P<count>[1-9]\d{0,6})\]\]'
)


def header(prefix: str, count: int) -> str:
    return f"{OPEN}{json.dumps(prefix, ensure_ascii=False)} lines={count}]]"


def block(prefix: str, lines: list[str]) -> list[str]:
    """The lines of the block that stands for ``lines`` (each starts with ``prefix``)."""
    return [header(prefix, len(lines)), *(line[len(prefix) :] for line in lines), CLOSE]


def decode(text: str) -> str:
    """``text`` with every well-formed prefix block written out again."""
    return decode_blocks(text, OPEN, CLOSE, _HEADER, _expand)


def _expand(header: re.Match[str], body: list[str]) -> list[str] | None:
    prefix = _prefix(header.group("prefix"))
    return None if prefix is None else [prefix + line for line in body]


def _prefix(literal: str) -> str | None:
    try:
        value = json.loads(literal)
    except ValueError:
        return None
    return value if isinstance(value, str) and value and "\n" not in value else None
