"""The worker's shortcuts through Faust's per-message path give what Faust's own path gives.

- :class:`CachedLabelsMonitor`: the same Prometheus exposition as Faust's ``PrometheusMonitor``
  for any sequence of messages and events.
- :func:`deliver_inline`: a callback that does not wait runs inline (no task); one that waits
  goes on under Faust's ``wait_first`` and is still stopped by a suspended flow.
- ``_resume``: a coroutine started by hand and finished by a task gives the result, the
  exception and the cancellation it gives when awaited whole.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

import pytest
from faust.sensors.prometheus import FaustMetrics, PrometheusMonitor
from hypothesis import given, settings
from hypothesis import strategies as st
from mode import Service
from mode.utils.locks import Event
from prometheus_client import CollectorRegistry, generate_latest

from workers.service.faust_compat import _resume, deliver_inline
from workers.service.faust_sensors import CachedLabelsMonitor


class TP(NamedTuple):
    topic: str
    partition: int


class FakeMessage:
    time_in: float | None = None
    time_out: float | None = None
    time_total: float | None = None


class FakeStream:
    def __init__(self, label: str) -> None:
        self.shortlabel = f"Stream: {label}"
        self.task_owner = object.__new__(type("Task", (), {}))


def _exposition(monitor_class: type, steps: list[tuple[str, int, int, int]]) -> bytes:
    registry = CollectorRegistry()
    monitor = monitor_class(metrics=FaustMetrics.create(registry, "faust"))
    streams = [FakeStream("ctxpress.compress"), FakeStream("Topic: a,b")]
    for kind, topic, partition, offset in steps:
        tp = TP(f"topic-{topic}", partition)
        message = FakeMessage()
        if kind == "message":
            monitor.on_message_in(tp, offset, message)
            monitor.on_message_out(tp, offset, message)
        else:
            stream = streams[topic % 2]
            monitor.on_stream_event_in(tp, offset, stream, None)
    # every metric's ``_created`` sample is the time the registry made it
    return b"\n".join(
        line for line in generate_latest(registry).splitlines() if b"_created" not in line
    )


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["message", "event"]),
            st.integers(0, 3),
            st.integers(0, 5),
            st.integers(0, 2**40),
        ),
        max_size=40,
    )
)
def test_cached_labels_expose_what_faust_exposes(steps: list[tuple[str, int, int, int]]) -> None:
    assert _exposition(CachedLabelsMonitor, steps) == _exposition(PrometheusMonitor, steps)


class FakeConsumer(Service):  # type: ignore[misc]
    """What ``deliver_inline`` reads of Faust's consumer: its callback and flow events."""

    def __init__(self, callback: Callable[[Any], Awaitable[Any]]) -> None:
        super().__init__()
        self.callback = callback
        self.suspend_flow = Event()
        self.originals = 0
        original = self.wait_first

        async def counted(*coros: Any, timeout: Any = None) -> Any:
            self.originals += 1
            return await original(*coros, timeout=timeout)

        self.wait_first = counted


def test_a_callback_that_does_not_wait_runs_inline() -> None:
    seen: list[int] = []

    async def on_message(message: int) -> int:
        seen.append(message)
        return message * 2

    async def main() -> None:
        consumer = FakeConsumer(on_message)
        deliver_inline(consumer)
        tasks_before = len(asyncio.all_tasks())
        for i in range(5):
            result = await consumer.wait_first(on_message(i), consumer.suspend_flow.wait())
            assert result.done and result.results == [i * 2] and not result.stopped
        assert len(asyncio.all_tasks()) == tasks_before
        assert consumer.originals == 0

    asyncio.run(main())
    assert seen == [0, 1, 2, 3, 4]


def test_a_callback_that_waits_finishes_under_faust_wait_first() -> None:
    async def main() -> None:
        queue: asyncio.Queue[int] = asyncio.Queue(maxsize=1)
        queue.put_nowait(0)

        async def on_message(message: int) -> str:
            await queue.put(message)  # full: waits until the reader takes one
            return f"put {message}"

        consumer = FakeConsumer(on_message)
        deliver_inline(consumer)

        async def reader() -> None:
            await asyncio.sleep(0.01)
            assert queue.get_nowait() == 0

        read = asyncio.ensure_future(reader())
        result = await consumer.wait_first(on_message(7), consumer.suspend_flow.wait())
        await read
        assert result.results == ["put 7"] and not result.stopped
        assert consumer.originals == 1
        assert queue.get_nowait() == 7

    asyncio.run(main())


def test_a_suspended_flow_stops_a_waiting_callback() -> None:
    async def main() -> None:
        cancelled: list[bool] = []
        never = asyncio.Event()

        async def on_message(message: int) -> None:
            try:
                await never.wait()
            except asyncio.CancelledError:
                cancelled.append(True)
                raise

        consumer = FakeConsumer(on_message)
        deliver_inline(consumer)
        asyncio.get_running_loop().call_later(0.01, consumer.suspend_flow.set)
        suspended = consumer.suspend_flow.wait()
        result = await consumer.wait_first(on_message(1), suspended)
        assert result.done == [suspended]
        await asyncio.sleep(0)
        assert cancelled == [True]
        # with the flow suspended, Faust's own path runs (nothing inline)
        before = consumer.originals
        consumer.suspend_flow.clear()
        consumer.suspend_flow.set()
        waiting = on_message(2)
        await consumer.wait_first(waiting, consumer.suspend_flow.wait())
        assert consumer.originals == before + 1

    asyncio.run(main())


@pytest.mark.parametrize("ending", ["value", "error", "cancel"])
def test_resume_finishes_a_coroutine_started_by_hand(ending: str) -> None:
    async def work(gate: asyncio.Future[int]) -> int:
        got = await gate
        await asyncio.sleep(0)
        if ending == "error":
            raise ValueError(f"bad {got}")
        return got + 1

    async def main() -> None:
        gate: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        coro = work(gate)
        waiting_on = coro.send(None)
        task = asyncio.ensure_future(_resume(coro, waiting_on))
        await asyncio.sleep(0)
        if ending == "cancel":
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert coro.cr_frame is None  # the coroutine itself was cancelled and ended
            return
        gate.set_result(41)
        if ending == "error":
            with pytest.raises(ValueError, match="bad 41"):
                await task
        else:
            assert await task == 42

    asyncio.run(main())
