"""The places ctxpress reaches into Faust's private API, kept together.

faust-streaming 0.15 offers no public hook for any of them:

- :func:`current_event`: make an event Faust's *current event*, so that a table
  write goes to that event's partition of the changelog (``faust.streams._current_event``);
- :func:`filter_commits`: let only some input offsets through the consumer's
  commit (``Consumer._commit``), so that a transactional publisher owns them;
- :func:`cap_fetch_bytes`: the worker consumer's ``fetch_max_bytes`` (Faust passes none to
  aiokafka, whose default is 50 MB per fetch: with a backlog of 50 KB records one fetch
  response and the records parsed from it held about 90 MB at once).

Upgrading Faust means checking these functions first.

:func:`input_topics` works around a limitation instead: Faust's ``get_topic_name`` refuses a
topic with several names, so ``faust -A workers.app:app agents`` crashed on our agent.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

__all__ = ["cap_fetch_bytes", "current_event", "filter_commits", "input_topics"]


def input_topics(app: Any, names: Sequence[str], **options: Any) -> Any:
    """One Faust topic over several names, which ``faust agents`` can print (names joined)."""
    import faust

    class InputTopics(faust.Topic):  # type: ignore[misc]
        def get_topic_name(self) -> str:
            if self.topics and len(self.topics) > 1 and not self.pattern:
                return ",".join(self.topics)
            name: str = super().get_topic_name()
            return name

    return InputTopics(app, topics=list(names), **options)


@contextmanager
def current_event(event: Any) -> Iterator[None]:
    """Make ``event`` Faust's current event while the block runs."""
    from faust import streams

    token = streams._current_event.set(weakref.ref(event))
    try:
        yield
    finally:
        streams._current_event.reset(token)


def filter_commits(consumer: Any, allows: Callable[[str], bool]) -> None:
    """Wrap ``consumer``'s commit: offsets of topics ``allows`` refuses are never committed."""
    original = consumer._commit

    async def _commit(offsets: Any) -> bool:
        allowed = {tp: off for tp, off in offsets.items() if allows(tp.topic)}
        if allowed:
            result: bool = await original(allowed)
            return result
        return True

    consumer._commit = _commit


def cap_fetch_bytes(max_bytes: int) -> None:
    """Faust's worker consumers ask the broker for at most ``max_bytes`` per fetch response
    (Kafka's ``fetch.max.bytes``: a soft limit, a larger single record still comes whole)."""
    from faust.transport.drivers import aiokafka as driver

    thread_class: Any = driver.AIOKafkaConsumerThread
    original = getattr(thread_class, "_ctxpress_create", None) or (
        thread_class._create_worker_consumer
    )

    def create(self: Any, transport: Any) -> Any:
        consumer = original(self, transport)
        consumer._fetch_max_bytes = max_bytes  # read by AIOKafkaConsumer.start()
        return consumer

    thread_class._ctxpress_create = original
    thread_class._create_worker_consumer = create
