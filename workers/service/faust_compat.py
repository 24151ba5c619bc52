"""The places ctxpress reaches into Faust's private API, kept together.

faust-streaming 0.15 offers no public hook for any of them:

- :func:`current_event`: make an event Faust's *current event*, so that a table
  write goes to that event's partition of the changelog (``faust.streams._current_event``);
- :func:`filter_commits`: let only some input offsets through the consumer's
  commit (``Consumer._commit``), so that a transactional publisher owns them;
- :func:`deliver_inline`: the consumer's fetch loop hands a message to the streams without
  a ``wait_first`` of four tasks when nothing has to wait (``Consumer.wait_first``);
- :func:`take_batches`: batches of events taken from an agent's stream queue at once
  (``Stream.take_events`` moves every event through the stream's iterator alone);
- :func:`cap_fetch_bytes`: the worker consumer's ``fetch_max_bytes`` (Faust passes none to
  aiokafka, whose default is 50 MB per fetch: with a backlog of 50 KB records one fetch
  response and the records parsed from it held about 90 MB at once).

Upgrading Faust means checking these functions first.

:func:`input_topics` works around a limitation instead: Faust's ``get_topic_name`` refuses a
topic with several names, so ``faust -A workers.app:app agents`` crashed on our agent.
"""

from __future__ import annotations

import asyncio
import types
import weakref
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

__all__ = [
    "cap_fetch_bytes",
    "current_event",
    "deliver_inline",
    "filter_commits",
    "input_topics",
    "take_batches",
]


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


async def take_batches(stream: Any, max_events: int, within: float) -> AsyncIterator[list[Any]]:
    """Batches of up to ``max_events`` events of ``stream``, as ``Stream.take_events`` gives.

    ``take_events`` moves each event through the stream's iterator on its own: a loop turn
    (``sleep(0)``), the sensors, a processor and a future per event, about 150 us of the
    event loop per 2 KB record, while the pipeline waits for the batch.  This takes
    what the stream's queue holds at once, with the same bookkeeping per event (the
    message tracked as unacked, ``on_message_in``, ``on_stream_event_in``; events of an
    old generation or with flow control off are acked and left out, as Faust does) and
    acks the batch after the caller is done with it (``on_stream_event_out``,
    ``on_message_out``).  The stream's processors, if any, see each value as in the
    stream's iterator (Faust's agent test wrapper counts processed values so).  The first
    event is awaited without limit, the rest of a batch for at most ``within`` seconds
    after it.
    """
    from faust.types import EventT

    aiter(stream.channel)  # subscribes the topic with the conductor, as take_events does
    await stream.maybe_start()
    stream.task_owner = asyncio.current_task()  # as the stream's own iterator does
    app = stream.app
    queue = stream.channel.queue
    sensors = app.sensors
    unacked = app.consumer.unacked
    acking_topics = app.topics.acking_topics
    flow_control = app.flow_control
    processors = stream._processors  # none in the worker; Faust's agent test wrapper adds one
    loop = asyncio.get_running_loop()

    def ack(event: Any, state: Any) -> None:
        message = event.message
        last = event.ack()
        sensors.on_stream_event_out(message.tp, message.offset, stream, event, state)
        if last:
            sensors.on_message_out(message.tp, message.offset, message)

    async def admit(event: Any) -> tuple[bool, Any]:
        """Faust's per-event bookkeeping; (False, _) for an event it skips (acked here)."""
        message = event.message
        if not flow_control.is_active() or message.generation_id != app.consumer_generation_id:
            ack(event, None)
            return False, None
        if message.topic in acking_topics and not message.tracked:
            message.tracked = True
            unacked.add(message)
            sensors.on_message_in(message.tp, message.offset, message)
        state = sensors.on_stream_event_in(message.tp, message.offset, stream, event)
        if processors and not await _processed(stream, processors, event):
            ack(event, state)  # a processor skipped it, as Faust acks a Skip
            return False, None
        return True, state

    try:
        while not stream.should_stop:
            item: Any = await queue.get()
            deadline = loop.time() + within
            events: list[Any] = []
            states: list[Any] = []
            while True:
                if isinstance(item, EventT):
                    taken, state = await admit(item)
                    if taken:
                        states.append(state)
                        events.append(item)
                if len(events) >= max_events:
                    break
                if not queue.empty():
                    item = queue.get_nowait()
                    continue
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                try:
                    item = await asyncio.wait_for(queue.get(), remaining)
                except TimeoutError:
                    break
            if not events:
                continue
            stream.events_total += len(events)
            try:
                yield events
            finally:
                for event, state in zip(events, states, strict=True):
                    ack(event, state)
    except StopAsyncIteration:
        # Faust ends a stream's iteration so when it stops (the stream's own iterator
        # returns quietly too; an async generator may not let it through)
        return


async def _processed(stream: Any, processors: Sequence[Any], event: Any) -> bool:
    """Run the stream's processors on ``event``'s value as its iterator does; False: skipped."""
    from faust.exceptions import Skip
    from faust.streams import _current_event
    from mode.utils.futures import maybe_async

    _current_event.set(weakref.ref(event))
    stream.current_event = event
    value = event.value
    try:
        for processor in processors:
            value = await maybe_async(processor(value))
    except Skip:
        return False
    finally:
        stream.current_event = None
    return True


def deliver_inline(consumer: Any) -> None:
    """Hand each fetched message to the streams without four tasks per message.

    Faust's fetch loop (``Consumer._drain_messages``) awaits
    ``wait_first(callback(message), suspend_flow.wait())`` for every message: four tasks
    (with the consumer's stopped and crashed events), three of them cancelled, and a few
    turns of the event loop, about 50 us per message.  The callback (the conductor's
    ``on_message``) finishes without waiting unless a stream's queue is full or flow
    control holds it.  This runs it inline up to its first wait; only a callback that
    does wait goes on as a task under Faust's own ``wait_first``, which stops it when
    the flow is suspended (rebalance) or the consumer stops, as before.
    """
    original = consumer.wait_first
    callback_code = getattr(getattr(consumer, "callback", None), "__code__", None)
    stopped, crashed, suspend_flow = consumer._stopped, consumer._crashed, consumer.suspend_flow

    async def wait_first(*coros: Any, timeout: Any = None) -> Any:
        from mode.services import WaitResults

        first: Any = coros[0] if coros else None
        if (
            len(coros) != 2
            or timeout is not None
            or getattr(first, "cr_code", None) is not callback_code
            or callback_code is None
            or stopped.is_set()
            or crashed.is_set()
            or suspend_flow.is_set()
        ):
            return await original(*coros, timeout=timeout)
        try:
            waiting_on = first.send(None)
        except StopIteration as done:
            _close(coros[1])
            return WaitResults([first], [done.value], False)
        rest = asyncio.ensure_future(_resume(first, waiting_on))
        return await original(rest, coros[1])

    consumer.wait_first = wait_first


def _close(awaitable: Any) -> None:
    close = getattr(awaitable, "close", None)
    if close is not None:
        close()


@types.coroutine
def _resume(coro: Any, waiting_on: Any) -> Any:
    """Go on with a coroutine that was started by hand and is waiting on ``waiting_on``
    (what ``yield from`` does, from the point where it left off)."""
    while True:
        try:
            sent = yield waiting_on
        except GeneratorExit:
            coro.close()
            raise
        except BaseException as exc:  # cancellation and errors go in
            try:
                waiting_on = coro.throw(exc)
            except StopIteration as done:
                return done.value
        else:
            try:
                waiting_on = coro.send(sent)
            except StopIteration as done:
                return done.value
