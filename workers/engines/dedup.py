"""``dedup``: repeated blocks become a back-reference to their first copy.

Blocks are the runs of text between blank lines; a block of at least 80
characters and 3 lines that already appeared earlier (in an earlier message
or earlier in the same message, frozen messages included as sources) is
replaced, in non-frozen messages, by::

    [[dup:v1 src=m3 at=120 len=842 | same 14 lines as message 3: first line…]]

``src`` names the unit holding the first copy (``self`` for the same unit),
``at``/``len`` the character span of that copy in the unit's original text.
The text after ``|`` is a preview for the model; the decoder ignores it.
Lossless: :func:`decode` restores the block exactly, given the restored
texts of earlier units.  Must run first in every mode (its offsets refer to
the untouched input).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Mapping, Sequence

from workers.engines.base import Engine, EngineContext, EngineOutput
from workers.messages.model import Unit

__all__ = ["DUP_MARKER", "DedupEngine", "decode"]

MIN_CHARS = 80
MIN_LINES = 3
PREVIEW_CHARS = 48
_SEPARATOR = re.compile(r"\n[ \t]*\n")
DUP_MARKER = re.compile(
    r"\[\[dup:v1 src=(self|[\w.]{1,40}) at=(\d{1,12}) len=(\d{1,12})(?: \|[^\]\n]{0,200})?\]\]"
)


def _blocks(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _SEPARATOR.finditer(text):
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(text)))
    return [
        (a, b) for a, b in spans if b - a >= MIN_CHARS and text.count("\n", a, b) >= MIN_LINES - 1
    ]


def _preview(block: str) -> str:
    first = next((line.strip() for line in block.splitlines() if line.strip()), "")
    first = first.replace("]", ")").replace("|", "/")
    return first[:PREVIEW_CHARS] + ("…" if len(first) > PREVIEW_CHARS else "")


def _where(unit: Unit) -> str:
    return "system prompt" if unit.index < 0 else f"message {unit.index}"


class DedupEngine(Engine):
    name = "dedup"
    lossless = True

    def apply(self, units: Sequence[Unit], ctx: EngineContext) -> EngineOutput:
        first_seen: dict[str, tuple[int, int]] = {}  # block -> (unit position, offset)
        texts: list[str] = []
        replaced = 0
        chars_saved = 0
        for pos, unit in enumerate(units):
            text = unit.text
            spans = _blocks(text) if len(text) >= MIN_CHARS else []
            if not spans:
                texts.append(text)
                continue
            pieces: list[str] = []
            cursor = 0
            for a, b in spans:
                block = text[a:b]
                seen = first_seen.get(block)
                if seen is None:
                    first_seen[block] = (pos, a)
                    continue
                if unit.frozen:
                    continue
                src_pos, at = seen
                src = "self" if src_pos == pos else units[src_pos].uid
                lines = block.count("\n") + 1
                marker = (
                    f"[[dup:v1 src={src} at={at} len={len(block)} | same {lines} lines as "
                    f"{'above' if src == 'self' else _where(units[src_pos])}: {_preview(block)}]]"
                )
                if 3 * len(marker) > len(block) and ctx.tokens.count(marker) >= ctx.tokens.count(
                    block
                ):
                    continue
                pieces.append(text[cursor:a])
                pieces.append(marker)
                cursor = b
                replaced += 1
                chars_saved += len(block) - len(marker)
            if cursor:
                pieces.append(text[cursor:])
                texts.append("".join(pieces))
            else:
                texts.append(text)
        details = {"blocks_replaced": replaced, "chars_saved": chars_saved} if replaced else {}
        return EngineOutput(texts=texts, details=details)

    def decode(self, text: str, originals: Mapping[str, str]) -> str:
        return decode(text, originals)


def decode(text: str, originals: Mapping[str, str]) -> str:
    """Replace every dup marker with the block it points at.

    ``originals`` maps unit ids to their restored texts (units before this one).
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
