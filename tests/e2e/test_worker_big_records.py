"""Big records and poison pills on the real broker: none of them stops the stream.

A deployment with a small limit: the input topics accept 8 MiB records; the output
topics take 1 MiB (``max.message.bytes``), and so does the worker
(``CTXPRESS_MAX_MESSAGE_BYTES``).  Mixed in a stream of ordinary records: a 2 MB
transcript (its compressed output is over 1 MiB), 390 KB of ``\\x01`` bytes (invalid
JSON whose dead letter, JSON-escaped, would be 2.3 MB) and an 8-byte invalid value
with a 1.1 MB header.  Each ends as exactly one dead letter that fits, the worker
never restarts, and every record produced after them is processed exactly once.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.e2e._support import Run
from tests.functional.test_worker_sizes import big_transcript
from tests.kafka_broker import kafka_bootstrap  # noqa: F401
from workers.testing.worker import mixed_stream

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(600)]

MIB = 1024 * 1024
INPUT_MAX = 8 * MIB


async def _produce(
    run: Run, records: list[tuple[bytes | None, bytes, list[tuple[str, bytes]]]]
) -> None:
    """Send (key, value, headers) to ``transcripts`` in order, one partition (key-less: 0)."""
    from aiokafka import AIOKafkaProducer

    producer = AIOKafkaProducer(
        bootstrap_servers=run.bootstrap,
        max_request_size=INPUT_MAX,
        enable_idempotence=True,
        acks="all",
    )
    from aiokafka.errors import MessageSizeTooLargeError

    await producer.start()
    try:
        for key, value, headers in records:
            for attempt in range(20):
                try:
                    await (
                        await producer.send(
                            run.names.transcripts,
                            value,
                            key=key,
                            headers=headers or None,
                            partition=0,
                        )
                    )
                    break
                except MessageSizeTooLargeError:
                    # the topic's raised limit reads back before its partition leader
                    # applies it: the same record again, in order, a moment later
                    if attempt == 19:
                        raise
                    await asyncio.sleep(0.5)
    finally:
        await producer.stop()


def _letters(run: Run) -> list[tuple[Any, dict[str, Any]]]:
    return [(r, orjson.loads(r.value)) for r in run.read("dead-letter", idle=3.0)]


def test_big_outputs_and_poison_pills_do_not_stop_the_stream(
    kafka_bootstrap: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    run = Run(kafka_bootstrap, tmp_path)
    run.create_topics(max_message_bytes=MIB)
    run.set_max_message_bytes(run.names.inputs, INPUT_MAX)

    before = [s for s in mixed_stream(40, seed=21, prefix="a") if s.kind == "transcript"]
    after = [s for s in mixed_stream(60, seed=22, prefix="z") if s.kind == "transcript"]
    big = big_transcript("big-2mb", 2 * MIB)
    control = b"\x01" * (390 * 1024)
    header_value = b"h" * (1_100_000)
    records: list[tuple[bytes | None, bytes, list[tuple[str, bytes]]]] = [
        (s.record_id.encode(), s.line, []) for s in before
    ]
    records += [
        (b"big-2mb", big, [("trace", b"t-big")]),
        (b"ctl", control, []),
        (b"hdr", b"notjson!", [("blob", header_value), ("trace", b"t-hdr")]),
    ]
    records += [(s.record_id.encode(), s.line, []) for s in after]
    asyncio.run(_produce(run, records))
    assert len(big) > 2 * MIB

    worker = run.worker(CTXPRESS_MAX_MESSAGE_BYTES=str(MIB)).start()
    try:
        run.wait_for_outputs(len(records), worker, timeout=180)
        assert worker.alive(), worker.log_tail()
        compressed = run.read("compressed", idle=3.0)
        letters = _letters(run)
        assert worker.alive(), "the worker must not have exited (no crash loop)"
    finally:
        code, seconds = worker.terminate(timeout=60)
    log = worker.log_path.read_text(errors="replace")
    assert "PublishError" not in log and "MessageSizeTooLarge" not in log, worker.log_tail(80)
    assert code == 0, worker.log_tail(80)

    # every ordinary record before and after the big ones: exactly once on compressed
    keys = Counter(r.key.decode() for r in compressed)
    wanted = {s.record_id for s in before + after}
    assert set(keys) == wanted, sorted(set(keys) ^ wanted)[:10]
    assert set(keys.values()) == {1}
    assert all(len(r.value) <= MIB for r in compressed)

    # each poison record: exactly one dead letter, within the output topic's limit
    assert len(letters) == 3, [b.get("reason") for _r, b in letters]
    by_offset = {b["source"]["offset"]: (r, b) for r, b in letters}
    first = len(before)
    r_big, b_big = by_offset[first]
    assert b_big["stage"] == "publish"
    assert b_big["record_id"] == "big-2mb"
    assert "exceeds the limit of 1,048,576 bytes" in b_big["reason"]
    assert b_big["original_truncated"] is True
    assert b_big["original_bytes"] == len(big)
    assert b_big["original_sha256"] == hashlib.sha256(big).hexdigest()
    assert dict(r_big.headers)["trace"] == b"t-big"

    r_ctl, b_ctl = by_offset[first + 1]
    assert b_ctl["stage"] == "decode"
    assert b_ctl["original_truncated"] is True
    assert b_ctl["original_bytes"] == len(control)
    assert dict(r_ctl.headers)["ctxpress.dlq.replayable"] == b"false"

    r_hdr, b_hdr = by_offset[first + 2]
    assert b_hdr["stage"] == "decode"
    assert b_hdr["original_value"] == "notjson!"
    assert b_hdr["dropped_headers"] == [{"key": "blob", "bytes": len(header_value)}]
    hdr_headers = dict(r_hdr.headers)
    assert "blob" not in hdr_headers and hdr_headers["trace"] == b"t-hdr"
    for r, _b in letters:
        assert len(r.value) + sum(len(v) for _k, v in r.headers) <= MIB
    print(
        f"\n{len(records)} records ({len(big):,}-byte transcript, {len(control):,} control "
        f"bytes, {len(header_value):,}-byte header): {len(compressed)} compressed, "
        f"{len(letters)} dead letters (sizes {sorted(len(r.value) for r, _b in letters)}); "
        f"SIGTERM stop {seconds:.1f} s"
    )
