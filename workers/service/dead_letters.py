"""Dead-letter conventions: header names a Kafka user recognises (Kafka Connect's style).

Every dead letter carries the ``ctxpress.dlq.*`` headers below, in this order;
``ctxpress dlq replay`` drops them before re-publishing an input.
"""

from __future__ import annotations

__all__ = [
    "COPIED_HEADERS_BYTES",
    "DLQ_HEADERS",
    "DLQ_PREFIX",
    "MAX_HEADER_MESSAGE",
    "MAX_KEY_BYTES",
    "PREFIX_CHARS",
]

DLQ_PREFIX = "ctxpress.dlq."
#: Header names of a dead letter, in the order they are written.
DLQ_HEADERS = (
    "ctxpress.dlq.original.topic",
    "ctxpress.dlq.original.partition",
    "ctxpress.dlq.original.offset",
    "ctxpress.dlq.original.timestamp",
    "ctxpress.dlq.original.consumer.group",
    "ctxpress.dlq.error.class",
    "ctxpress.dlq.error.message",
    "ctxpress.dlq.error.stage",
    "ctxpress.dlq.error.engine",
    "ctxpress.dlq.record.id",
    "ctxpress.dlq.time",
    "ctxpress.dlq.replayable",
)
MAX_HEADER_MESSAGE = 1000
#: At most this many bytes of the input's own headers are copied onto a dead letter.
COPIED_HEADERS_BYTES = 64 * 1024
#: A cut dead letter keeps at most this many characters of the original value.
PREFIX_CHARS = 64 * 1024
#: ... and at most this many bytes of the original key.
MAX_KEY_BYTES = 16 * 1024
