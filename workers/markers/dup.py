"""The ``[[dup:v1 src=UNIT at=N len=N | preview]]`` back-reference: grammar, writer, decoder.

``src`` names the unit holding the first copy (``self``: earlier in the same
text), ``at``/``len`` the character span of that copy in the unit's restored
text.  The text after ``|`` is a preview for the model; the decoder ignores it.
A record's manifest lists the back-references its dedup wrote, per unit, as
:func:`ref_id` strings (``SRC:AT:LEN``); expand decodes only those.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Collection, Mapping

__all__ = ["DUP_MARKER", "LITERAL", "decode", "dup_marker", "ref_id", "refs"]

LITERAL = "[[dup:v1 "
DUP_MARKER = re.compile(
    r"\[\[dup:v1 src=(self|[\w.]{1,40}) at=(\d{1,12}) len=(\d{1,12})(?: \|[^\]\n]{0,200})?\]\]"
)


def dup_marker(src: str, at: int, length: int, preview: str) -> str:
    """The back-reference to ``length`` characters at ``at`` of unit ``src``."""
    return f"{LITERAL}src={src} at={at} len={length} | {preview}]]"


def ref_id(match: re.Match[str]) -> str:
    """``SRC:AT:LEN`` of one back-reference: how a manifest names it."""
    return f"{match.group(1)}:{match.group(2)}:{match.group(3)}"


def refs(text: str) -> list[str]:
    """The :func:`ref_id` of every dup marker in ``text``, in order."""
    if LITERAL not in text:
        return []
    return [ref_id(m) for m in DUP_MARKER.finditer(text)]


def decode(text: str, originals: Mapping[str, str], allowed: Collection[str] | None = None) -> str:
    """Replace every dup marker with the block it points at.

    ``originals`` maps unit ids to their restored texts (units before this one).
    ``allowed``: the :func:`ref_id` of the markers this unit's pipeline wrote
    (its manifest); any other marker stays as it is.  None: every marker.
    """
    if "[[dup:v1 " not in text:
        return text
    out: list[str] = []
    starts: list[int] = []  # where each piece of ``out`` starts in the restored text
    length = 0
    cursor = 0

    def add(piece: str) -> None:
        nonlocal length
        out.append(piece)
        starts.append(length)
        length += len(piece)

    for match in DUP_MARKER.finditer(text):
        if allowed is not None and ref_id(match) not in allowed:
            continue  # not written by this record's dedup: literal text
        src, at, size = match.group(1), int(match.group(2)), int(match.group(3))
        add(text[cursor : match.start()])
        if src == "self":
            if at + size > length:
                raise ValueError(f"dup marker points past the restored text: {match.group(0)[:80]}")
            # join only the pieces the block lies in, not everything restored so far
            first = bisect_right(starts, at) - 1
            last = bisect_right(starts, at + size - 1) if size else first + 1
            offset = at - starts[first]
            block = "".join(out[first:last])[offset : offset + size]
        else:
            source = originals.get(src)
            if source is None or at + size > len(source):
                raise ValueError(f"dup marker points at unknown text {src!r}")
            block = source[at : at + size]
        add(block)
        cursor = match.end()
    out.append(text[cursor:])
    return "".join(out)
