"""Engine-side helpers of the lossless JSON engines (``jsontable``, ``jsonminify``).

The layout grammar and the decoders' rendering live in
:mod:`workers.markers.jsonlayout`; this module adds what only an encoder
needs: keeping the markers that save tokens, and running an encoder over units.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from workers.core.tokens import TokenCounter
from workers.engines.base import EngineContext
from workers.markers.jsonlayout import WS, Rewrite
from workers.messages.model import Unit

__all__ = ["encode_units", "splice_saving"]


def splice_saving(
    text: str, found: Sequence[Rewrite], tokens: TokenCounter
) -> tuple[str, list[Rewrite]] | None:
    """``text`` with the markers of ``found`` (in text order) that save tokens, and those.

    A single marker standing for the whole text (whitespace around it aside)
    is kept when the whole new text counts fewer tokens; otherwise each
    marker is kept when it counts fewer tokens than its document.  None when
    nothing is kept.
    """
    if not found:
        return None
    if len(found) == 1 and not text[: found[0][0]].strip(WS) and not text[found[0][1] :].strip(WS):
        start, end, marker, _ = found[0]
        new = text[:start] + marker + text[end:]
        if tokens.count(new) >= tokens.count(text):
            return None
        return new, [found[0]]
    kept = [
        f
        for f in found
        if 2 * len(f[2]) < f[1] - f[0] or tokens.count(f[2]) < tokens.count(text[f[0] : f[1]])
    ]
    if not kept:
        return None
    pieces: list[str] = []
    cursor = 0
    for start, end, marker, _ in kept:
        pieces.append(text[cursor:start])
        pieces.append(marker)
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces), kept


def encode_units(
    units: Sequence[Unit],
    ctx: EngineContext,
    encode: Callable[[str, bool, EngineContext], tuple[str, list[Rewrite]] | None],
    min_chars: int = 0,
) -> tuple[list[str], list[Rewrite]]:
    """New texts of ``units`` (``encode(text, whole_text_is_json, ctx)`` where it applies)
    and every rewrite made.

    Frozen units, texts shorter than ``min_chars`` and texts without a bracket
    are left as they are.
    """
    texts: list[str] = []
    rewrites: list[Rewrite] = []
    for unit in units:
        text = unit.text
        new = None
        if not unit.frozen and len(text) >= min_chars and ("[" in text or "{" in text):
            new = encode(text, unit.kind == "tool_result", ctx)
        if new is None:
            texts.append(text)
            continue
        texts.append(new[0])
        rewrites.extend(new[1])
    return texts, rewrites
