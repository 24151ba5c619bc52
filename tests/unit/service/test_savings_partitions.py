"""The savings table skips input partitions its changelog lacks (no crash on a grown topic).

Faust checks an input topic's partition count against the changelog's once per topic; an
input topic that grows later sent changelog writes to a partition the changelog does not
have, and the producer's ``key_partition`` assertion crashed the worker.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from workers.service.agents import add_savings, changelog_has
from workers.service.handler import Savings


class _Value:
    def __init__(self, value: list[int] | None) -> None:
        self._value = value

    def value(self) -> list[int] | None:
        return self._value


class _Window:
    def __init__(self, store: dict[str, list[int]]) -> None:
        self.store = store

    def __getitem__(self, key: str) -> _Value:
        return _Value(self.store.get(key))

    def __setitem__(self, key: str, value: list[int]) -> None:
        self.store[key] = value


class _Table:
    def __init__(self) -> None:
        self.store: dict[str, list[int]] = {}
        self.table = SimpleNamespace(changelog_topic_name="t-savings-changelog")

    def relative_to(self, now: float) -> _Window:
        return _Window(self.store)


class _Event:  # Faust's current event is held by a weak reference
    def __init__(self, partition: int) -> None:
        self.message = SimpleNamespace(partition=partition)


def _event(partition: int) -> Any:
    return _Event(partition)


def _savings(*partitions: int) -> Savings:
    savings = Savings()
    for partition in partitions:
        savings.add(partition, "standard", "toolfilter", 100, 40)
    return savings


def test_rows_of_partitions_beyond_the_changelog_are_skipped_and_named() -> None:
    table = _Table()
    events = [_event(p) for p in (0, 3, 4, 5)]
    skipped = add_savings(table, events, _savings(0, 3, 4, 5), 0.0, changelog_has=lambda p: p < 4)
    assert skipped == {4, 5}
    assert table.store == {
        "standard/toolfilter/0": [1, 100, 40],
        "standard/toolfilter/3": [1, 100, 40],
    }


def test_an_unknown_changelog_count_updates_every_row() -> None:
    table = _Table()
    events = [_event(p) for p in (0, 5)]
    skipped = add_savings(table, events, _savings(0, 5, 5), 0.0, changelog_has=None)
    assert skipped == set()
    assert table.store["standard/toolfilter/5"] == [2, 200, 80]


def test_the_check_is_the_consumers_own_key_partition() -> None:
    partitions = {"t-savings-changelog": {0, 1, 2, 3}}

    def key_partition(topic: str, key: bytes | None, partition: int | None = None) -> int | None:
        # faust's AIOKafkaConsumerThread.key_partition, on a cluster metadata dict
        known = partitions.get(topic)
        if known is None:
            return None
        assert partition in known, "Unrecognized partition"
        return partition

    app = SimpleNamespace(consumer=SimpleNamespace(key_partition=key_partition))
    has = changelog_has(app, _Table())
    assert [has(p) for p in range(6)] == [True, True, True, True, False, False]
    partitions.clear()  # a topic the metadata does not know: faust sends without the check
    assert has(5)
    assert changelog_has(SimpleNamespace(), _Table())(5)  # no consumer yet
