"""The ``… NOTE <<cx:KEY>>`` stash marker: grammar, writers and decoder.

A lossy engine replaces a dropped span by a short note that says what was
dropped, then ``<<cx:KEY>>``; the span is stashed under ``KEY =
stash_key(span)`` (:mod:`workers.core.offload`).  Expanding replaces the whole
marker, from ``…`` to ``>>``, by the stashed text.  A stashed text may hold
markers of earlier engines: each stashed text is expanded on its own first
(inside out), then put in place, so an expanded text never meets the text
around it before it is complete, and the note of a marker is what follows the
last ``…`` before ``<<cx:`` (notes never hold ``…``).  Expansion is bounded:
:data:`MAX_DEPTH` levels, :data:`MAX_EXPANDED_CHARS` characters, and a stash
that (through others) holds its own key is an error, never a loop.  Only the
keys a record's manifest lists (``keys``) are expanded; any other
``<<cx:KEY>>`` is literal text.

Two note rules exist, each kept byte for byte since the outputs depend on
them: :func:`safe_note` (read-lifecycle, datauri, whitespace, smartcrush,
structured: no control or marker characters at all) and :func:`short_note`
(the line-dropping engines: one line, ``<<`` and ``…`` defused).
"""

from __future__ import annotations

import re
from collections.abc import Collection

from workers.core.errors import CtxpressError
from workers.core.offload import KEY_HEX, OffloadStore, stash_key

__all__ = [
    "CX_MARKER",
    "KEY_PATTERN",
    "LITERAL",
    "MAX_DEPTH",
    "MAX_EXPANDED_CHARS",
    "NOTE_CAP",
    "StashError",
    "expand_offload",
    "offload_marker",
    "safe_note",
    "short_note",
    "stash_marker",
]

LITERAL = "<<cx:"
KEY_PATTERN = re.compile(rf"<<cx:[0-9a-f]{{{KEY_HEX}}}>>")
# the note holds no "…" (the writers defuse it): the marker starts at the last "…"
CX_MARKER = re.compile(rf"…(?: [^\n…]{{0,300}}?)? <<cx:([0-9a-f]{{{KEY_HEX}}})>>")
MAX_DEPTH = 32  # nested stashes expanded at most this deep
MAX_EXPANDED_CHARS = 64 << 20  # one expanded text at most this long (a record is at most 16 MiB)
NOTE_CAP = 200
_NOTE_BAD = re.compile(r"[\x00-\x1f\x7f\u2028\u2029\x85<>…]")


def offload_marker(note: str, key: str) -> str:
    """``… {note} <<cx:KEY>>``: what was dropped, in words, then the key."""
    return f"… {note} <<cx:{key}>>"


def safe_note(note: str) -> str:
    """One line, no marker characters, at most :data:`NOTE_CAP` characters."""
    note = _NOTE_BAD.sub(" ", note)
    if len(note) > NOTE_CAP:
        note = note[: NOTE_CAP - 1] + "~"
    return note


def short_note(note: str) -> str:
    """One line, ``<<`` and ``…`` defused, at most :data:`NOTE_CAP` characters."""
    return note.replace("\n", " ").replace("<<", "«").replace("…", "...")[:NOTE_CAP]


def stash_marker(note: str, original: str) -> tuple[str, str]:
    """``(marker, key)`` for replacing ``original`` by ``… note <<cx:KEY>>`` (safe note)."""
    key = stash_key(original)
    return offload_marker(safe_note(note), key), key


class StashError(CtxpressError, ValueError):
    """A stash that cannot be expanded: it holds its own key, nests too deep or grows too long."""


def expand_offload(
    text: str,
    store: OffloadStore | None,
    missing: list[str],
    keys: Collection[str] | None = None,
    limit: int = MAX_EXPANDED_CHARS,
) -> str:
    """``text`` with every stash marker whose key ``store`` holds replaced by the original.

    ``keys``: the only keys that count as markers (a record's manifest); any
    other ``<<cx:KEY>>`` stays as it is, and is not missing.  None: every key.
    Keys the store does not hold are appended to ``missing`` and their
    markers stay as they are.  Raises :class:`StashError` for a stash that
    holds its own key, nests deeper than :data:`MAX_DEPTH` or expands beyond
    ``limit`` characters.
    """
    if LITERAL not in text:
        return text
    return _Expansion(store, missing, keys, limit).text(text, ())


class _Expansion:
    """One expansion: each key resolved once (inside out), bounded in depth and size."""

    __slots__ = ("keys", "limit", "missing", "resolved", "store")

    def __init__(
        self,
        store: OffloadStore | None,
        missing: list[str],
        keys: Collection[str] | None,
        limit: int,
    ) -> None:
        self.store = store
        self.missing = missing
        self.keys = keys
        self.limit = limit
        self.resolved: dict[str, str | None] = {}

    def text(self, text: str, stack: tuple[str, ...]) -> str:
        if LITERAL not in text:
            return text
        pieces: list[str] = []
        size = cursor = 0
        for match in CX_MARKER.finditer(text):
            key = match.group(1)
            if self.keys is not None and key not in self.keys:
                continue  # not a marker this record's pipeline wrote: literal text
            original = self.key(key, stack)
            if original is None:
                continue
            head = text[cursor : match.start()]
            pieces += (head, original)
            size += len(head) + len(original)
            if size > self.limit:
                raise StashError(
                    f"stash expansion exceeds {self.limit} characters (at <<cx:{key}>>)"
                )
            cursor = match.end()
        if not pieces:
            return text
        pieces.append(text[cursor:])
        if size + len(text) - cursor > self.limit:
            raise StashError(f"stash expansion exceeds {self.limit} characters")
        return "".join(pieces)

    def key(self, key: str, stack: tuple[str, ...]) -> str | None:
        if key in self.resolved:
            return self.resolved[key]
        if key in stack:
            raise StashError(f"stash {key} holds its own marker (through {len(stack)} stashes)")
        if len(stack) >= MAX_DEPTH:
            raise StashError(f"stashes nest deeper than {MAX_DEPTH} levels (at {key})")
        stored = self.store.get(key) if self.store is not None else None
        if stored is None:
            self.missing.append(key)
            self.resolved[key] = None
            return None
        original = self.text(stored, (*stack, key))
        self.resolved[key] = original
        return original
