"""The one place ctxpress builds aiokafka clients, and reaches into aiokafka's private API.

Every producer, consumer and admin client of the service, the CLI and the
benchmarks is built here from a *connection* (``bootstrap_servers`` plus the
security options of :func:`~workers.service.kafka.options.client_options`)
and the caller's own options.  :func:`partitions_of` is the metadata-refresh
dance (ask, refresh once, ask again) that a client needs for a topic created
after it started; it is the only code that touches aiokafka's private
``_client`` of a consumer.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from workers.core.settings import Settings
from workers.service.kafka.options import bootstrap_list, client_options

__all__ = [
    "admin",
    "connection",
    "consumer",
    "kafka_error_hint",
    "partitions_of",
    "producer",
    "refresh_metadata",
]


def connection(
    settings: Settings | None = None,
    bootstrap: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """``bootstrap_servers`` and security options, from settings or given as they are."""
    if settings is not None:
        return {
            "bootstrap_servers": ",".join(bootstrap_list(settings)),
            **client_options(settings),
        }
    return {"bootstrap_servers": bootstrap, **dict(options or {})}


@functools.cache
def _closing(base: type, close: str) -> type:
    """``base`` whose ``start()`` closes the client when it fails (an auth error, no broker),
    so a failed start leaves no "Unclosed AIOKafkaProducer" warning and no open sockets."""

    base_start: Any = base.start  # type: ignore[attr-defined]

    async def start(self: Any) -> None:
        try:
            await base_start(self)
        except BaseException:
            try:
                await getattr(self, close)()
            except Exception:  # the start failure is what the caller must see
                pass
            raise

    cls: type = type(base.__name__, (base,), {"start": start, "__module__": __name__})
    return cls


def producer(conn: Mapping[str, Any], **options: Any) -> Any:
    """An ``AIOKafkaProducer`` (not started)."""
    from aiokafka import AIOKafkaProducer

    return _closing(AIOKafkaProducer, "stop")(**{**conn, **options})


def consumer(conn: Mapping[str, Any], *topics: str, **options: Any) -> Any:
    """An ``AIOKafkaConsumer`` (not started), subscribed to ``topics`` if any."""
    from aiokafka import AIOKafkaConsumer

    return _closing(AIOKafkaConsumer, "stop")(*topics, **{**conn, **options})


def admin(conn: Mapping[str, Any], **options: Any) -> Any:
    """An ``AIOKafkaAdminClient`` (not started)."""
    from aiokafka.admin import AIOKafkaAdminClient

    return _closing(AIOKafkaAdminClient, "close")(**{**conn, **options})


async def refresh_metadata(client: Any) -> None:
    """Force a metadata update on a started producer or consumer."""
    inner = getattr(client, "client", None)  # AIOKafkaProducer.client is public
    if inner is None:
        inner = client._client  # AIOKafkaConsumer keeps it private
    await inner.force_metadata_update()


async def partitions_of(client: Any, topic: str) -> set[int] | None:
    """The partitions of ``topic`` (None: unknown to the broker), refreshing metadata once."""
    lookup = (
        client.partitions_for_topic
        if hasattr(client, "partitions_for_topic")
        else client.client.cluster.partitions_for_topic
    )
    partitions = lookup(topic)
    if partitions is None:
        await refresh_metadata(client)
        partitions = lookup(topic)
    return set(partitions) if partitions is not None else None


def kafka_error_hint(exc: BaseException, command: str, settings_hint: bool = True) -> str | None:
    """The one-line message for a Kafka or network error of ``command``; None for others."""
    from aiokafka.errors import KafkaError

    if not isinstance(exc, KafkaError | OSError):
        return None
    where = " and CTXPRESS_KAFKA_BOOTSTRAP right" if settings_hint else ""
    return (
        f"ctxpress {command}: Kafka error: {type(exc).__name__}: {exc}. Is the broker "
        f"running ('ctxpress kafka start'){where}?"
    )
