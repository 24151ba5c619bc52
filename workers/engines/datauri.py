"""``datauri``: base64 data URIs inside text are stashed behind a marker.

A ``data:[MIME][;param=value...];base64,PAYLOAD`` URI of at least
:data:`MIN_CHARS` characters, anywhere in a non-frozen text (a tool result,
an HTML page, a Markdown image, a JSON string), becomes::

    … data URI image/png base64, 10,524 chars (~7.7 KB decoded) omitted <<cx:KEY>>

with the URI stashed under ``KEY``: the model sees what was there and how big
it was, ``expand`` puts the URI back exactly.  Image content parts of a
message are not text units, so images the model must see are never touched.
A URI is only replaced where the marker has fewer tokens.  Linear time: one
bounded regex scan, and none at all without ``;base64,`` in the text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from workers.engines._text import restores, stash_marker
from workers.engines.base import Engine, EngineContext, EngineOutput
from workers.messages.model import Unit

__all__ = ["DATA_URI", "MIN_CHARS", "DataUriEngine", "stash_data_uris"]

MIN_CHARS = 100
DATA_URI = re.compile(
    r"data:([A-Za-z0-9.+-]{1,60}/[A-Za-z0-9.+-]{1,100})?"
    r"((?:;[A-Za-z0-9.+_-]{1,60}=[^;,\s\"'<>()]{0,200}){0,8})"
    r";base64,([A-Za-z0-9+/_-]{16,}={0,2})"
)


def _size(n: int) -> str:
    if n >= 1024 * 1024:
        return f"{n / (1024 * 1024):.1f} MB"
    if n >= 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n} B"


def stash_data_uris(text: str, ctx: EngineContext) -> tuple[str, dict[str, str], int]:
    """``(new_text, stash, uris_replaced)`` for one text."""
    if ";base64," not in text:
        return text, {}, 0
    pieces: list[str] = []
    stash: dict[str, str] = {}
    cursor = 0
    count = 0
    for m in DATA_URI.finditer(text):
        uri = m.group(0)
        if len(uri) < MIN_CHARS:
            continue
        mime = m.group(1) or "unknown type"
        payload = m.group(3)
        decoded = len(payload.rstrip("=")) * 3 // 4
        marker, key = stash_marker(
            f"data URI {mime} base64, {len(uri):,} chars (~{_size(decoded)} decoded) omitted", uri
        )
        if len(uri) < 4 * len(marker) and ctx.tokens.count(marker) >= ctx.tokens.count(uri):
            continue
        pieces.append(text[cursor : m.start()])
        pieces.append(marker)
        stash[key] = uri
        cursor = m.end()
        count += 1
    if not stash:
        return text, {}, 0
    pieces.append(text[cursor:])
    new = "".join(pieces)
    if not restores(text, new, stash):
        return text, {}, 0  # a "… " earlier on a marker's line would confuse expand
    return new, stash, count


class DataUriEngine(Engine):
    name = "datauri"
    lossless = False

    def apply(self, units: Sequence[Unit], ctx: EngineContext) -> EngineOutput:
        texts: list[str] = []
        stash: dict[str, str] = {}
        uris = chars = 0
        for unit in units:
            if unit.frozen:
                texts.append(unit.text)
                continue
            new, found, count = stash_data_uris(unit.text, ctx)
            texts.append(new)
            if count:
                stash.update(found)
                uris += count
                chars += sum(len(v) for v in found.values())
        details: dict[str, Any] = {"data_uris": uris, "chars_stashed": chars} if uris else {}
        return EngineOutput(texts=texts, details=details, stash=stash)
