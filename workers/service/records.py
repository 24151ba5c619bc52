"""The records the worker handles: one consumed Kafka record in, records to publish out.

:func:`wire_size` bounds the size aiokafka checks for one record, so that the
processor can keep every output under ``CTXPRESS_MAX_MESSAGE_BYTES``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from workers.pipeline.runner import Outcome

__all__ = [
    "HEADER_OVERHEAD",
    "MODE_HEADER",
    "InMessage",
    "OutMessage",
    "Processed",
    "header_mode",
    "wire_size",
]

#: a record's mode set by its producer (``ctxpress produce --mode``); it wins over the
#: record's own ``mode`` field, which wins over CTXPRESS_MODE
MODE_HEADER = "ctxpress.mode"


def header_mode(headers: Iterable[tuple[str, bytes]]) -> str | None:
    """The mode named by the last ``ctxpress.mode`` header (None: no such header)."""
    mode = None
    for name, value in headers:
        if name == MODE_HEADER:
            mode = value.decode("utf-8", "replace").strip()
    return mode or None


# Record overhead of the Kafka v2 format, upper bounds: batch header, then the
# record's length, attributes, timestamp and offset deltas, key and value lengths
# and header count as varints of at most 5 bytes each.
_BATCH_OVERHEAD = 61 + 1 + 5 * 6
HEADER_OVERHEAD = 10


def wire_size(key: bytes | None, value: bytes | None, headers: Iterable[tuple[str, bytes]]) -> int:
    """Upper bound of the size aiokafka checks against ``max_request_size`` for one record."""
    size = _BATCH_OVERHEAD + len(key or b"") + len(value or b"")
    for name, header in headers:
        size += HEADER_OVERHEAD + len(name.encode("utf-8")) + len(header)
    return size


@dataclass(frozen=True, slots=True)
class InMessage:
    """One consumed Kafka record (what the worker needs of it)."""

    topic: str
    partition: int
    offset: int
    timestamp_ms: int | None
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes], ...] = ()


@dataclass(frozen=True, slots=True)
class OutMessage:
    """One record to publish."""

    topic: str
    key: bytes | None
    value: bytes
    headers: tuple[tuple[str, bytes], ...] = ()


@dataclass(slots=True)
class Processed:
    """What became of one input message."""

    message: InMessage
    outputs: list[OutMessage]
    outcome: Outcome | None = None
    #: stage of the input's own dead letter (None: it was compressed)
    stage: str | None = None
    error_class: str | None = None
    reason: str | None = None
    record_id: str | None = None
    mode: str = "unknown"
    seconds: float = 0.0
    savings: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: hash -> redacted original, as published to the offload topic
    offloaded: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.outcome is not None
