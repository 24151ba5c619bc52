"""Content-addressed store for the originals that lossy engines stash.

A stashed text lives under ``stash_key(text)``: the sha256 prefix (16 hex
digits) of what is stored, the *redacted* text, so a key never tells whether a
guessed secret was in the original (no hash oracle); the compressed text
carries ``<<cx:KEY>>`` after a short note that says what was dropped.  Stores: in-memory (tests, one-shot runs), a
directory (batch CLI ``--offload DIR``), and a compacted Kafka topic (the
worker).  ``put`` is idempotent: the same text always has the same key.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from abc import ABC, abstractmethod
from functools import lru_cache
from pathlib import Path

from workers.core.redact import redact

__all__ = ["DirectoryStore", "MemoryStore", "OffloadStore", "stash_key", "stored_text"]

KEY_HEX = 16


@lru_cache(maxsize=256)
def stored_text(text: str) -> str:
    """What the store keeps for ``text``: ``text`` with its secrets redacted."""
    return redact(text)


def stash_key(text: str) -> str:
    """The key of ``text`` in a store: the sha256 prefix of :func:`stored_text` (not of ``text``)."""
    stored = stored_text(text)
    return hashlib.sha256(stored.encode("utf-8", "surrogatepass")).hexdigest()[:KEY_HEX]


class OffloadStore(ABC):
    @abstractmethod
    def put(self, key: str, text: str) -> None: ...

    @abstractmethod
    def get(self, key: str) -> str | None: ...

    def put_many(self, items: dict[str, str]) -> None:
        for key, text in items.items():
            self.put(key, text)


class MemoryStore(OffloadStore):
    """Dict-backed store for tests and one-shot runs."""

    def __init__(self) -> None:
        self.items: dict[str, str] = {}

    def put(self, key: str, text: str) -> None:
        self.items.setdefault(key, text)

    def get(self, key: str) -> str | None:
        return self.items.get(key)

    def __len__(self) -> int:
        return len(self.items)


class DirectoryStore(OffloadStore):
    """One file per key under ``root/ab/KEY`` (atomic writes, safe to share)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        if not key.isalnum():
            raise ValueError(f"invalid offload key {key!r}")
        return self.root / key[:2] / key

    def put(self, key: str, text: str) -> None:
        path = self._path(key)
        if path.exists():
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.replace(tmp, path)

    def get(self, key: str) -> str | None:
        try:
            with open(self._path(key), encoding="utf-8", newline="") as handle:
                return handle.read()
        except (FileNotFoundError, ValueError):
            return None
