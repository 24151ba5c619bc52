"""Shared by the markers of line blocks (``prefix``, ``template``): a header line that counts
the lines under it, those lines, a closing line.

:func:`decode_blocks` writes every well-formed block of a text out again; a header whose
count does not reach its closing line, or whose lines its marker cannot read, stays
literal text, and so does everything around it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["decode_blocks"]


def decode_blocks(
    text: str,
    opening: str,
    closing: str,
    header: re.Pattern[str],
    expand: Callable[[re.Match[str], list[str]], list[str] | None],
) -> str:
    """``text`` with each block written out by ``expand(header match, lines under it)``.

    ``header`` fullmatches a header line and its group ``count`` is the number of lines
    under it; ``expand`` gives the lines they stand for, or None (the block stays as it is).
    """
    if opening not in text:
        return text
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        match = header.fullmatch(line) if line.startswith(opening) else None
        if match is not None:
            end = i + 1 + int(match.group("count"))
            if end < n and lines[end] == closing:
                expanded = expand(match, lines[i + 1 : end])
                if expanded is not None:
                    out.extend(expanded)
                    i = end + 1
                    continue
        out.append(line)
        i += 1
    return "\n".join(out)
