"""The recovery watch finishes a stalled table recovery (a fake Faust app and a fake clock).

The real case (a changelog ending in a transaction marker stalls Faust for ever) runs on
the broker in tests/e2e/test_worker_table_recovery.py.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any, NamedTuple

import pytest

from workers.service.recovery_watch import PartitionRecovery, RecoveryWatch, judge


class TP(NamedTuple):
    topic: str
    partition: int


A, B = TP("p.savings-changelog", 0), TP("p.savings-changelog", 1)


class FakeConsumer:
    def __init__(self, positions: dict[TP, int | None], ends: dict[TP, int]) -> None:
        self.positions, self.ends = positions, ends
        self.seeks: list[tuple[TP, int]] = []
        self.resumed: list[TP] = []

    async def highwaters(self, *tps: TP) -> dict[TP, int]:
        return {tp: self.ends[tp] for tp in tps}

    async def position(self, tp: TP) -> int | None:
        return self.positions[tp]

    async def seek(self, tp: TP, offset: int) -> None:
        self.seeks.append((tp, offset))

    def resume_partitions(self, tps: Any) -> None:
        self.resumed.extend(tps)


class FakeRecovery:
    def __init__(self, applied: dict[TP, int], highwaters: dict[TP, int]) -> None:
        self.in_recovery = True
        self.active_tps = set(applied)
        self.active_offsets: Counter[TP] = Counter(applied)
        self.active_highwaters: Counter[TP] = Counter(highwaters)


class FakeApp:
    def __init__(self, recovery: FakeRecovery, consumer: FakeConsumer) -> None:
        self.consumer = consumer

        class Tables:
            pass

        self.tables = Tables()
        self.tables.recovery = recovery  # type: ignore[attr-defined]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _watch(
    applied: dict[TP, int],
    highwaters: dict[TP, int],
    positions: dict[TP, int | None],
    ends: dict[TP, int],
) -> tuple[RecoveryWatch, FakeApp, Clock, list[str]]:
    app = FakeApp(FakeRecovery(applied, highwaters), FakeConsumer(positions, ends))
    clock = Clock()
    finished: list[str] = []
    return RecoveryWatch(app, 15.0, finished.append, clock), app, clock, finished


def _check(watch: RecoveryWatch) -> dict[Any, str]:
    return dict(asyncio.run(watch.check()))


@pytest.mark.parametrize(
    ("state", "nudged", "verdict"),
    [
        (PartitionRecovery(5, 5, 6, 6), False, "moving"),  # done already
        (PartitionRecovery(None, -1, None, None), False, "moving"),  # an empty changelog
        (PartitionRecovery(0, 1, 2, 2), False, "read_to_end"),  # a commit marker at 1
        (PartitionRecovery(-1, 0, 1, 1), True, "read_to_end"),  # only a marker
        (PartitionRecovery(3, 9, 4, 10), False, "nudged"),
        (PartitionRecovery(3, 9, None, 10), False, "nudged"),  # position unknown
        (PartitionRecovery(3, 9, 4, None), False, "nudged"),  # end unknown
        (PartitionRecovery(3, 9, 4, 10), True, "given_up"),
    ],
)
def test_judge(state: PartitionRecovery, nudged: bool, verdict: str) -> None:
    assert judge(state, nudged) == verdict


def test_a_changelog_read_to_its_end_counts_as_restored_after_the_stall() -> None:
    # partition 0 ends in a transaction marker (offset 1); partition 1 is restored
    watch, app, clock, finished = _watch({A: 0, B: 7}, {A: 1, B: 7}, {A: 2, B: 8}, {A: 2, B: 8})
    recovery = app.tables.recovery  # type: ignore[attr-defined]
    assert _check(watch) == {}  # the first look only notes the offsets
    clock.now += 14.9
    assert _check(watch) == {}  # not stalled long enough
    clock.now += 0.2
    assert _check(watch) == {A: "read_to_end"}
    assert recovery.active_offsets[A] == 1 and recovery.active_offsets[B] == 7
    assert finished == ["read_to_end"]
    assert app.consumer.seeks == []  # type: ignore[attr-defined]


def test_a_partition_that_sends_nothing_is_sought_again_then_given_up() -> None:
    watch, app, clock, finished = _watch({A: 3}, {A: 9}, {A: 4}, {A: 10})
    recovery = app.tables.recovery  # type: ignore[attr-defined]
    _check(watch)
    clock.now += 15.1
    assert _check(watch) == {A: "nudged"}
    assert app.consumer.seeks == [(A, 4)] and app.consumer.resumed == [A]  # type: ignore[attr-defined]
    assert recovery.active_offsets[A] == 3 and finished == []
    clock.now += 10
    assert _check(watch) == {}  # the stall clock restarted at the nudge
    clock.now += 5.1
    assert _check(watch) == {A: "given_up"}
    assert recovery.active_offsets[A] == 9 and finished == ["given_up"]


def test_progress_restarts_the_stall_clock_and_a_finished_recovery_resets_the_watch() -> None:
    watch, app, clock, finished = _watch({A: 3}, {A: 9}, {A: 4}, {A: 10})
    recovery = app.tables.recovery  # type: ignore[attr-defined]
    _check(watch)
    clock.now += 10
    recovery.active_offsets[A] = 5  # a record arrived
    assert _check(watch) == {}
    clock.now += 10
    assert _check(watch) == {}  # 10 s since the progress
    clock.now += 5.1
    assert _check(watch) == {A: "nudged"}
    recovery.in_recovery = False  # Faust finished (the nudge worked)
    assert _check(watch) == {}
    recovery.in_recovery = True  # the next rebalance's recovery stalls again: nudged first
    _check(watch)
    clock.now += 15.1
    assert _check(watch) == {A: "nudged"} and finished == []
