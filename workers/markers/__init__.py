"""The marker grammar of ctxpress, one module per marker, and the table that names them.

:data:`MARKERS` lists every marker in decode order (the reverse of the order
the engines write them): expand builds its decoder chain from it, the
pipeline's "input already looks like a marker" lock and the visibility oracle
read it, and every lossless engine must have its marker here
(:func:`marker_of` fails loudly when one is missing, when the pipeline is
built).  Adding a lossless engine means: its engine module, its marker module
with the writer and the decoder, one row below, and its name in
:mod:`workers.core.catalog`.

| marker | module | written by |
|---|---|---|
| ``… NOTE <<cx:KEY>>`` | :mod:`~workers.markers.stash` | every lossy engine |
| ``VIEW\\n<<cx:view>>… <<cx:KEY>>`` | :mod:`~workers.markers.structured_view` | structured |
| ``[[json-min:v1 LAYOUT]]…[[/json-min]]`` | :mod:`~workers.markers.json_min` | jsonminify |
| ``[[json-table:v1 columns=[…] rows=N LAYOUT]]…`` | :mod:`~workers.markers.json_table` | jsontable |
| ``[[dup:v1 src=UNIT at=N len=N \\| preview]]`` | :mod:`~workers.markers.dup` | dedup |
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from workers.core.errors import CtxpressError
from workers.core.offload import OffloadStore
from workers.markers import dup, json_min, json_table, stash, structured_view

__all__ = [
    "LOCK",
    "MARKERS",
    "DecodeInput",
    "Marker",
    "MissingMarker",
    "has_marker",
    "marker_of",
    "store_free_decoders",
]


@dataclass(frozen=True, slots=True)
class DecodeInput:
    """What a decoder may need besides the text: restored earlier units, the stash store."""

    restored: Mapping[str, str]
    store: OffloadStore | None
    missing: list[str]


@dataclass(frozen=True, slots=True)
class Marker:
    """One marker kind: who writes it, how to spot it, how to decode it."""

    name: str
    engine: str | None  # the lossless engine that writes it; None: lossy engines
    lock: str  # regex fragment: input matching it is never changed by any engine
    decode: Callable[[str, DecodeInput], str]
    store_free: bool  # decodes without a stash store or other units (a reader can too)


MARKERS: tuple[Marker, ...] = (
    Marker(
        "stash",
        None,
        re.escape(stash.LITERAL),
        lambda text, ctx: stash.expand_offload(text, ctx.store, ctx.missing),
        store_free=False,
    ),
    Marker(
        "structured-view",
        None,
        re.escape(structured_view.LITERAL),
        lambda text, ctx: structured_view.decode(text),
        store_free=False,
    ),
    Marker(
        "json-min",
        "jsonminify",
        r"\[\[/?json-min:",
        lambda text, ctx: json_min.decode(text),
        store_free=True,
    ),
    Marker(
        "json-table",
        "jsontable",
        r"\[\[/?json-table:",
        lambda text, ctx: json_table.decode(text),
        store_free=True,
    ),
    Marker(
        "dup",
        "dedup",
        r"\[\[/?dup:",
        lambda text, ctx: dup.decode(text, ctx.restored),
        store_free=False,
    ),
)

# ``[[read:`` is reserved (no engine writes it today; input holding it stays locked).
_RESERVED = (r"\[\[/?read:",)


class MissingMarker(CtxpressError, LookupError):
    """A lossless engine whose marker is not in :data:`MARKERS`: expand could not reverse it."""


def marker_of(engine: str, markers: tuple[Marker, ...] | None = None) -> Marker:
    """The marker a lossless engine writes; :class:`MissingMarker` when it has none."""
    for marker in MARKERS if markers is None else markers:
        if marker.engine == engine:
            return marker
    raise MissingMarker(
        f"lossless engine {engine!r} has no marker in workers.markers.MARKERS; "
        "add its marker module and a row to the table, or expand cannot reverse it"
    )


def _lock_pattern(markers: tuple[Marker, ...]) -> re.Pattern[str]:
    return re.compile("|".join([m.lock for m in markers] + list(_RESERVED)))


LOCK = _lock_pattern(MARKERS)


def has_marker(text: str) -> bool:
    """Whether ``text`` holds something that reads as a marker (never changed, never trusted)."""
    return ("[[" in text or stash.LITERAL in text) and LOCK.search(text) is not None


def store_free_decoders() -> tuple[tuple[str, Callable[[str], str]], ...]:
    """``(marker name, decode)`` of the markers a reader decodes without any store."""
    empty = DecodeInput({}, None, [])
    return tuple(
        (m.name, lambda text, m=m: m.decode(text, empty))  # type: ignore[misc]
        for m in MARKERS
        if m.store_free
    )
