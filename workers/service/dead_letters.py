"""Dead-letter conventions: header names a Kafka user recognises (Kafka Connect's style).

Every dead letter carries the ``ctxpress.dlq.*`` headers below, in this order;
``ctxpress dlq replay`` drops them before re-publishing an input.
"""

from __future__ import annotations

__all__ = ["DLQ_HEADERS", "DLQ_PREFIX"]

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
