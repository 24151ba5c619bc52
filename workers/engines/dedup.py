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
from collections.abc import Mapping, Sequence

from workers.engines.base import EngineContext, EngineOutput, LosslessEngine
from workers.markers.dup import DUP_MARKER, decode, dup_marker
from workers.messages.model import Unit

__all__ = ["DUP_MARKER", "DedupEngine", "decode"]

MIN_CHARS = 80
MIN_LINES = 3
PREVIEW_CHARS = 48
_SEPARATOR = re.compile(r"\n[ \t]*\n")


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


class DedupEngine(LosslessEngine):
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
                where = "above" if src == "self" else _where(units[src_pos])
                marker = dup_marker(
                    src, at, len(block), f"same {lines} lines as {where}: {_preview(block)}"
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
