"""Shared bits of the CLI: opening files, the progress bar, user-facing errors."""

from __future__ import annotations

import io
import os
import stat
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import IO, Any, BinaryIO, cast

from workers.core.errors import CtxpressError
from workers.pipeline.batch import LongLine

__all__ = [
    "Progress",
    "UserError",
    "offload_dir",
    "open_in",
    "open_out",
    "read_lines",
    "refuse_overwrite",
]


class UserError(CtxpressError):
    """A problem the user can fix; printed as one line, exit code 2."""


def open_in(path: str) -> tuple[BinaryIO, int | None]:
    """A binary input stream and its size (None for stdin)."""
    if path == "-":
        return sys.stdin.buffer, None
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed by the caller
    except FileNotFoundError as exc:
        raise UserError(
            f"input file {path!r} does not exist; pass -i FILE or -i - for stdin"
        ) from exc
    except IsADirectoryError as exc:
        raise UserError(f"input {path!r} is a directory; pass a JSONL file") from exc
    return handle, os.fstat(handle.fileno()).st_size


class _OutFile(io.FileIO):
    """A file whose write errors (``/dev/full``, a full disk) are one-line user errors."""

    def write(self, data: Any) -> int:
        try:
            return super().write(data)
        except OSError as exc:
            raise UserError(f"cannot write {self.name!r}: {exc.strerror or exc}") from exc


@contextmanager
def open_out(path: str | None) -> Iterator[BinaryIO | None]:
    if path is None:
        yield None
        return
    if path == "-":
        yield sys.stdout.buffer
        try:
            sys.stdout.buffer.flush()
        except OSError as exc:
            raise UserError(f"cannot write to stdout: {exc.strerror or exc}") from exc
        return
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise UserError(f"cannot write {path!r}: directory {parent!r} does not exist")
    if os.path.isdir(path):
        raise UserError(f"cannot write {path!r}: it is a directory; pass a file name")
    try:
        raw = _OutFile(path, "w")
    except OSError as exc:
        raise UserError(f"cannot write {path!r}: {exc.strerror or exc}") from exc
    with io.BufferedWriter(raw) as handle:
        yield cast(BinaryIO, handle)


def refuse_overwrite(source: BinaryIO, outputs: Iterable[tuple[str, str | None]]) -> None:
    """Refuse an output that is the input (or another output): opening it would truncate it.

    ``outputs`` are ``(flag, path)`` pairs; devices and pipes (``/dev/null``) may repeat.
    """
    seen: dict[object, str] = {}
    try:
        st_in = os.fstat(source.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):
        st_in = None
    if st_in is not None and stat.S_ISREG(st_in.st_mode):
        seen[(st_in.st_dev, st_in.st_ino)] = "the input"
    for flag, path in outputs:
        if path is None or path == "-":
            continue
        key: object
        try:
            st = os.stat(path)
        except FileNotFoundError:
            key = os.path.realpath(path)
        except OSError:
            continue
        else:
            if not stat.S_ISREG(st.st_mode):
                continue
            key = (st.st_dev, st.st_ino)
        if key in seen:
            raise UserError(
                f"{flag} {path!r} is {seen[key]}; writing it would destroy it, choose another file"
            )
        seen[key] = f"also the file of {flag}"


def offload_dir(path: str, create: bool) -> str:
    """``path`` checked as an offload directory (created when ``create`` and missing)."""
    if os.path.isdir(path):
        return path
    if os.path.exists(path):
        raise UserError(f"--offload {path!r} is not a directory; pass the stash directory")
    if not create:
        raise UserError(f"--offload {path!r} does not exist; pass the directory compress wrote")
    return path


CHUNK = 1 << 20


def read_lines(stream: BinaryIO, limit: int) -> Iterator[bytes]:
    """The lines of ``stream`` (with their ``\n``), read in chunks and bounded by ``limit``.

    A line longer than ``limit`` is never held whole: it comes as a :class:`LongLine`
    (its first 64 KiB and its size), which the batch pipeline dead-letters.
    """
    pending = bytearray()
    long_size = 0  # > 0 while skipping the rest of a too long line
    long_head = b""
    while True:
        chunk = stream.read(CHUNK)
        if not chunk:
            break
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end == -1 else chunk[start : end + 1]
            if long_size:
                long_size += len(piece)
            elif len(pending) + len(piece) > limit + 1:
                long_head = bytes((pending + piece[: 1 << 16])[: 1 << 16])
                long_size = len(pending) + len(piece)
                pending.clear()
            else:
                pending += piece
            if end == -1:
                break
            if long_size:
                yield LongLine(long_head, long_size)
                long_size = 0
            else:
                yield bytes(pending)
                pending.clear()
            start = end + 1
    if long_size:
        yield LongLine(long_head, long_size)
    elif pending:
        yield bytes(pending)


class Progress:
    """A one-line progress bar on stderr (only when stderr is a terminal or forced)."""

    def __init__(
        self,
        total_bytes: int | None,
        stream: IO[str] | None = None,
        enabled: bool | None = None,
        position: Callable[[], int] | None = None,
    ) -> None:
        """``position``: bytes of the input read so far (compressed input: its compressed
        bytes, to go with ``total_bytes``); a negative answer means "count the lines' sizes"."""
        self.position = position
        self.total = total_bytes
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.done = 0
        self.records = 0
        self.started = time.perf_counter()
        self._last = 0.0

    def update(self, size: int, records: int = 1) -> None:
        at = self.position() if self.position is not None else -1
        self.done = at if at >= 0 else self.done + size
        self.records += records
        now = time.perf_counter()
        if self.enabled and now - self._last >= 0.2:
            self._last = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        elapsed = max(now - self.started, 1e-9)
        rate = self.done / elapsed / 1e6
        if self.total:
            frac = min(self.done / self.total, 1.0)
            filled = int(frac * 30)
            bar = "#" * filled + "-" * (30 - filled)
            eta = (self.total - self.done) / (self.done / elapsed) if self.done else 0.0
            text = f"\r[{bar}] {frac * 100:5.1f}% {self.records:,} records {rate:.1f} MB/s ETA {eta:.0f}s "
        else:
            text = f"\r{self.records:,} records {self.done / 1e6:.1f} MB {rate:.1f} MB/s "
        self.stream.write(text)
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self._draw(time.perf_counter())
            self.stream.write("\n")
            self.stream.flush()
