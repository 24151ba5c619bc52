"""``[[template:v1 "TEMPLATE" lines=N]]`` ... ``[[/template]]``: lines of one template.

A run of lines that say the same thing with other values (a log's ``synced acct_751
balance=4901 cents in 334 ms``, go test's ``--- PASS: TestRound/v374_s5 (0.00s)``) is
written once as a template, where ``{}`` stands for a value, then one row per line: its
values, separated by tabs::

    [[template:v1 "2026-12-03 10:55:{} INFO synced {} balance={} cents" lines=3]]
    48	acct_751	4901
    50	acct_687	3471
    50	acct_546	4238
    [[/template]]

The template is a JSON string (any character, quotes and backslashes escaped) in which a
literal ``{`` or ``}`` is doubled, as in Python's ``str.format``; ``lines`` counts the
rows.  :func:`decode` fills each row's values into the template; a block whose header,
count, closing line or rows (as many values as the template has slots) do not read
right stays literal text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from workers.markers.blocks import decode_blocks

__all__ = ["CLOSE", "OPEN", "SEP", "block", "decode", "escape", "parse"]

OPEN = "[[template:v1 "
CLOSE = "[[/template]]"
SEP = "\t"
SLOT = "{}"
MAX_TEMPLATE = 2000  # characters of the template's JSON string
_HEADER = re.compile(
    r'\[\[template:v1 (?P<template>"(?:[^"\\\n]|\\.){1,'
    + str(MAX_TEMPLATE)
    + r'}") lines=(?P<count>[1-9]\d{0,6})\]\]'
)
_PIECE = re.compile(r"\{\{|\}\}|\{\}|[{}]|[^{}]+")


def escape(constant: str) -> str:
    """``constant`` as template text: its braces doubled."""
    return constant.replace("{", "{{").replace("}", "}}")


def header(template: str, count: int) -> str:
    return f"{OPEN}{json.dumps(template, ensure_ascii=False)} lines={count}]]"


def block(template: str, rows: Sequence[Sequence[str]]) -> list[str]:
    """The lines of the block: ``template`` (escaped, with slots) over ``rows`` of values."""
    return [header(template, len(rows)), *(SEP.join(values) for values in rows), CLOSE]


def parse(template: str) -> list[str] | None:
    """The constant pieces around the slots (one more than there are slots), or None when
    ``template`` is no template (a lone brace)."""
    pieces = [""]
    for match in _PIECE.finditer(template):
        piece = match.group()
        if piece == SLOT:
            pieces.append("")
        elif piece in ("{{", "}}"):
            pieces[-1] += piece[0]
        elif piece in ("{", "}"):
            return None
        else:
            pieces[-1] += piece
    return pieces


def fill(pieces: list[str], row: str) -> str | None:
    """The line a row stands for, or None when it holds another count of values."""
    values = row.split(SEP)
    if len(values) != len(pieces) - 1:
        return None
    out = [pieces[0]]
    for value, piece in zip(values, pieces[1:], strict=True):
        out += (value, piece)
    return "".join(out)


def decode(text: str) -> str:
    """``text`` with every well-formed template block written out again."""
    return decode_blocks(text, OPEN, CLOSE, _HEADER, _expand)


def _expand(header: re.Match[str], rows: list[str]) -> list[str] | None:
    pieces = _pieces(header.group("template"))
    if pieces is None:
        return None
    filled = [fill(pieces, row) for row in rows]
    return None if None in filled else filled  # type: ignore[return-value]


def _pieces(literal: str) -> list[str] | None:
    try:
        value = json.loads(literal)
    except ValueError:
        return None
    if not isinstance(value, str) or "\n" in value:
        return None
    pieces = parse(value)
    return pieces if pieces is not None and len(pieces) > 1 else None
