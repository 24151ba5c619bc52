"""What ``ctxpress compress`` and ``expand`` read and write, and why a run that gave nothing failed.

- ``open_input``: a file or stdin, gzip- or zstd-compressed ones decompressed
  on the fly (recognised by their magic bytes, whatever their name), with the
  compressed bytes read so far for the progress bar; ``--input-format
  json-array`` turns a JSON array into JSONL as it streams (``ArrayToLines``:
  one element per line, whitespace outside strings dropped, every lexeme kept
  as written; memory does not grow with the array or an element).
- ``open_output``: ``*.gz`` and ``*.zst`` outputs are compressed (gzip without
  a name or a time stamp in its header, so equal runs give equal bytes).
- ``Lines`` keeps the first bytes of the input's lines, so that a run whose
  every line became a dead letter can say in one line what the input really
  was (a JSON array, a compressed file, one pretty-printed document)
  instead of exiting 0 with an empty output; ``verdict`` is the exit status.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, BinaryIO, cast

from workers.cli._common import UserError, open_in, open_out

__all__ = [
    "HEAD_BYTES",
    "INPUT_FORMATS",
    "ArrayToLines",
    "Lines",
    "Verdict",
    "diagnose",
    "open_input",
    "open_output",
    "ratio",
    "verdict",
]

INPUT_FORMATS = ("jsonl", "json-array")
CHUNK = 1 << 20

HEAD_BYTES = 4096

_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x1f\x8b", "gzip"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"PK\x03\x04", "zip"),
)


class Lines:
    """The input's lines, passed through; ``head`` holds their first bytes."""

    def __init__(self, lines: Iterable[bytes]) -> None:
        self._lines = lines
        self.head = b""

    def __iter__(self) -> Iterator[bytes]:
        for line in self._lines:
            if len(self.head) < HEAD_BYTES:
                self.head += line[: HEAD_BYTES - len(self.head)]
            yield line


def compression_of(head: bytes) -> str | None:
    """The compression format named by the magic bytes at the start of ``head``."""
    for magic, name in _MAGIC:
        if head.startswith(magic):
            return name
    return None


def diagnose(head: bytes, reason: str | None = None, letters: str | None = None) -> str:
    """Why no line of an input starting with ``head`` was a record, in one line (``reason``:
    the first dead letter's; ``letters``: the --dead-letter file, if any)."""
    packed = compression_of(head)  # gzip and zstd are read, so never seen here
    if packed is not None:
        return f"the input is {packed}-compressed: decompress it first (ctxpress reads JSONL, .gz and .zst)"
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"["):
        return "the input looks like a JSON array, not JSONL: pass --input-format json-array"
    first = text.split(b"\n", 1)[0].strip()
    if first in (b"{", b"{\r") or (
        text.startswith(b"{") and b"\n" in text and not first.endswith(b"}")
    ):
        return (
            "the input looks like one JSON document over several lines, not JSONL "
            "(one record per line): write each record on one line"
        )
    where = f"see {letters} for each" if letters else "pass --dead-letter FILE to see each"
    if reason:
        return f"every line was a dead letter, the first because {reason} ({where})"
    return f"every line was a dead letter ({where})"


@dataclass(frozen=True, slots=True)
class Verdict:
    status: int
    message: str | None = None


def verdict(
    records: int,
    dead_letters: int,
    head: bytes,
    max_ratio: float | None,
    first: str | None = None,
    letters: str | None = None,
) -> Verdict:
    """Exit status of a run: 1 when no record came out of a non-empty input or too many lines failed."""
    lines = records + dead_letters
    if lines and not records:
        why = diagnose(head, first, letters)
        return Verdict(1, f"no record came out of {lines:,} line(s): {why}")
    if max_ratio is not None and lines and dead_letters / lines > max_ratio:
        return Verdict(
            1,
            f"{dead_letters:,} of {lines:,} line(s) ({100 * dead_letters / lines:.1f}%) were dead "
            f"letters, above --max-dead-letter-ratio {max_ratio:g}",
        )
    return Verdict(0)


def ratio(text: str) -> float:
    """An argparse type: a number from 0 to 1."""
    import argparse

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number from 0 to 1") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number from 0 to 1")
    return value


# -- reading -------------------------------------------------------------------


class _Counting(io.RawIOBase):
    """A raw stream that counts the bytes read from ``inner`` (the compressed ones)."""

    def __init__(self, inner: BinaryIO) -> None:
        self.inner = inner
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.inner.read(len(buffer))
        n = len(data)
        buffer[:n] = data
        self.count += n
        return n

    def fileno(self) -> int:
        return self.inner.fileno()


class _Unpacking(io.RawIOBase):
    """The decompressed bytes of ``inner``; a corrupt stream is a one-line user error."""

    def __init__(self, inner: Any, packed: str, name: str, closing: Any) -> None:
        self.inner = inner
        self.packed = packed
        self.name_ = name
        self.closing = closing

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            data = self.inner.read(len(buffer))
        except (OSError, EOFError, ValueError) as exc:  # gzip.BadGzipFile, zstd.ZstdError
            raise UserError(
                f"input {self.name_}: the {self.packed} stream is corrupt or truncated ({exc})"
            ) from exc
        n = len(data)
        buffer[:n] = data
        return n

    def fileno(self) -> int:
        return int(self.closing.fileno())


def _stdin_size(handle: BinaryIO) -> int | None:
    """What is left of stdin when it is a regular file (``< file``), else None (a pipe)."""
    try:
        st = os.fstat(handle.fileno())
        if stat.S_ISREG(st.st_mode):
            return max(st.st_size - os.lseek(handle.fileno(), 0, os.SEEK_CUR), 0)
    except (OSError, ValueError, io.UnsupportedOperation):
        return None
    return None


def _peek(handle: BinaryIO, n: int) -> bytes:
    peek = getattr(handle, "peek", None)
    if peek is not None:
        return bytes(peek(n)[:n])
    return b""


def open_input(
    path: str, input_format: str = "jsonl"
) -> tuple[BinaryIO, int | None, Callable[[], int]]:
    """The input as a JSONL byte stream, its size on disk (None: unknown) and the bytes read so far.

    A gzip or zstd stream (by its magic bytes, on stdin too) is decompressed; the
    position counts compressed bytes, so it goes with the size for rate and ETA.
    ``json-array`` input is turned into JSONL as it is read.
    """
    handle, size = open_in(path)
    if path == "-":
        size = _stdin_size(handle)
    name = "stdin" if path == "-" else repr(path)
    packed = compression_of(_peek(handle, 4))
    stream: BinaryIO = handle
    counter = _Counting(handle)
    position: Callable[[], int] | None = None
    if packed in ("gzip", "zstd"):
        counted = io.BufferedReader(counter, CHUNK)
        inner: Any
        if packed == "gzip":
            inner = gzip.GzipFile(fileobj=counted, mode="rb")
        else:
            import zstandard

            inner = zstandard.ZstdDecompressor().stream_reader(counted, read_across_frames=True)
        stream = cast(BinaryIO, io.BufferedReader(_Unpacking(inner, packed, name, handle), CHUNK))
        position = lambda: counter.count  # noqa: E731
    if input_format == "json-array":
        counted_lines = _Counting(stream)
        stream = cast(BinaryIO, io.BufferedReader(ArrayToLines(counted_lines, name), CHUNK))
        if position is None:
            position = lambda: counted_lines.count  # noqa: E731
    if position is None:
        return stream, size, _no_position
    return stream, size, position


def _no_position() -> int:
    return -1


_OUTSIDE = re.compile(rb'["\[\]{},\s]')
_INSIDE = re.compile(rb'["\\]')
_WHITESPACE = frozenset(b" \t\r\n")


class ArrayToLines(io.RawIOBase):
    """A JSON array read as JSONL: each element on one line, whitespace outside strings dropped.

    Streaming: a chunk in, its elements' bytes out; nothing is kept but the
    scanner's state (depth, inside a string, after a backslash), so memory is
    bounded whatever the size of the array or of one element.  Lexemes are
    copied as written (numbers, escapes), so each line is the element's own
    JSON, compact.  What is not an array is a one-line user error.
    """

    def __init__(self, inner: Any, name: str) -> None:
        self.inner = inner
        self.name_ = name
        self.depth = 0
        self.started = False
        self.ended = False
        self.in_string = False
        self.escape = False
        self.line_open = False  # bytes of the current element written
        self.elements = 0
        self.pending = b""
        self.eof = False
        self.offset = 0  # input bytes scanned (for error messages)

    def readable(self) -> bool:
        return True

    def fileno(self) -> int:
        return int(self.inner.fileno())

    def readinto(self, buffer: Any) -> int:
        while not self.pending and not self.eof:
            chunk = self.inner.read(CHUNK)
            if not chunk:
                self.eof = True
                self._finish()
                break
            self.pending = self._scan(bytes(chunk))
        n = min(len(buffer), len(self.pending))
        buffer[:n] = self.pending[:n]
        self.pending = self.pending[n:]
        return n

    def _fail(self, what: str) -> None:
        raise UserError(f"input {self.name_} is not a JSON array: {what}")

    def _finish(self) -> None:
        if not self.started:
            self._fail("it is empty or has only whitespace")
        if not self.ended:
            raise UserError(
                f"input {self.name_}: the JSON array ends inside element {self.elements + 1} "
                "(no closing ']': truncated?)"
            )

    def _scan(self, chunk: bytes) -> bytes:
        out = bytearray()
        pos, end = 0, len(chunk)
        if self.offset == 0 and chunk.startswith(b"\xef\xbb\xbf"):
            pos = 3
        while pos < end:
            if self.escape:
                out += chunk[pos : pos + 1]
                self.escape = False
                pos += 1
                continue
            if self.in_string:
                m = _INSIDE.search(chunk, pos)
                if m is None:
                    out += chunk[pos:]
                    break
                out += chunk[pos : m.end()]
                pos = m.end()
                if m.group() == b"\\":
                    self.escape = True
                else:
                    self.in_string = False
                continue
            m = _OUTSIDE.search(chunk, pos)
            stop = end if m is None else m.start()
            if stop > pos:  # a number or literal (or garbage) outside strings
                if self.depth == 0:
                    self._fail(
                        f"found {chunk[pos : pos + 20]!r} at byte {self.offset + pos} "
                        + ("after the closing ']'" if self.ended else "before its opening '['")
                    )
                out += chunk[pos:stop]
                self.line_open = True
            if m is None:
                break
            pos = m.end()
            c = m.group()[0]
            if c in _WHITESPACE:
                continue
            if self.depth == 0:
                if c == 0x5B and not self.started:  # [
                    self.started = True
                    self.depth = 1
                    continue
                where = "after the closing ']'" if self.ended else "before its opening '['"
                self._fail(f"found {chr(c)!r} at byte {self.offset + pos - 1} {where}")
            if c == 0x22:  # "
                out.append(c)
                self.in_string = True
                self.line_open = True
            elif c in (0x5B, 0x7B):  # [ {
                out.append(c)
                self.depth += 1
                self.line_open = True
            elif c in (0x5D, 0x7D):  # ] }
                self.depth -= 1
                if self.depth == 0:
                    self.ended = True
                    self._end_element(out)
                else:
                    out.append(c)
            elif self.depth == 1:  # , between elements
                self._end_element(out)
            else:
                out.append(c)
        self.offset += end
        return bytes(out)

    def _end_element(self, out: bytearray) -> None:
        if self.line_open:
            out += b"\n"
            self.elements += 1
            self.line_open = False


# -- writing -------------------------------------------------------------------


@contextmanager
def open_output(path: str | None) -> Iterator[BinaryIO | None]:
    """``open_out``, compressing ``*.gz`` (gzip) and ``*.zst`` (zstd) files by their suffix."""
    with open_out(path) as handle:
        if handle is None or path is None or path == "-":
            yield handle
            return
        lowered = path.lower()
        if lowered.endswith(".gz"):
            # no file name and mtime 0 in the header: the same run writes the same bytes
            with gzip.GzipFile(filename="", fileobj=handle, mode="wb", mtime=0) as packed:
                yield cast(BinaryIO, packed)
        elif lowered.endswith((".zst", ".zstd")):
            import zstandard

            writer = zstandard.ZstdCompressor(level=3).stream_writer(handle, closefd=False)
            with writer:
                yield cast(BinaryIO, writer)
        else:
            yield handle
