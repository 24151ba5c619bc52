"""``expand``: reverse every marker ctxpress writes.

Only the units listed in ``compression.changed`` are decoded (a change to a
unit whose input already contained marker-like text is kept only when this
module gives the input back, so literal input is never mistaken for a marker).  Each changed unit is decoded in reverse
engine order, the order of :data:`workers.markers.MARKERS`: offload markers
(``<<cx:KEY>>``, recursively, from the store), then the structured envelope,
``[[json-min:...]]``, ``[[json-table:v1 ...]]``, the escape sequences the ``ansi``
engine took out (from the manifest), and last dedup back-references,
which point at the restored text of earlier units.  In lossless mode the result is the input record, byte for byte once
serialised in the record's original layout.

Only the markers the record's own pipeline wrote are resolved: the stash keys
and dedup back-references its ``compression`` manifest lists
(:class:`workers.markers.Manifest`).  Any other ``<<cx:KEY>>`` (another
record's stash) or ``[[dup:...]]`` is literal text: it never pulls other text
in and is never reported missing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workers.core.errors import CtxpressError
from workers.core.jsonl import dump_layout
from workers.core.offload import OffloadStore
from workers.markers import MARKERS, DecodeInput, Manifest
from workers.messages import RESERVED_KEY, apply_texts, parse_record
from workers.messages.model import Path
from workers.messages.wire import BYTES_LAYOUT, restore_line

__all__ = ["ExpandError", "expand_line", "expand_record", "expand_text", "expanded_units"]


class ExpandError(CtxpressError, ValueError):
    """A marker could not be resolved (missing stash entry, bad reference)."""


def expand_text(
    text: str,
    restored: Mapping[str, str],
    store: OffloadStore | None = None,
    missing: list[str] | None = None,
    manifest: Manifest | None = None,
    uid: str = "",
) -> str:
    """Decode one changed unit's text.  ``restored``: uid -> text of earlier units.

    ``manifest`` (with the unit's ``uid``): resolve only the markers it lists;
    None: every marker (text from an engine of the caller's own).
    """
    context = DecodeInput(restored, store, [] if missing is None else missing, manifest, uid)
    for marker in MARKERS:  # decode order: the reverse of the order engines write them
        text = marker.decode(text, context)
    return text


def expand_record(
    data: dict[str, Any], store: OffloadStore | None = None, strict: bool = True
) -> dict[str, Any]:
    """The record without its ``compression`` object and with every marker reversed.

    With ``strict``, a ``<<cx:KEY>>`` whose original is not in the store raises
    :class:`ExpandError` naming the keys and what to pass (``--offload DIR``).
    """
    if not isinstance(data.get(RESERVED_KEY), dict):
        return data
    plain, texts = _restored_texts(data, store, strict)
    if not texts:
        return plain
    return apply_texts(plain, {path: text for path, (_, text) in texts.items()})


def expand_line(
    line: bytes, value: Any, store: OffloadStore | None = None, strict: bool = True
) -> bytes:
    """The input line of one compressed line (both without the ``\\n``), byte for byte
    in lossless mode.  ``value`` is ``line`` decoded; a line without a
    ``compression`` object is given back as it is.
    """
    if not isinstance(value, dict) or not isinstance(value.get(RESERVED_KEY), dict):
        return line
    layout = value[RESERVED_KEY].get("layout")
    plain, texts = _restored_texts(value, store, strict)
    if layout == BYTES_LAYOUT:
        restored = restore_line(line, value, texts)
        if restored is not None:
            return restored
        layout = None  # the line was rewritten after compress: its record, compact
    changes = {path: text for path, (_, text) in texts.items()}
    return dump_layout(apply_texts(plain, changes) if changes else plain, layout)


def expanded_units(data: dict[str, Any], store: OffloadStore | None) -> dict[str, str]:
    """uid -> restored text of each changed unit of the compressed record ``data``
    (markers the store lacks stay as written); raises :class:`ExpandError`."""
    return {uid: text for uid, text in _restored_texts(data, store, False)[1].values()}


def _restored_texts(
    data: dict[str, Any], store: OffloadStore | None, strict: bool
) -> tuple[dict[str, Any], dict[Path, tuple[str, str]]]:
    """The record without ``compression``, and path -> (uid, restored text) of its changed units."""
    comp = data[RESERVED_KEY]
    plain = {k: v for k, v in data.items() if k != RESERVED_KEY}
    changed = set(comp.get("changed") or ())
    if not changed:
        return plain, {}
    record = parse_record(plain)
    manifest = Manifest.of_record(comp)
    restored: dict[str, str] = {}
    changes: dict[Path, tuple[str, str]] = {}
    missing: list[str] = []
    for unit in record.units:
        text = unit.text
        if unit.uid in changed:
            try:
                text = expand_text(text, restored, store, missing, manifest, unit.uid)
            except ValueError as exc:  # a bad back-reference, a stash that loops
                raise ExpandError(f"record {record.record_id!r}, unit {unit.uid}: {exc}") from exc
            changes[unit.path] = (unit.uid, text)
        restored[unit.uid] = text
    if missing and strict:
        raise ExpandError(
            f"record {record.record_id!r}: {len(missing)} stashed span(s) not found "
            f"({', '.join(sorted(set(missing))[:5])}); pass the offload store the record was "
            "compressed with (--offload DIR, or the worker's offload topic)"
        )
    return plain, changes
