"""Shared bits of the CLI: opening files, the progress bar, user-facing errors."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, BinaryIO

from workers.core.errors import CtxpressError

__all__ = ["Progress", "UserError", "open_in", "open_out"]


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


@contextmanager
def open_out(path: str | None) -> Iterator[BinaryIO | None]:
    if path is None:
        yield None
        return
    if path == "-":
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise UserError(f"cannot write {path!r}: directory {parent!r} does not exist")
    with open(path, "wb") as handle:
        yield handle


class Progress:
    """A one-line progress bar on stderr (only when stderr is a terminal or forced)."""

    def __init__(
        self, total_bytes: int | None, stream: IO[str] | None = None, enabled: bool | None = None
    ) -> None:
        self.total = total_bytes
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.done = 0
        self.records = 0
        self.started = time.perf_counter()
        self._last = 0.0

    def update(self, size: int, records: int = 1) -> None:
        self.done += size
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
