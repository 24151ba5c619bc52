"""3,000 records with big and poison ones mixed in, two workers in one group, default topics.

The topics come from topics/ as ``ctxpress topics create`` makes them (``max.message.bytes``
= the default ``CTXPRESS_MAX_MESSAGE_BYTES``, 17 MiB) and the workers run with the default
sizes.  Mixed into 3,000 ordinary records (valid, invalid and gate-rejected ones): transcripts
of 900 KB, 1.05 MB, 2 MB and 10 MB (processed), one over ``CTXPRESS_MAX_RECORD_BYTES``
(a dead letter), a 100,000-message conversation sent gzip-compressed, 390 KB of control
bytes, an invalid value with a 1.1 MB header, NaN with a big integer, and a tombstone.

Afterwards every input position is accounted for exactly once, read with read_committed:
as its record on ``compressed`` (by record id) or as its own dead letter (by source
position); no worker exited and the group's committed offsets reached the end (no lag).
The second test does the same while one worker or the other is SIGKILLed five times at
random moments (and restarted).
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.e2e._support import Run
from tests.e2e.test_scale_out import Pair, _committed, _wait_until_consumed
from tests.functional.test_worker_sizes import big_transcript
from tests.kafka_broker import kafka_bootstrap  # noqa: F401
from workers.core.settings import Settings
from workers.service.kafka.io import end_offsets, route
from workers.testing import openai_record
from workers.testing.worker import mixed_stream

pytestmark = [pytest.mark.kafka, pytest.mark.slow, pytest.mark.timeout(900)]

MB = 1000 * 1000
ORDINARY = 3000
POS = tuple[str, int, int]


@dataclass(frozen=True)
class Sent:
    """One produced record: where it went, and what must come of it."""

    position: POS
    record_id: str | None  # the id its compressed record is keyed by (None: must dead-letter)
    what: str


def _poison() -> list[tuple[str, bytes | None, bytes | None, list[tuple[str, bytes]], bool]]:
    """(what, key, value, headers, gzip) of each big or poison record."""
    limit = Settings().max_record_bytes
    many = json.dumps(
        openai_record(
            "many-100k", *(("user" if i % 2 else "assistant", f"m{i}") for i in range(100_000))
        )
    ).encode()
    nan = b'{"id":"n2","v":NaN,"big":12345678901234567890123,"messages":[]}'
    return [
        ("900KB", b"big-900k", big_transcript("big-900k", 900 * 1000), [], False),
        ("1.05MB", b"big-1m", big_transcript("big-1m", 1_050_000), [], False),
        ("2MB", b"big-2m", big_transcript("big-2m", 2 * MB), [], False),
        ("10MB", b"big-10m", big_transcript("big-10m", 10 * MB), [], False),
        ("over-limit", b"big-over", big_transcript("big-over", limit + 100_000), [], False),
        ("100k-messages", b"many-100k", many, [], True),
        ("control-bytes", b"ctl", b"\x01" * (390 * 1024), [], False),
        ("1.1MB-header", b"hdr", b"notjson!", [("blob", b"h" * 1_100_000)], False),
        ("nan-bigint", b"n2", nan, [], False),
        ("tombstone", b"tomb", None, [], False),
    ]


def _stream(
    seed: int, poison: bool = True
) -> list[tuple[str, bytes | None, bytes | None, list[Any], bool, str | None]]:
    """(what, key, value, headers, gzip, expected id) in production order."""
    rng = random.Random(seed)
    ordinary = mixed_stream(ORDINARY, seed=seed, prefix=f"p{seed}-")
    items: list[tuple[str, bytes | None, bytes | None, list[Any], bool, str | None]] = []
    for s in ordinary:
        key = s.record_id.encode() if s.ok else None
        items.append((s.kind, key, s.line, [], False, s.record_id if s.ok else None))
    compressed_ok = {"900KB", "1.05MB", "2MB", "10MB", "100k-messages"}
    for what, key, value, headers, gz in _poison():
        at = rng.randrange(len(items) + 1)  # drawn also when skipped: the same places
        if not poison and what not in compressed_ok:
            continue
        rid = key.decode() if key is not None and what in compressed_ok else None
        items.insert(at, (what, key, value, headers, gz, rid))
    return items


async def _produce(run: Run, items: list[Any]) -> list[Sent]:
    from aiokafka import AIOKafkaProducer

    limit = Settings().max_message_bytes
    plain = AIOKafkaProducer(
        bootstrap_servers=run.bootstrap, max_request_size=limit, enable_idempotence=True
    )
    gzipped = AIOKafkaProducer(
        bootstrap_servers=run.bootstrap,
        max_request_size=limit,
        enable_idempotence=True,
        compression_type="gzip",
    )
    await plain.start()
    await gzipped.start()
    sent: list[Sent] = []
    try:
        for what, key, value, headers, gz, rid in items:
            short, _ = route(value or b"{}")
            topic = run.names.by_short(short)
            producer = gzipped if gz else plain
            meta = await (await producer.send(topic, value, key=key, headers=headers or None))
            sent.append(Sent((topic, meta.partition, meta.offset), rid, what))
    finally:
        await plain.stop()
        await gzipped.stop()
    return sent


def _account(run: Run, sent: list[Sent]) -> dict[str, Any]:
    """Check every input once on compressed or as its own dead letter; return the letters."""
    compressed = run.read("compressed", idle=5.0)
    letters = [(r, orjson.loads(r.value)) for r in run.read("dead-letter", idle=5.0)]
    keys = Counter(r.key.decode() for r in compressed)
    own = Counter(
        (b["source"]["topic"], b["source"]["partition"], b["source"]["offset"])
        for _r, b in letters
        if b["stage"] not in ("gate", "engine")
    )
    problems = []
    for s in sent:
        outputs = (keys[s.record_id] if s.record_id else 0) + own[s.position]
        if outputs != 1:
            problems.append(
                (s.what, s.record_id, s.position, keys[s.record_id or ""], own[s.position])
            )
    assert not problems, f"{len(problems)} inputs not exactly once: {problems[:10]}"
    wanted = {s.record_id for s in sent if s.record_id}
    assert set(keys) == wanted, sorted(set(keys) ^ wanted)[:10]
    limit = Settings().max_message_bytes
    assert all(len(r.value) <= limit for r in compressed)
    by_what = {s.what: s.position for s in sent}
    letter_at = {
        (b["source"]["topic"], b["source"]["partition"], b["source"]["offset"]): b
        for _r, b in letters
    }
    return {
        "compressed": len(compressed),
        "letters": len(letters),
        "classes": {
            what: letter_at[by_what[what]]["error_class"]
            for what in ("over-limit", "control-bytes", "1.1MB-header", "nan-bigint", "tombstone")
        },
    }


def _no_lag(run: Run) -> None:
    ends = asyncio.run(end_offsets(run.settings(), run.names.inputs))
    committed = asyncio.run(_committed(run))
    behind = {
        (t, p): (committed.get((t, p)), end)
        for t, by_p in ends.items()
        for p, end in by_p.items()
        if committed.get((t, p), -1) < end
    }
    assert not behind, behind


EXPECTED_CLASSES = {
    "over-limit": "RecordTooLarge",
    "control-bytes": "JSONDecodeError",
    "1.1MB-header": "JSONDecodeError",
    "nan-bigint": "JSONDecodeError",
    "tombstone": "Tombstone",
}


def _drain(run: Run, items: list[Any]) -> tuple[list[Sent], Pair, float, float]:
    """Two workers join, ``items`` are produced; (sent, pair, produce-to-drained s, drain s)."""
    run.create_topics()
    pair = Pair(run)
    pair.join()
    started = time.monotonic()
    sent = asyncio.run(_produce(run, items))
    drained = _wait_until_consumed(run, pair.workers)
    return sent, pair, time.monotonic() - started, drained


def test_poison_and_big_records_with_two_workers(kafka_bootstrap: str, tmp_path: Path) -> None:  # noqa: F811
    base_run = Run(kafka_bootstrap, tmp_path / "baseline")
    base_sent, base_pair, baseline, _ = _drain(base_run, _stream(7, poison=False))
    base_pair.stop()
    assert len(base_sent) == ORDINARY + 5  # the big transcripts are work, not poison
    run = Run(kafka_bootstrap, tmp_path / "poison")
    pair: Pair | None = None
    try:
        sent, pair, elapsed, drained = _drain(run, _stream(7))
        assert all(w.alive() for w in pair.workers), "no worker may exit"
        result = _account(run, sent)
        _no_lag(run)
    finally:
        if pair is not None:
            pair.stop()
    # within 2x the same stream (big transcripts included) without the 5 poison records
    assert elapsed <= 2 * baseline, (elapsed, baseline)
    assert result["classes"] == EXPECTED_CLASSES
    assert pair is not None
    for worker in pair.workers:
        log = worker.log_path.read_text(errors="replace")
        assert "PublishError" not in log and "Crashed" not in log, worker.log_tail(60)
    print(
        f"\n{len(sent)} records ({ORDINARY} ordinary + 5 big + 5 poison): {result['compressed']} "
        f"compressed, {result['letters']} dead letters; produced and drained in {elapsed:.1f} s "
        f"(drain after the last send {drained:.1f} s); without the 5 poison records: "
        f"{baseline:.1f} s"
    )


def test_poison_stream_survives_five_sigkills(kafka_bootstrap: str, tmp_path: Path) -> None:  # noqa: F811
    run = Run(kafka_bootstrap, tmp_path)
    run.create_topics()
    pair = Pair(run)
    rng = random.Random(11)
    kills: list[str] = []
    try:
        pair.join()
        sent = asyncio.run(_produce(run, _stream(8)))
        workers = list(pair.workers)
        for n in range(5):
            time.sleep(rng.uniform(2.0, 8.0))
            victim = rng.randrange(2)
            workers[victim].kill()
            kills.append(f"worker-{victim + 1}")
            restarted = run.worker(
                f"worker-{victim + 1}-life-{n + 2}",
                CTXPRESS_WEB_PORT=str(pair.ports[victim]),
                CTXPRESS_DATA_DIR=str(run.tmp / f"data-{victim + 1}"),
            )
            workers[victim] = restarted.start()
        pair.workers = tuple(workers)  # type: ignore[assignment]
        drained = _wait_until_consumed(run, workers)
        result = _account(run, sent)
        _no_lag(run)
    finally:
        pair.stop()
    assert result["classes"] == EXPECTED_CLASSES
    print(
        f"\n{len(sent)} records, SIGKILLs of {kills}: {result['compressed']} compressed, "
        f"{result['letters']} dead letters, each input exactly once; drained {drained:.1f} s "
        "after the last restart"
    )
