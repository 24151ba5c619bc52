"""Content-addressed store for the originals that lossy engines stash.

A stashed text lives under ``stash_key(text)``: the sha256 prefix (16 hex
digits) of what is stored, the *redacted* text, so a key never tells whether a
guessed secret was in the original (no hash oracle); the compressed text
carries ``<<cx:KEY>>`` after a short note that says what was dropped.  Stores: in-memory (tests, one-shot runs), a
directory (batch CLI ``--offload DIR``), and a compacted Kafka topic (the
worker).  ``put`` is idempotent: the same text always has the same key.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import secrets
import stat
from abc import ABC, abstractmethod
from functools import lru_cache
from pathlib import Path

from workers.core.errors import CtxpressError
from workers.core.redact import redact, redact_known

__all__ = [
    "DirectoryStore",
    "MemoryStore",
    "OffloadStore",
    "OffloadStoreError",
    "stash_key",
    "stored_text",
]

KEY_HEX = 16


# a stash marker (workers.markers.stash) inside a stashed text: "… NOTE <<cx:KEY>>"
_NESTED = re.compile(rf"…((?: [^\n…]{{0,300}}?)?) (<<cx:[0-9a-f]{{{KEY_HEX}}}>>)")


@lru_cache(maxsize=256)
def stored_text(text: str) -> str:
    """What the store keeps for ``text``: ``text`` with its secrets redacted.

    The stash markers a stashed text holds (nested stashes) are kept whole: when
    a redaction would swallow one (a key block around it), the text between the
    markers and each marker's note are redacted on their own.
    """
    redacted = redact(text)
    if redacted == text or "<<cx:" not in text:
        return redacted
    keys = [m.group(2) for m in _NESTED.finditer(text)]
    if not keys or [m.group(2) for m in _NESTED.finditer(redacted)] == keys:
        return redacted
    out: list[str] = []
    cursor = 0
    for match in _NESTED.finditer(text):
        out += (redact(text[cursor : match.start()]), "…", redact(match.group(1)), " ")
        out.append(match.group(2))
        cursor = match.end()
    out.append(redact(text[cursor:]))
    return "".join(out)


def stash_key(text: str) -> str:
    """The key of ``text`` in a store: the sha256 prefix of :func:`stored_text` (not of ``text``),
    with the secrets of the record being compressed redacted too (:func:`redact_known`)."""
    stored = redact_known(stored_text(text))
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


class OffloadStoreError(CtxpressError, ValueError):
    """A stash entry that must not be read or written (a link, not a file, too large)."""


MAX_ENTRY_BYTES = 64 << 20  # one stash entry at most (a record is at most 16 MiB of text)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class DirectoryStore(OffloadStore):
    """One file per key under ``root/ab/KEY`` (atomic writes, safe to share).

    Below ``root`` nothing is followed: a shard folder or a stash file that is
    a symbolic link (or not a directory / regular file) is refused, on read and
    on write, so neither leaves the store.  Folders are created 0700 and files
    0600 whatever the umask; an entry is at most ``max_entry_bytes`` (UTF-8).
    ``create=False`` (expand) never creates ``root``.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        create: bool = True,
        max_entry_bytes: int = MAX_ENTRY_BYTES,
    ) -> None:
        self.root = Path(root)
        self.max_entry_bytes = max_entry_bytes
        if create and not self.root.is_dir():
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.chmod(self.root, 0o700)

    def _path(self, key: str) -> Path:
        if not key.isalnum() or not key.isascii():
            raise ValueError(f"invalid offload key {key!r}")
        return self.root / key[:2] / key

    def _shard(self, key: str, create: bool) -> int | None:
        """A descriptor of the shard folder of ``key`` (never through a link), or None."""
        root = os.open(self.root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
        try:
            if create:
                try:
                    os.mkdir(key[:2], 0o700, dir_fd=root)
                    os.chmod(key[:2], 0o700, dir_fd=root, follow_symlinks=False)
                except FileExistsError:
                    pass
            try:
                return os.open(
                    key[:2], os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=root
                )
            except FileNotFoundError:
                return None
            except (NotADirectoryError, OSError) as exc:
                if isinstance(exc, NotADirectoryError) or exc.errno == errno.ELOOP:
                    raise OffloadStoreError(
                        f"offload store {self.root}: {key[:2]} is not a folder of the store "
                        "(a link or a file); refusing to follow it"
                    ) from exc
                raise
        finally:
            os.close(root)

    def put(self, key: str, text: str) -> None:
        self._path(key)
        data = text.encode("utf-8", "surrogatepass")
        if len(data) > self.max_entry_bytes:
            raise OffloadStoreError(
                f"stash entry {key} is {len(data)} bytes, over the {self.max_entry_bytes}-byte cap"
            )
        shard = self._shard(key, create=True)
        assert shard is not None
        try:
            try:
                os.stat(key, dir_fd=shard, follow_symlinks=False)
                return  # content-addressed: already there
            except FileNotFoundError:
                pass
            tmp = f".tmp-{os.getpid()}-{secrets.token_hex(8)}"
            fd = os.open(
                tmp,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC,
                0o600,
                dir_fd=shard,
            )
            try:
                os.fchmod(fd, 0o600)
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                os.replace(tmp, key, src_dir_fd=shard, dst_dir_fd=shard)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=shard)
                raise
        finally:
            os.close(shard)

    def get(self, key: str) -> str | None:
        try:
            self._path(key)
        except ValueError:
            return None
        try:
            shard = self._shard(key, create=False)
        except FileNotFoundError:
            return None  # no store folder at all
        if shard is None:
            return None
        try:
            try:
                fd = os.open(key, os.O_RDONLY | _NOFOLLOW | _CLOEXEC, dir_fd=shard)
            except FileNotFoundError:
                return None
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise OffloadStoreError(
                        f"offload store {self.root}: stash entry {key} is a link; refusing to "
                        "follow it"
                    ) from exc
                raise
        finally:
            os.close(shard)
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise OffloadStoreError(f"offload store {self.root}: {key} is not a file")
            data = handle.read(self.max_entry_bytes + 1)
        if len(data) > self.max_entry_bytes:
            raise OffloadStoreError(
                f"stash entry {key} is over the {self.max_entry_bytes}-byte cap; refusing to read it"
            )
        return data.decode("utf-8", "surrogatepass")
