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
| ``[[prefix:v1 "PREFIX" lines=N]]…[[/prefix]]`` | :mod:`~workers.markers.prefix` | prefix |
| ``[[template:v1 "TEMPLATE" lines=N]]…[[/template]]`` | :mod:`~workers.markers.template` | template |
| (nothing visible: column padding in the manifest) | :mod:`~workers.markers.align` | align |
| ``… NOTE <<cx:KEY>>`` | :mod:`~workers.markers.stash` | every lossy engine |
| ``VIEW\\n<<cx:view>>… <<cx:KEY>>`` | :mod:`~workers.markers.structured_view` | structured, toolfilter |
| ``[[json-min:v1]]…[[/json-min]]`` (layout in the manifest) | :mod:`~workers.markers.json_min` | jsonminify |
| ``[[json-table:v1 columns=[…] rows=N]]…`` (layout in the manifest) | :mod:`~workers.markers.json_table` | jsontable |
| (nothing visible: escape sequences in the manifest) | :mod:`~workers.markers.ansi` | ansi |
| ``[[dup:v1 src=UNIT at=N len=N \\| preview]]`` | :mod:`~workers.markers.dup` | dedup |

A marker counts only if the record's own pipeline wrote it.  Two rules hold
that: after every engine, a text that newly holds marker-like text its engine
may not write (:func:`unwritten_markers`: a stash key not in the engine's own
stash, another engine's marker) is rejected by the gate (kind ``marker``);
and the record's ``compression`` object carries a :class:`Manifest` (the
stash keys and back-references its engines wrote), and expand resolves only
those: any other ``<<cx:KEY>>`` or ``[[dup:...]]`` stays literal text.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from workers.core.errors import CtxpressError
from workers.core.offload import KEY_HEX, OffloadStore
from workers.markers import (
    align,
    ansi,
    dup,
    json_min,
    json_table,
    prefix,
    stash,
    structured_view,
    superseded,
    template,
)

__all__ = [
    "LOCK",
    "MANIFEST_KEY",
    "MARKERS",
    "DecodeInput",
    "Manifest",
    "Marker",
    "MissingMarker",
    "has_marker",
    "marker_of",
    "marker_tokens",
    "store_free_decoders",
    "unwritten_markers",
]


MANIFEST_KEY = "markers"  # where the manifest lives in a record's ``compression`` object


@dataclass(frozen=True, slots=True)
class Manifest:
    """The markers a record's own pipeline wrote: all expand may resolve.

    ``stash``: every stash key the record's texts (and its stashes) point at;
    ``dup``: per unit, the :func:`workers.markers.dup.ref_id` of each dedup
    back-reference; ``newer``: per unit, the message indexes its
    read-lifecycle notes name as the newer copy; ``table``: per unit, the
    out-of-band layout of each ``[[json-table:v1 ...]]`` block
    (:func:`workers.markers.json_table.table_digest` of the plain header ->
    attribute list).  In the ``compression`` object (:data:`MANIFEST_KEY`):
    ``{"stash": ["KEY", ...], "dup": ["UNIT=SRC:AT:LEN", ...], "newer": ["UNIT>INDEX", ...],
    "table": ["UNIT=DIGEST ATTRS", ...], "min": ["UNIT=DIGEST ATTRS", ...],
    "ansi": ["UNIT=RUNS", ...], "align": ["UNIT=RUNS", ...]}`` (``min``: the layout of each
    ``[[json-min:v1]]`` document, keyed by :func:`workers.markers.json_min.body_digest`
    of its body; ``ansi``: the escape sequences the ``ansi`` engine took out of the
    unit, :mod:`workers.markers.ansi`; ``align``: the widths of the column padding the
    ``align`` engine squeezed, :mod:`workers.markers.align`),
    each list sorted, empty lists left out, the object left out when empty.
    """

    stash: frozenset[str] = frozenset()
    dup: Mapping[str, frozenset[str]] = field(default_factory=dict)
    newer: Mapping[str, frozenset[int]] = field(default_factory=dict)
    table: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    ansi: Mapping[str, str] = field(default_factory=dict)
    minified: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    align: Mapping[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(
            self.stash
            or self.dup
            or self.newer
            or self.table
            or self.ansi
            or self.minified
            or self.align
        )

    def as_json(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        if self.stash:
            out["stash"] = sorted(self.stash)
        if self.dup:
            out["dup"] = sorted(f"{uid}={ref}" for uid, refs in self.dup.items() for ref in refs)
        if self.newer:
            out["newer"] = sorted(f"{uid}>{i}" for uid, idx in self.newer.items() for i in idx)
        if self.table:
            out["table"] = _layout_items(self.table)
        if self.minified:
            out["min"] = _layout_items(self.minified)
        if self.ansi:
            out["ansi"] = sorted(f"{uid}={entry}" for uid, entry in self.ansi.items())
        if self.align:
            out["align"] = sorted(f"{uid}={entry}" for uid, entry in self.align.items())
        return out

    @classmethod
    def from_json(cls, value: Any) -> Manifest:
        """The manifest of a ``compression`` object's entry; anything malformed counts as empty."""
        if not isinstance(value, dict):
            return cls()
        keys = frozenset(k for k in _strings(value.get("stash")) if _KEY.fullmatch(k))
        dups: dict[str, set[str]] = {}
        for item in _strings(value.get("dup")):
            uid, sep, ref = item.partition("=")
            if sep:
                dups.setdefault(uid, set()).add(ref)
        newer: dict[str, set[int]] = {}
        for item in _strings(value.get("newer")):
            uid, sep, index = item.partition(">")
            if sep and index.lstrip("-").isdigit():
                newer.setdefault(uid, set()).add(int(index))
        tables = _layouts_of(value.get("table"))
        mins = _layouts_of(value.get("min"))
        runs = _unit_entries(value.get("ansi"))
        return cls(
            keys,
            {u: frozenset(r) for u, r in dups.items()},
            {u: frozenset(i) for u, i in newer.items()},
            table=tables,
            ansi=runs,
            minified=mins,
            align=_unit_entries(value.get("align")),
        )

    @classmethod
    def of_record(cls, compression: Any) -> Manifest:
        """The manifest in a record's ``compression`` object (empty when it has none)."""
        if not isinstance(compression, dict):
            return cls()
        return cls.from_json(compression.get(MANIFEST_KEY))


_KEY = re.compile(r"[0-9a-f]{8,64}")
_DIGEST = re.compile(f"[0-9a-f]{{{json_table.DIGEST_HEX}}}")


def _strings(value: Any) -> Iterable[str]:
    return (v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def _unit_entries(value: Any) -> dict[str, str]:
    """unit -> entry of ``UNIT=ENTRY`` items (``ansi``, ``align``); malformed ones left out."""
    entries: dict[str, str] = {}
    for item in _strings(value):
        uid, sep, entry = item.partition("=")
        if sep:
            entries[uid] = entry
    return entries


def _layout_items(layouts: Mapping[str, Mapping[str, str]]) -> list[str]:
    """``UNIT=DIGEST ATTRS`` entries (``table``, ``min``), sorted."""
    return sorted(f"{uid}={d} {a}" for uid, by in layouts.items() for d, a in by.items())


def _layouts_of(value: Any) -> dict[str, dict[str, str]]:
    """unit -> digest -> attributes of ``UNIT=DIGEST ATTRS`` entries; malformed ones left out."""
    layouts: dict[str, dict[str, str]] = {}
    for item in _strings(value):
        uid, sep, entry = item.partition("=")
        digest, space, attrs = entry.partition(" ")
        if sep and space and _DIGEST.fullmatch(digest):
            layouts.setdefault(uid, {})[digest] = attrs
    return layouts


@dataclass(frozen=True, slots=True)
class DecodeInput:
    """What a decoder may need besides the text: restored earlier units, the stash store.

    ``manifest``: what the record's pipeline wrote (None: trust every marker,
    for callers that decode their own engine's output); ``uid``: the unit.
    """

    restored: Mapping[str, str]
    store: OffloadStore | None
    missing: list[str]
    manifest: Manifest | None = None
    uid: str = ""


@dataclass(frozen=True, slots=True)
class Marker:
    """One marker kind: who writes it, how to spot it, how to decode it."""

    name: str
    engine: str | None  # the lossless engine that writes it; None: lossy engines
    lock: str  # regex fragment: input matching it changes only where expand gives it back
    decode: Callable[[str, DecodeInput], str]
    store_free: bool  # decodes without a stash store or other units (a reader can too)


MARKERS: tuple[Marker, ...] = (
    Marker(
        "prefix",
        "prefix",
        r"\[\[/?prefix:",
        lambda text, ctx: prefix.decode(text),
        store_free=True,
    ),
    Marker(
        "template",
        "template",
        r"\[\[/?template:",
        lambda text, ctx: template.decode(text),
        store_free=True,
    ),
    Marker(
        "align",
        "align",
        r"(?!)",  # nothing visible: the widths are in the manifest
        lambda text, ctx: (
            text if ctx.manifest is None else align.restore(text, ctx.manifest.align.get(ctx.uid))
        ),
        store_free=False,
    ),
    Marker(
        "stash",
        None,
        re.escape(stash.LITERAL),
        lambda text, ctx: stash.expand_offload(
            text, ctx.store, ctx.missing, None if ctx.manifest is None else ctx.manifest.stash
        ),
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
        lambda text, ctx: json_min.decode_with(
            text, {} if ctx.manifest is None else ctx.manifest.minified.get(ctx.uid, {})
        ),
        store_free=True,
    ),
    Marker(
        "json-table",
        "jsontable",
        r"\[\[/?json-table:",
        lambda text, ctx: json_table.decode_with(
            text, {} if ctx.manifest is None else ctx.manifest.table.get(ctx.uid, {})
        ),
        store_free=True,
    ),
    Marker(
        "ansi",
        "ansi",
        r"(?!)",  # nothing visible: the sequences are in the manifest
        lambda text, ctx: (
            text if ctx.manifest is None else ansi.restore(text, ctx.manifest.ansi.get(ctx.uid))
        ),
        store_free=False,
    ),
    Marker(
        "dup",
        "dedup",
        r"\[\[/?dup:",
        lambda text, ctx: dup.decode(
            text,
            ctx.restored,
            None if ctx.manifest is None else ctx.manifest.dup.get(ctx.uid, frozenset()),
        ),
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
    """Whether ``text`` holds something that reads as a marker (never trusted: a change to
    such input is kept only where expand gives it back)."""
    return ("[[" in text or stash.LITERAL in text) and LOCK.search(text) is not None


# What the gate compares before and after an engine: every piece of text that
# reads as a marker (a superset of :data:`LOCK`), as the token a writer makes.
_TOKEN = re.compile(
    r"<<cx:(?:[0-9a-f]{" + str(KEY_HEX) + r"}>>|view>>)?"
    r"|\[\[/?(?:dup:(?:v1 src=(?:self|[\w.]{1,40}) at=\d{1,12} len=\d{1,12})?"
    r"|json-min:|json-table:|prefix:|template:|read:)"
    r"|" + re.escape(superseded.LITERAL)
)
# token prefix -> the engines that may write it (stash keys: any lossy engine, own stash only)
_WRITERS: tuple[tuple[str, frozenset[str]], ...] = (
    (structured_view.VIEW_HEADER, frozenset({"structured", "toolfilter", "logtemplate"})),
    ("[[dup:", frozenset({"dedup"})),
    ("[[/dup:", frozenset({"dedup"})),
    ("[[json-min:", frozenset({"jsonminify"})),
    ("[[/json-min:", frozenset({"jsonminify"})),
    ("[[json-table:", frozenset({"jsontable"})),
    ("[[/json-table:", frozenset({"jsontable"})),
    ("[[prefix:", frozenset({"prefix"})),
    ("[[/prefix:", frozenset({"prefix"})),
    ("[[template:", frozenset({"template"})),
    ("[[/template:", frozenset({"template"})),
    (superseded.LITERAL, frozenset({"read-lifecycle"})),
)
_STASH_TOKEN_LEN = len(stash.LITERAL) + KEY_HEX + 2


def _may_hold_marker(text: str) -> bool:
    return "[[" in text or stash.LITERAL in text or superseded.LITERAL in text


def marker_tokens(text: str) -> list[str]:
    """Every marker-like piece of ``text`` (stash ``<<cx:KEY>>``, ``[[dup:v1 src=.. at=.. len=..``,
    ``[[json-min:`` ...), in order; what :func:`unwritten_markers` compares."""
    return _TOKEN.findall(text) if _may_hold_marker(text) else []


def unwritten_markers(
    before: str, after: str, engine: str, lossless: bool, stash_keys: Collection[str]
) -> list[str]:
    """Marker-like pieces ``after`` holds more often than ``before`` that ``engine`` may not write.

    A lossy engine writes stash markers for the keys of its own stash only
    (``stash_keys``), structured its view header, read-lifecycle its note;
    a lossless engine its own marker.  Anything else that newly reads as a
    marker (a word deleted inside ``<<basically cx:KEY>>``, a marker copied
    from elsewhere) was not written by this engine: the gate rejects it.
    """
    if not _may_hold_marker(after):
        return []
    new = Counter(marker_tokens(after))
    if not new:
        return []
    new.subtract(marker_tokens(before))
    bad: list[str] = []
    for token, count in new.items():
        if count > 0 and not _may_write(token, engine, lossless, stash_keys):
            bad.append(token)
    return bad


def _may_write(token: str, engine: str, lossless: bool, stash_keys: Collection[str]) -> bool:
    if token.startswith(stash.LITERAL) and len(token) == _STASH_TOKEN_LEN:
        return not lossless and token[len(stash.LITERAL) : -2] in stash_keys
    for head, writers in _WRITERS:
        if token.startswith(head):
            return engine in writers
    return False  # a bare "<<cx:", "[[read:"


def store_free_decoders() -> tuple[tuple[str, Callable[[str], str]], ...]:
    """``(marker name, decode)`` of the markers a reader decodes without any store."""
    empty = DecodeInput({}, None, [])
    return tuple(
        (m.name, lambda text, m=m: m.decode(text, empty))  # type: ignore[misc]
        for m in MARKERS
        if m.store_free
    )
