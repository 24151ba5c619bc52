"""The ``… NOTE <<cx:KEY>>`` stash marker: grammar, writers and decoder.

A lossy engine replaces a dropped span by a short note that says what was
dropped, then ``<<cx:KEY>>``; the span is stashed under ``KEY =
stash_key(span)`` (:mod:`workers.core.offload`).  Expanding replaces the whole
marker, from ``…`` to ``>>``, by the stashed text, recursively (a stashed
text may hold markers of earlier engines).

Two note rules exist, each kept byte for byte since the outputs depend on
them: :func:`safe_note` (read-lifecycle, datauri, whitespace, smartcrush,
structured: no control or marker characters at all) and :func:`short_note`
(the line-dropping engines: one line, ``<<`` defused).
"""

from __future__ import annotations

import re

from workers.core.offload import KEY_HEX, OffloadStore, stash_key

__all__ = [
    "CX_MARKER",
    "KEY_PATTERN",
    "LITERAL",
    "MAX_DEPTH",
    "NOTE_CAP",
    "expand_offload",
    "offload_marker",
    "safe_note",
    "short_note",
    "stash_marker",
]

LITERAL = "<<cx:"
KEY_PATTERN = re.compile(rf"<<cx:[0-9a-f]{{{KEY_HEX}}}>>")
CX_MARKER = re.compile(rf"…(?: [^\n]{{0,300}}?)? <<cx:([0-9a-f]{{{KEY_HEX}}})>>")
MAX_DEPTH = 32  # nested stashes expanded at most this deep
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
    """One line, ``<<`` defused, at most :data:`NOTE_CAP` characters."""
    return note.replace("\n", " ").replace("<<", "«")[:NOTE_CAP]


def stash_marker(note: str, original: str) -> tuple[str, str]:
    """``(marker, key)`` for replacing ``original`` by ``… note <<cx:KEY>>`` (safe note)."""
    key = stash_key(original)
    return offload_marker(safe_note(note), key), key


def expand_offload(text: str, store: OffloadStore | None, missing: list[str]) -> str:
    """``text`` with every stash marker whose key ``store`` holds replaced by the original.

    Keys the store does not hold are appended to ``missing`` and their
    markers stay as they are.
    """
    for _ in range(MAX_DEPTH):
        if LITERAL not in text:
            return text

        def replace(match: re.Match[str]) -> str:
            key = match.group(1)
            original = store.get(key) if store is not None else None
            if original is None:
                missing.append(key)
                return match.group(0)
            return original

        new = CX_MARKER.sub(replace, text)
        if new == text:
            return text
        text = new
    return text
