"""Every position of a set of literals in a text, in one pass (Hyperscan).

``LiteralScanner(literals, caseless=...)`` compiles the literals once; ``positions(text)``
gives, per literal, the sorted start indexes (in characters) of all its occurrences,
overlapping ones included: what a ``str.find`` loop per literal gives, but one scan of the
text instead of one per literal.  ``caseless`` matches ASCII letters in either case, like
finding the literals in ``text.lower()`` when that lowering keeps every character where it
was and maps no other character to an ASCII letter; :func:`caseless_like_lower` tells when.

Hyperscan is a compiled automaton (Intel's multi-pattern matcher, the ``hyperscan`` wheel on
PyPI).  Where it cannot be loaded, :func:`scanner` returns ``None`` and callers keep their
``str.find`` loops: the results are the same, only slower.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

__all__ = ["LiteralScanner", "caseless_like_lower", "scanner"]

_hs: Any
try:
    import hyperscan as _hs
except ImportError:  # pragma: no cover - where the wheel is missing
    _hs = None

# the only characters outside ASCII whose lower case is one ASCII letter (the Kelvin sign
# lowers to "k"); and the only one whose lower case is longer than one character ("İ")
_LOWERS_TO_ASCII = "\u212a"


def caseless_like_lower(text: str) -> bool:
    """Whether ASCII-caseless positions in ``text`` are the positions in ``text.lower()``
    (or in its ASCII fallback, when lowering changes the length: every other character then
    stands as ``?``)."""
    return _LOWERS_TO_ASCII not in text


class LiteralScanner:
    """The literals of one set, compiled into one Hyperscan block-mode database."""

    def __init__(self, literals: Sequence[str], caseless: bool = False) -> None:
        if _hs is None:
            raise RuntimeError("hyperscan is not installed")
        if not literals or any(not lit.isascii() or not lit for lit in literals):
            raise ValueError("literals must be non-empty ASCII strings")
        self.literals = tuple(literals)
        flags = _hs.HS_FLAG_SOM_LEFTMOST | (_hs.HS_FLAG_CASELESS if caseless else 0)
        self._db = _hs.Database(mode=_hs.HS_MODE_BLOCK)
        self._db.compile(
            expressions=[_escape(lit).encode("ascii") for lit in self.literals],
            ids=list(range(len(self.literals))),
            elements=len(self.literals),
            flags=[flags] * len(self.literals),
        )
        self._local = threading.local()  # a scratch space per thread (one scan at a time)

    def positions(self, text: str) -> dict[str, list[int]]:
        """literal -> sorted start indexes in ``text`` (only literals that occur)."""
        scratch = getattr(self._local, "scratch", None)
        if scratch is None:
            scratch = self._local.scratch = _hs.Scratch(self._db)
        data = text.encode("utf-8", "surrogatepass")
        hits: list[tuple[int, int]] = []

        def on_match(index: int, start: int, end: int, flags: int, context: Any) -> None:
            hits.append((start, index))

        self._db.scan(data, match_event_handler=on_match, scratch=scratch)
        if not hits:
            return {}
        hits.sort()
        if len(data) != len(text):  # byte offsets -> character offsets
            hits = _char_offsets(data, hits)
        out: dict[str, list[int]] = {}
        for start, index in hits:
            out.setdefault(self.literals[index], []).append(start)
        return out


def _escape(literal: str) -> str:
    """``literal`` as a Hyperscan pattern that matches it exactly."""
    return "".join(c if c.isalnum() else f"\\x{ord(c):02x}" for c in literal)


def _char_offsets(data: bytes, hits: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``hits`` (sorted byte offsets, each at a character boundary: literals are ASCII)
    as character offsets: one decode of the bytes between consecutive hits."""
    out: list[tuple[int, int]] = []
    byte = char = 0
    for start, index in hits:
        if start != byte:
            char += len(data[byte:start].decode("utf-8", "surrogatepass"))
            byte = start
        out.append((char, index))
    return out


_SCANNERS: dict[tuple[tuple[str, ...], bool], LiteralScanner | None] = {}


def scanner(literals: Sequence[str], caseless: bool = False) -> LiteralScanner | None:
    """A shared scanner for ``literals`` (built once), or ``None`` without Hyperscan."""
    key = (tuple(literals), caseless)
    if key not in _SCANNERS:
        try:
            _SCANNERS[key] = LiteralScanner(literals, caseless) if _hs is not None else None
        except Exception:  # a database that will not compile here: the callers' own loops
            _SCANNERS[key] = None
    return _SCANNERS[key]
