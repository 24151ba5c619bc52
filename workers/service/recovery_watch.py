"""A table recovery that stops moving is finished by hand, so a worker never hangs in it.

After each assignment Faust restores the ``savings`` table from its changelog before any
stream runs again ("Worker ready"): it reads every active changelog partition until the
last offset it applied reaches the partition's *highwater* (its end offset - 1).  When
no record can ever arrive at that offset, it waits for ever ("No event received for
active tp ... since recovery start", every 5 s) and the worker processes nothing:

- the changelog ends in a transaction marker (a commit or abort marker takes an offset
  and is never delivered: a transactional write to the changelog, by anyone, stalls
  every later start; Faust only looks for them with its own exactly_once guarantee,
  which ctxpress does not use: its transactions are its publisher's);
- records are fetched but dropped before they reach the recovery (Faust drops a
  message below the partition's read offset), or the partition is not fetched at all.

The watch looks at the recovery every ``tick`` seconds.  When the offsets it applied have
not moved for ``stall_s`` seconds, each partition still short of its highwater is judged
(:func:`judge`):

- the consumer's position has reached the broker's end offset: everything readable was
  read, the rest are markers: the partition counts as restored (``read_to_end``);
- else, the first time: the partition is sought to the next offset and resumed
  (``nudged``), with the state logged (applied offset, highwater, position, end);
- still no progress ``stall_s`` later: the partition counts as restored with what it
  has (``given_up``, a warning: windows of that partition may count less).

The ``savings`` table holds aggregates for ``/savings`` only; records never wait on it
for good.  Finishing a partition sets Faust's applied offset to its highwater; Faust's own
loop then ends the recovery within 5 s.  ``ctxpress_table_recovery_finished_total{how}``
counts the partitions the watch finished.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["PartitionRecovery", "RecoveryWatch", "Verdict", "install_recovery_watch", "judge"]

log = logging.getLogger(__name__)

Verdict = Literal["moving", "read_to_end", "nudged", "given_up"]

#: seconds a position or end-offset request may take before the watch tries again later
ASK_TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class PartitionRecovery:
    """One active changelog partition as the watch sees it when its recovery stalled.

    ``applied``: the last offset Faust applied (-1 or None: none yet); ``highwater``: the
    offset Faust waits for; ``position``: the consumer's next fetch offset (None: unknown);
    ``end``: the broker's end offset now (None: unknown).
    """

    applied: int | None
    highwater: int
    position: int | None
    end: int | None

    @property
    def short(self) -> bool:
        return (self.applied if self.applied is not None else -1) < self.highwater


def judge(state: PartitionRecovery, nudged_before: bool) -> Verdict:
    """What to do with a stalled partition (see the module docstring)."""
    if not state.short:
        return "moving"
    if state.position is not None and state.end is not None and state.position >= state.end:
        return "read_to_end"
    return "given_up" if nudged_before else "nudged"


class RecoveryWatch:
    """Watches one Faust app's table recovery (``check`` once per tick)."""

    def __init__(
        self,
        app: Any,
        stall_s: float,
        on_finished: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.app = app
        self.stall_s = stall_s
        self.on_finished = on_finished
        self.clock = clock
        self._seen: dict[Any, int | None] = {}
        self._since = clock()
        self._nudged: set[Any] = set()

    def _reset(self, seen: Mapping[Any, int | None]) -> None:
        self._seen = dict(seen)
        self._since = self.clock()

    async def check(self) -> dict[Any, Verdict]:
        """One look at the recovery; returns what was done per partition (empty: nothing)."""
        recovery = self.app.tables.recovery
        if not recovery.in_recovery:
            self._nudged.clear()
            self._reset({})
            return {}
        highwaters = recovery.active_highwaters
        applied = recovery.active_offsets
        seen = {tp: applied.get(tp) for tp in sorted(recovery.active_tps)}
        if seen != self._seen:
            self._reset(seen)
            return {}
        if self.clock() - self._since < self.stall_s:
            return {}
        self._since = self.clock()
        short = [
            tp
            for tp in seen
            if PartitionRecovery(seen[tp], highwaters.get(tp, -1), None, None).short
        ]
        if not short:
            return {}
        states = await self._states(short, seen, highwaters)
        done: dict[Any, Verdict] = {}
        for tp, state in states.items():
            verdict = judge(state, tp in self._nudged)
            if verdict == "moving":
                continue
            done[tp] = verdict
            if verdict == "nudged":
                self._nudged.add(tp)
                log.warning(
                    "the savings table's recovery has not moved for %.0f s on %s[%d] "
                    "(applied offset %s, waiting for %s, consumer position %s, end offset %s): "
                    "seeking it again",
                    self.stall_s,
                    tp.topic,
                    tp.partition,
                    state.applied,
                    state.highwater,
                    state.position,
                    state.end,
                )
                await self._seek(tp, (state.applied if state.applied is not None else -1) + 1)
                continue
            recovery.active_offsets[tp] = state.highwater
            if verdict == "read_to_end":
                log.info(
                    "the savings table's changelog %s[%d] was read to its end offset %s; "
                    "offsets up to %s hold no record (transaction markers): restored",
                    tp.topic,
                    tp.partition,
                    state.end,
                    state.highwater,
                )
            else:
                log.warning(
                    "the savings table's changelog %s[%d] sent nothing past offset %s for "
                    "%.0f s (waiting for %s, consumer position %s, end offset %s): going on "
                    "without the rest; that partition's /savings windows may count less",
                    tp.topic,
                    tp.partition,
                    state.applied,
                    2 * self.stall_s,
                    state.highwater,
                    state.position,
                    state.end,
                )
            if self.on_finished is not None:
                self.on_finished(verdict)
        return done

    async def _states(
        self, tps: list[Any], seen: Mapping[Any, int | None], highwaters: Mapping[Any, int]
    ) -> dict[Any, PartitionRecovery]:
        consumer = self.app.consumer
        ends: Mapping[Any, int] = {}
        try:
            ends = await asyncio.wait_for(consumer.highwaters(*tps), ASK_TIMEOUT_S)
        except Exception as exc:  # judged without it: no partition counts as read to its end
            log.warning("the savings table's recovery: end offsets unknown: %r", exc)
        states = {}
        for tp in tps:
            position: int | None = None
            try:
                position = await asyncio.wait_for(consumer.position(tp), ASK_TIMEOUT_S)
            except Exception as exc:
                log.warning("the savings table's recovery: position of %s unknown: %r", tp, exc)
            states[tp] = PartitionRecovery(seen[tp], highwaters.get(tp, -1), position, ends.get(tp))
        return states

    async def _seek(self, tp: Any, offset: int) -> None:
        consumer = self.app.consumer
        try:
            await consumer.seek(tp, max(0, offset))
            consumer.resume_partitions({tp})
        except Exception as exc:  # the next stall gives the partition up
            log.warning("the savings table's recovery: seeking %s failed: %r", tp, exc)


def install_recovery_watch(
    app: Any, stall_s: float, on_finished: Callable[[str], None] | None = None
) -> RecoveryWatch:
    """Run a :class:`RecoveryWatch` on ``app``: a task started at the first assignment that
    looks every third of ``stall_s`` (5 s at most) until the worker stops.

    Not a Faust timer: Faust starts its timers (and its web server) only once the first
    recovery is done, and the watch is for the recovery that never ends.
    """
    watch = RecoveryWatch(app, stall_s, on_finished)
    tick = max(0.5, min(5.0, stall_s / 3))
    running: list[asyncio.Task[None]] = []

    async def _watch_recovery() -> None:
        while not app.should_stop:
            await asyncio.sleep(tick)
            try:
                await watch.check()
            except Exception:  # the watch must not stop the worker; it looks again next tick
                log.exception("watching the savings table's recovery failed")

    async def _assigned(_sender: Any, _assigned: Any, **_kwargs: Any) -> None:
        if not running or running[0].done():
            running[:] = [asyncio.ensure_future(_watch_recovery())]

    async def _stop(_sender: Any, **_kwargs: Any) -> None:
        for task in running:
            task.cancel()

    app.on_partitions_assigned.connect(_assigned)
    app.on_before_shutdown.connect(_stop)
    return watch
