"""The read-lifecycle notes: ``… superseded read of PATH (N lines); newer copy in message I``.

Written as the note of a stash marker (:mod:`workers.markers.stash`); the
``newer copy`` index is a back-reference that other engines must respect
(the newer read must stay visible).  ``… stale read of PATH (N lines); the
file was changed in message I`` carries no back-reference.
"""

from __future__ import annotations

import re

__all__ = ["LITERAL", "NEWER_COPY_NOTE", "stale_note", "superseded_note"]

LITERAL = "… superseded read of "
NEWER_COPY_NOTE = re.compile(
    r"… superseded read of [^\n]{0,300}?; newer copy in message (-?\d{1,9})"
)


def superseded_note(path: str, nlines: int, index: int) -> str:
    return f"superseded read of {path} ({nlines} lines); newer copy in message {index}"


def stale_note(path: str, nlines: int, index: int) -> str:
    return f"stale read of {path} ({nlines} lines); the file was changed in message {index}"
