"""Scale-out on one machine: two ``ctxpress worker`` processes in one consumer group.

Both workers get the same app id (= consumer group) and topic prefix, each its
own web port and data directory.  The input topics (``transcripts`` and
``tool-outputs``) have 4 partitions each.

- Who owns what comes from the broker: a DescribeGroups request (aiokafka
  admin) gives each member's assignment, and Faust's member metadata carries
  the worker's URL, so each member maps to one worker by its web port.  Each
  worker's ``/metrics`` (Faust's ``messages_received_per_topics_partition``)
  shows which input partitions it really consumed from.  A worker is *ready*
  when the group is stable and its log shows Faust's "Worker ready" after its
  latest assignment (recovery done, streams resumed).
- The stream is done when the group's committed offsets reach the end of every
  input partition (exactly_once, the default guarantee: each transaction holds
  a batch's outputs and its input offsets), then the outputs are read with
  ``read_committed``.
- ``test_two_workers_share_the_partitions``: after both joined, each owns some
  input partitions (disjoint, together all of them); 2,000 records are
  processed by both, each exactly once on ``compressed`` (valid records) or
  ``dead-letter`` (bad ones).
- ``test_rebalance_when_one_worker_stops``: worker 1 gets SIGTERM in the
  middle of a 2,000-record stream (the second half is produced while it drains
  and the group rebalances); worker 2 takes over every partition and consumes
  what worker 1 left on its partitions (their committed offsets, below the end
  when worker 1 exited, reach it with worker 2 alone), and afterwards every
  record is there exactly once, none missing.

A record that is not on the outputs is reported with its input partition and
offset and the group's committed offset there.  Join, rebalance and total
times are printed (``pytest -s``).  ``CTXPRESS_E2E_LOG_LEVEL=debug`` gives the
workers debug logs (in the test's tmp dir).
"""

from __future__ import annotations

import asyncio
import base64
import os
import re
import time
import urllib.request
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiokafka.errors import KafkaError

from tests.e2e._support import Run, Verdict, check_exactly_once, collect
from tests.kafka_broker import kafka_bootstrap  # noqa: F401
from workers.service.kafka.io import end_offsets, read_topic
from workers.service.kafka.options import client_options
from workers.service.supervise import WorkerProcess, free_port, scrape
from workers.testing.worker import Sample, mixed_stream

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(600)]

RECORDS = 2000
PARTITIONS = 4
JOIN_TIMEOUT = 90.0  # two cold worker start-ups and a rebalance on a busy 2-core machine
PROCESS_TIMEOUT = 120.0  # 2,000 records take a few seconds when the machine is idle

TP = tuple[str, int]


@dataclass(frozen=True)
class Group:
    """The consumer group as the broker describes it: input partitions per worker web port."""

    state: str
    owners: dict[int, frozenset[TP]]

    def owned(self, port: int) -> frozenset[TP]:
        return self.owners.get(port, frozenset())


def _admin(run: Run) -> Any:
    from aiokafka.admin import AIOKafkaAdminClient

    return AIOKafkaAdminClient(
        bootstrap_servers=run.bootstrap,
        client_id="ctxpress-scale-out-test",
        **client_options(run.settings()),
    )


async def _describe(run: Run) -> Group:
    from aiokafka.coordinator.protocol import (
        ConsumerProtocolMemberAssignment,
        ConsumerProtocolMemberMetadata,
    )

    inputs = set(run.names.inputs)
    admin = _admin(run)
    await admin.start()
    try:
        (response,) = await admin.describe_consumer_groups([run.app_id])
    finally:
        await admin.close()
    (group,) = response.to_object()["groups"]
    owners: dict[int, frozenset[TP]] = {}
    if group["state"] != "Stable":  # metadata and assignments are empty while rebalancing
        return Group(group["state"], owners)
    for member in group["members"]:
        metadata, assignment = member["member_metadata"], member["member_assignment"]
        # Faust's member metadata is JSON with the worker's canonical URL (http://host:port).
        url = orjson.loads(ConsumerProtocolMemberMetadata.decode(metadata).user_data)["url"]
        port = int(url.rstrip("/").rsplit(":", 1)[1])
        tps = ConsumerProtocolMemberAssignment.decode(assignment).partitions() if assignment else []
        owners[port] = frozenset((tp.topic, tp.partition) for tp in tps if tp.topic in inputs)
    return Group(group["state"], owners)


async def _committed(run: Run) -> dict[TP, int]:
    admin = _admin(run)
    await admin.start()
    try:
        offsets = await admin.list_consumer_group_offsets(run.app_id)
    finally:
        await admin.close()
    return {
        (tp.topic, tp.partition): meta.offset
        for tp, meta in offsets.items()
        if tp.topic in run.names.inputs
    }


async def _committed_and_ends(run: Run) -> tuple[dict[TP, int], dict[str, dict[int, int]]]:
    committed, ends = await asyncio.gather(
        _committed(run), end_offsets(run.settings(), run.names.inputs)
    )
    return committed, ends


def _ready(worker: WorkerProcess, assignments: int) -> bool:
    """The worker's log shows ``assignments`` partition assignments and recovery done after the last.

    Faust logs "Executing _on_partitions_assigned" per assignment and "Worker ready" once its
    recovery finished and the streams resumed.  (Its rebalance gauges are no use for this: a
    late on_rebalance_return leaves them at 1, "Missing sensor state for rebalance".)
    """
    text = worker.log_path.read_text(encoding="utf-8", errors="replace")
    return _assignments(worker) >= assignments and text.rfind("Worker ready") > text.rfind(
        "Executing _on_partitions_assigned"
    )


def _assignments(worker: WorkerProcess) -> int:
    text = worker.log_path.read_text(encoding="utf-8", errors="replace")
    return text.count("Executing _on_partitions_assigned")


def _wait_for_group(
    run: Run,
    ready: Callable[[Group], bool],
    workers: Sequence[WorkerProcess],
    timeout: float,
    what: str,
) -> tuple[Group, float]:
    """Poll the group (and ``ready``) until it holds; returns the group and the seconds waited."""
    started = time.monotonic()
    group = Group("?", {})
    while time.monotonic() - started < timeout:
        for worker in workers:
            assert worker.alive(), f"worker exited:\n{worker.log_tail()}"
        try:
            group = asyncio.run(_describe(run))
        except KafkaError as exc:
            if not exc.retriable:  # e.g. the coordinator of a fresh broker is still loading
                raise
            time.sleep(0.5)
            continue
        if group.state == "Stable" and ready(group):
            return group, time.monotonic() - started
        time.sleep(0.25)
    logs = "\n".join(w.log_tail(30) for w in workers)
    raise AssertionError(f"{what} not reached in {timeout} s; last group {group}:\n{logs}")


def _all_inputs(run: Run) -> frozenset[TP]:
    return frozenset((topic, p) for topic in run.names.inputs for p in range(PARTITIONS))


def _consumed(port: int, run: Run) -> frozenset[TP]:
    """Input partitions the worker received messages from since its last rebalance."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
        body = resp.read().decode("utf-8")
    found = set()
    pattern = re.compile(
        r'^faust_messages_received_per_topics_partition\{partition="(\d+)",topic="([^"]+)"\}', re.M
    )
    for partition, topic in pattern.findall(body):
        if topic in run.names.inputs:
            found.add((topic, int(partition)))
    return frozenset(found)


def _outputs(port: int) -> int:
    return int(scrape(port, "ctxpress_records_out_total") or 0)


def _wait_for_outputs(
    run: Run, ports: Sequence[int], workers: Sequence[WorkerProcess], expected: int
) -> float:
    """Wait until the workers together counted ``expected`` records out."""
    started = time.monotonic()
    while time.monotonic() - started < PROCESS_TIMEOUT:
        for worker in workers:
            assert worker.alive(), f"worker exited:\n{worker.log_tail()}"
        if sum(_outputs(p) for p in ports) >= expected:
            return time.monotonic() - started
        time.sleep(0.2)
    seen = [(_outputs(p), sorted(_consumed(p, run))) for p in ports]
    raise AssertionError(
        f"workers processed {seen} (count, partitions consumed), not {expected} records, "
        f"in {PROCESS_TIMEOUT} s"
    )


def _wait_until_consumed(run: Run, workers: Sequence[WorkerProcess]) -> float:
    """Wait until the group's committed offsets reach the end of every input partition."""
    started = time.monotonic()
    ends = asyncio.run(end_offsets(run.settings(), run.names.inputs))
    want = {(topic, p): end for topic, by_p in ends.items() for p, end in by_p.items()}
    committed: dict[TP, int] = {}
    while time.monotonic() - started < PROCESS_TIMEOUT:
        for worker in workers:
            assert worker.alive(), f"worker exited:\n{worker.log_tail()}"
        committed = asyncio.run(_committed(run))
        if all(committed.get(tp, -1) >= end for tp, end in want.items()):
            return time.monotonic() - started
        time.sleep(0.25)
    behind = {tp: (committed.get(tp), end) for tp, end in want.items() if committed.get(tp) != end}
    raise AssertionError(f"input not consumed in {PROCESS_TIMEOUT} s (committed, end): {behind}")


def _check_nothing_lost(run: Run, samples: Sequence[Sample], verdict: Verdict) -> None:
    """Every input on compressed or dead-letter; else say where the lost ones were."""
    originals = set()
    for r in verdict.dead:
        body = orjson.loads(r.value)
        if "original_value" in body:
            originals.add(body["original_value"].encode("utf-8"))
        elif "original_value_b64" in body:
            originals.add(base64.b64decode(body["original_value_b64"]))
    lost = [
        s
        for s in samples
        if (s.ok and s.record_id not in verdict.compressed)
        or (not s.ok and s.line not in originals)
    ]
    if not lost:
        return

    async def where() -> dict[bytes, tuple[str, int, int]]:
        positions = {}
        for topic in run.names.inputs:
            async for r in read_topic(run.settings(), topic, idle_timeout=5.0, until_end=True):
                positions[r.value] = (topic, r.partition, r.offset)
        return positions

    positions = asyncio.run(where())
    committed = asyncio.run(_committed(run))
    lines = []
    for s in lost:
        topic, partition, offset = positions.get(s.line, ("?", -1, -1))
        lines.append(
            f"{s.record_id} ({s.kind}) at {topic}[{partition}] offset {offset}, "
            f"group committed {committed.get((topic, partition))}"
        )
    raise AssertionError(
        f"{len(lost)} of {len(samples)} records neither on compressed nor dead-letter "
        "(with the group's committed offset of their partition):\n  " + "\n  ".join(lines)
    )


class Pair:
    """Two workers of one deployment (same app id and prefix, own port and data dir)."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.ports = (run.port, free_port())
        level = os.environ.get("CTXPRESS_E2E_LOG_LEVEL", "info")
        self.workers = tuple(
            run.worker(
                f"worker-{n}",
                CTXPRESS_WEB_PORT=str(port),
                CTXPRESS_DATA_DIR=str(run.tmp / f"data-{n}"),
                CTXPRESS_LOG_LEVEL=level,
            )
            for n, port in enumerate(self.ports, start=1)
        )

    def join(self) -> Group:
        """Start worker 1 until it owns everything, then worker 2 until both own some and are ready."""
        run, (a, b), (w1, w2) = self.run, self.ports, self.workers
        everything = _all_inputs(run)
        w1.start()
        _, first = _wait_for_group(
            run,
            lambda g: set(g.owners) == {a} and g.owned(a) == everything and _ready(w1, 1),
            [w1],
            JOIN_TIMEOUT,
            "worker 1 owning every input partition",
        )
        w2.start()
        group, second = _wait_for_group(
            run,
            lambda g: (
                set(g.owners) == {a, b}
                and bool(g.owned(a))
                and bool(g.owned(b))
                and _ready(w1, 2)
                and _ready(w2, 1)
            ),
            [w1, w2],
            JOIN_TIMEOUT,
            "both workers owning input partitions and ready",
        )
        print(
            f"\njoin: worker 1 alone ready in {first:.2f} s; worker 2 started, both ready "
            f"with a share {second:.2f} s later; {_show(group, self.ports)}"
        )
        # each owns some, no partition twice, every partition owned
        assert group.owned(a) & group.owned(b) == frozenset()
        assert group.owned(a) | group.owned(b) == everything
        for port in self.ports:
            assert {p for t, p in group.owned(port) if t == run.names.transcripts}
        return group

    def stop(self) -> None:
        for worker in self.workers:
            if worker.proc is not None and worker.alive():
                worker.terminate(timeout=30)


def _show(group: Group, ports: Sequence[int]) -> str:
    parts = []
    for n, port in enumerate(ports, start=1):
        by_topic: dict[str, list[int]] = {}
        for topic, partition in sorted(group.owned(port)):
            by_topic.setdefault(topic.rsplit(".", 1)[-1], []).append(partition)
        parts.append(f"worker {n}: {by_topic}")
    return "; ".join(parts)


def _stream(seed: int) -> list[Sample]:
    samples = mixed_stream(RECORDS, seed=seed, prefix=f"s{seed}-")
    assert len({s.record_id for s in samples}) == RECORDS
    return samples


def test_two_workers_share_the_partitions(kafka_bootstrap: str, tmp_path: Path) -> None:  # noqa: F811
    run = Run(kafka_bootstrap, tmp_path)
    run.create_topics()
    samples = _stream(seed=21)
    pair = Pair(run)
    try:
        group = pair.join()
        started = time.monotonic()
        run.produce(samples)
        _wait_for_outputs(run, pair.ports, pair.workers, RECORDS)
        _wait_until_consumed(run, pair.workers)
        total = time.monotonic() - started
        counts = [_outputs(p) for p in pair.ports]
        consumed = [_consumed(p, run) for p in pair.ports]
        # no rebalance happened while the stream ran: same owners
        after, _ = _wait_for_group(run, lambda g: True, pair.workers, 30, "a stable group")
        verdict = collect(run, samples, timeout=30)
    finally:
        pair.stop()
    print(
        f"{RECORDS} records by two workers: {counts[0]} + {counts[1]} processed; produced, "
        f"processed and committed in {total:.2f} s ({RECORDS / total:.0f} records/s); "
        f"{sum(s.ok for s in samples)} compressed, {len(verdict.dead)} dead letters"
    )
    assert after == group, f"the group rebalanced during the stream: {after} != {group}"
    _check_nothing_lost(run, samples, verdict)
    check_exactly_once(run, samples, verdict)
    # both did work, each only on the partitions it owns, no record processed twice
    for port, count, seen in zip(pair.ports, counts, consumed, strict=True):
        assert count > 0, f"worker on port {port} processed nothing"
        assert seen, f"worker on port {port} consumed no partition"
        assert seen <= group.owned(port), (port, sorted(seen), sorted(group.owned(port)))
    assert sum(counts) == RECORDS, f"processed {counts}: a record was processed twice"


def test_rebalance_when_one_worker_stops(kafka_bootstrap: str, tmp_path: Path) -> None:  # noqa: F811
    run = Run(kafka_bootstrap, tmp_path)
    run.create_topics()
    samples = _stream(seed=22)
    first, second = samples[: RECORDS // 2], samples[RECORDS // 2 :]
    pair = Pair(run)
    (a, b), (w1, w2) = pair.ports, pair.workers
    everything = _all_inputs(run)
    try:
        group = pair.join()
        handed_over = group.owned(a)
        started = time.monotonic()
        run.produce(first)
        # SIGTERM worker 1 once both are busy and about a quarter of the stream is out
        _wait_for_outputs(run, pair.ports, pair.workers, RECORDS // 4)
        while min(_outputs(p) for p in pair.ports) == 0:
            assert time.monotonic() - started < PROCESS_TIMEOUT, (
                "one worker processed nothing: "
                f"{[(_outputs(p), sorted(_consumed(p, run))) for p in pair.ports]}"
            )
            time.sleep(0.1)
        before = [_outputs(p) for p in pair.ports]
        assigned = _assignments(w2)
        stop_at = time.monotonic()
        # SIGTERM (in a thread that waits for the exit); the rest of the stream is produced
        # meanwhile, so it arrives while worker 1 drains and the group rebalances
        with ThreadPoolExecutor(1) as pool:
            stopping = pool.submit(w1.terminate, 60)
            run.produce(second)
            code, shutdown = stopping.result()
        assert code == 0, f"worker 1 exit {code}:\n{w1.log_tail()}"
        # what worker 1 left: only worker 2 is alive now, so the rest of its partitions is 2's
        left, ends = asyncio.run(_committed_and_ends(run))
        pending = {tp: ends[tp[0]][tp[1]] - left.get(tp, 0) for tp in handed_over}
        final, _ = _wait_for_group(
            run,
            lambda g: set(g.owners) == {b} and g.owned(b) == everything,
            [w2],
            JOIN_TIMEOUT,
            "worker 2 owning every input partition",
        )
        rebalance = time.monotonic() - stop_at
        _wait_for_group(
            run, lambda g: _ready(w2, assigned + 1), [w2], JOIN_TIMEOUT, "worker 2 ready"
        )
        takeover = time.monotonic() - stop_at
        _wait_until_consumed(run, [w2])
        total = time.monotonic() - started
        verdict = collect(run, samples, timeout=30)
        survivor = _outputs(b)
        done = asyncio.run(_committed(run))
    finally:
        pair.stop()
    print(
        f"SIGTERM to worker 1 after {before[0]} + {before[1]} of {RECORDS} records: it exited "
        f"in {shutdown:.2f} s (code {code}); worker 2 owned every input partition "
        f"{rebalance:.2f} s after the SIGTERM, ready {takeover:.2f} s after it, and processed "
        f"{survivor} in all, among them the {sum(pending.values())} records worker 1 left "
        f"on its partitions; stream produced, processed and committed in {total:.2f} s; "
        f"{sum(s.ok for s in samples)} compressed, {len(verdict.dead)} dead letters"
    )
    assert final.owned(b) == everything
    # worker 1's partitions had records left when it exited, and worker 2 consumed them all
    assert sum(pending.values()) > 0, pending
    assert all(done[tp] >= ends[tp[0]][tp[1]] for tp in handed_over), (done, ends)
    assert survivor > before[1]
    _check_nothing_lost(run, samples, verdict)
    check_exactly_once(run, samples, verdict)
    for worker in pair.workers:
        assert "Traceback" not in worker.log_tail(5000), worker.log_tail()
