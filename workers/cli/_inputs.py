"""What ``ctxpress compress`` reads, and why a run in which nothing came out failed.

``Lines`` wraps the input's lines and keeps the first bytes seen, so that a run
whose every line became a dead letter can say in one line what the input
really was (a JSON array, a compressed file, one pretty-printed document)
instead of exiting 0 with an empty output.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

__all__ = ["HEAD_BYTES", "Lines", "Verdict", "diagnose", "ratio", "verdict"]

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


def diagnose(head: bytes) -> str:
    """Why no line of an input starting with ``head`` was a record, in one line."""
    packed = compression_of(head)
    if packed in ("gzip", "zstd"):
        return (
            f"the input is {packed}-compressed: name the file *.jsonl.{'gz' if packed == 'gzip' else 'zst'} "
            "or pipe it through a decompressor first"
        )
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
    return "every line was a dead letter; pass --dead-letter FILE to see why"


@dataclass(frozen=True, slots=True)
class Verdict:
    status: int
    message: str | None = None


def verdict(records: int, dead_letters: int, head: bytes, max_ratio: float | None) -> Verdict:
    """Exit status of a run: 1 when no record came out of a non-empty input or too many lines failed."""
    lines = records + dead_letters
    if lines and not records:
        return Verdict(1, f"no record came out of {lines:,} line(s): {diagnose(head)}")
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
