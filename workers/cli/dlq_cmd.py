"""``ctxpress dlq replay [--record-id ID] [--offset-range R] [--stage S] [--engine E] ...``.

Re-publishes dead-lettered inputs; each replay is tracked on ``<prefix>dlq-replays``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson

from workers.cli._common import UserError
from workers.cli._kafka import kafka_arguments, run_async, settings_of
from workers.cli.consume_cmd import parse_time
from workers.service.dead_letters import DLQ_PREFIX
from workers.service.topics import TopicNames

__all__ = ["REPLAYS_SHORT", "Filters", "parse_offset_range", "register", "replay_plan"]

#: the compacted topic that records which dead letters were replayed (key: topic/partition/offset)
REPLAYS_SHORT = "dlq-replays"


def _not_replayable(body: Any, stage: str) -> str:
    """Why a dead letter without ``ctxpress.dlq.replayable: true`` is not replayed."""
    if isinstance(body, dict) and body.get("original_truncated"):
        size = body.get("original_bytes")
        sha = body.get("original_sha256", "?")
        return (
            f"stage {stage}: the original ({size:,} bytes, sha256 {sha}) was too large to keep "
            "in the dead letter; only a prefix is there, re-send it from its source"
            if isinstance(size, int)
            else f"stage {stage}: only a prefix of the original is kept; re-send it from its source"
        )
    if isinstance(body, dict) and body.get("original_redacted"):
        return (
            f"stage {stage}: the original held a secret and only its redacted copy is kept; "
            "re-send it from its source"
        )
    return f"stage {stage}: a report about a published record, not an undelivered input"


def replay_plan(
    record: Any,
) -> tuple[str, bytes | None, bytes | None, list[tuple[str, bytes]]] | str:
    """``(topic, key, value, headers)`` to re-publish a dead letter, or why it cannot be.

    A tombstone's dead letter (``original_null``) replays as a null value."""
    headers = {k: v for k, v in record.headers}
    try:
        body = orjson.loads(record.value) if record.value is not None else None
    except orjson.JSONDecodeError:
        body = None
    if headers.get("ctxpress.dlq.replayable") != b"true":
        stage = headers.get("ctxpress.dlq.error.stage", b"?").decode()
        return _not_replayable(body, stage)
    topic = headers.get("ctxpress.dlq.original.topic")
    if not topic:
        return "no ctxpress.dlq.original.topic header"
    if not isinstance(body, dict):
        return "value is not dead-letter JSON"
    value: bytes | None
    if body.get("original_null") is True:
        value = None
    elif isinstance(body.get("original_value"), str):
        value = body["original_value"].encode("utf-8")
    elif "original_value_b64" in body:
        value = base64.b64decode(body["original_value_b64"])
    else:
        return "no original value in the dead letter"
    kept = [(k, v) for k, v in record.headers if not k.startswith(DLQ_PREFIX)]
    kept = [(k, v) for k, v in kept if k != "ctxpress.replay.of"]
    kept.append(
        ("ctxpress.replay.of", f"{record.topic}/{record.partition}/{record.offset}".encode())
    )
    return topic.decode("utf-8"), record.key, value, kept


@dataclass(frozen=True, slots=True)
class Filters:
    """Which dead letters a replay takes (every given filter must match)."""

    record_ids: frozenset[str] = frozenset()
    stage: str | None = None
    engine: str | None = None
    #: (partition or None for every partition, first offset, last offset), inclusive
    offsets: tuple[tuple[int | None, int, int], ...] = ()
    from_ms: int | None = None
    to_ms: int | None = None

    def take(self, record: Any) -> bool:
        headers = dict(record.headers)
        if self.stage and headers.get("ctxpress.dlq.error.stage", b"").decode() != self.stage:
            return False
        if self.engine and headers.get("ctxpress.dlq.error.engine", b"").decode() != self.engine:
            return False
        if self.record_ids:
            rid = headers.get("ctxpress.dlq.record.id")
            if rid is None or rid.decode("utf-8", "replace") not in self.record_ids:
                return False
        if self.offsets and not any(
            (p is None or p == record.partition) and first <= record.offset <= last
            for p, first, last in self.offsets
        ):
            return False
        if self.from_ms is not None and record.timestamp < self.from_ms:
            return False
        return not (self.to_ms is not None and record.timestamp > self.to_ms)


def parse_offset_range(text: str) -> tuple[int | None, int, int]:
    """``A-B``, ``P:A-B`` (partition P only) or ``A`` (one offset), inclusive."""
    partition: int | None = None
    spec = text.strip()
    try:
        if ":" in spec:
            head, spec = spec.split(":", 1)
            partition = int(head)
        first, sep, last = spec.partition("-")
        lo = int(first)
        hi = int(last) if sep else lo
    except ValueError:
        raise UserError(
            f"--offset-range {text!r}: give FIRST-LAST, PARTITION:FIRST-LAST or one OFFSET"
        ) from None
    if hi < lo:
        raise UserError(f"--offset-range {text!r}: the last offset is before the first")
    return partition, lo, hi


def _source(record: Any) -> str:
    return f"{record.topic}/{record.partition}/{record.offset}"


async def _replayed(settings: Any, topic: str, timeout: float) -> set[str]:
    """The dead letters (``topic/partition/offset``) replays already took (compacted topic)."""
    from workers.service.kafka.io import read_topic

    done: set[str] = set()
    async for record in read_topic(settings, topic, idle_timeout=timeout, until_end=True):
        key = (record.key or b"").decode("utf-8", "replace")
        if record.value is None:
            done.discard(key)  # a tombstone: that dead letter may be replayed again
        else:
            done.add(key)
    return done


async def _replay(args: argparse.Namespace) -> int:
    from workers.service.kafka import clients
    from workers.service.kafka.io import read_topic

    settings = settings_of(args)
    names = TopicNames.from_settings(settings)
    tracking = settings.topic(REPLAYS_SHORT)
    filters = Filters(
        record_ids=frozenset(args.record_id or ()),
        stage=args.stage,
        engine=args.engine,
        offsets=tuple(parse_offset_range(r) for r in args.offset_range or ()),
        from_ms=parse_time(args.from_time) if args.from_time else None,
        to_ms=parse_time(args.to_time) if args.to_time else None,
    )
    producer = None
    if not args.dry_run:
        # Started first: it fences an earlier replay of this prefix still running, so the
        # replays read next include every one that committed.
        producer = clients.producer(
            clients.connection(settings),
            acks="all",
            enable_idempotence=True,
            linger_ms=5,
            transactional_id=f"ctxpress-dlq-replay.{settings.topic_prefix}",
        )
        await producer.start()
    try:
        done = set() if args.include_replayed else await _replayed(settings, tracking, 2.0)
        plans: list[
            tuple[Any, tuple[str, bytes | None, bytes | None, list[tuple[str, bytes]]]]
        ] = []
        skipped: dict[str, int] = {}
        async for record in read_topic(
            settings, names.dead_letter, idle_timeout=args.timeout, until_end=True
        ):
            if not filters.take(record):
                continue
            if _source(record) in done:
                why = "replayed before (--include-replayed replays it again)"
                skipped[why] = skipped.get(why, 0) + 1
                continue
            plan = replay_plan(record)
            if isinstance(plan, str):
                skipped[plan] = skipped.get(plan, 0) + 1
                continue
            plans.append((record, plan))
            if args.count is not None and len(plans) >= args.count:
                break
        if args.dry_run:
            for record, (topic, _key, value, _headers) in plans:
                seen = dict(record.headers)
                rid = seen.get("ctxpress.dlq.record.id", b"-").decode("utf-8", "replace")
                stage = seen.get("ctxpress.dlq.error.stage", b"?").decode()
                print(
                    f"{_source(record)}  record {rid}  stage {stage}  -> {topic} "
                    + ("(null: a tombstone)" if value is None else f"({len(value):,} bytes)")
                )
        elif plans:
            assert producer is not None
            now = datetime.now(UTC).isoformat(timespec="milliseconds")
            async with producer.transaction():  # the replays and their tracking, all or none
                futures = []
                for record, (topic, key, value, headers) in plans:
                    futures.append(await producer.send(topic, value, key=key, headers=headers))
                    rid = dict(record.headers).get("ctxpress.dlq.record.id")
                    mark = {
                        "dead_letter": _source(record),
                        "record_id": rid.decode("utf-8", "replace") if rid else None,
                        "to": topic,
                        "replayed_at": now,
                    }
                    futures.append(
                        await producer.send(
                            tracking, orjson.dumps(mark), key=_source(record).encode()
                        )
                    )
                await asyncio.gather(*futures)
    finally:
        if producer is not None:
            await producer.stop()
    by_topic: dict[str, int] = {}
    for _record, (topic, *_rest) in plans:
        by_topic[topic] = by_topic.get(topic, 0) + 1
    verb = "would re-publish" if args.dry_run else "re-published"
    parts = ", ".join(f"{n:,} to {t}" for t, n in sorted(by_topic.items())) or "nothing"
    print(f"ctxpress dlq replay: {verb} {len(plans):,} dead letters ({parts})", file=sys.stderr)
    for reason, n in sorted(skipped.items()):
        print(f"  skipped {n:,}: {reason}", file=sys.stderr)
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    d = sub.add_parser("dlq", help="dead-letter tools")
    dsub = d.add_subparsers(dest="dlq_action", metavar="ACTION", required=True)
    r = dsub.add_parser(
        "replay",
        help="re-publish dead-lettered inputs to their original topic",
        description=(
            "Read the dead-letter topic up to its current end and re-publish every replayable "
            "dead letter (decode, validate and pipeline stages: invalid inputs, with their "
            "original key, value bytes and headers) to the topic named by its "
            "ctxpress.dlq.original.topic header, with a ctxpress.replay.of header. Gate and "
            "engine dead letters describe records that were published, so they are skipped. "
            "Every replay is recorded on the compacted <prefix>dlq-replays topic in the same "
            "Kafka transaction as the re-published records, and a dead letter replayed once is "
            "not replayed again. Filters combine (all must match)."
        ),
    )
    r.add_argument("--count", type=int, default=None, metavar="N", help="replay at most N")
    r.add_argument(
        "--record-id",
        action="append",
        default=None,
        metavar="ID",
        help="only the dead letters of record ID (the ctxpress.dlq.record.id header; repeat "
        "for several)",
    )
    r.add_argument(
        "--offset-range",
        action="append",
        default=None,
        metavar="RANGE",
        help="only dead letters at these dead-letter topic offsets: FIRST-LAST, "
        "PARTITION:FIRST-LAST or one OFFSET, inclusive (repeat for several)",
    )
    r.add_argument(
        "--stage",
        "--filter-stage",
        dest="stage",
        default=None,
        choices=("decode", "validate", "pipeline", "tokenize", "publish", "gate", "engine"),
        help="only dead letters of this stage",
    )
    r.add_argument(
        "--engine",
        default=None,
        metavar="NAME",
        help="only dead letters of this engine (the ctxpress.dlq.error.engine header)",
    )
    r.add_argument(
        "--from-time",
        default=None,
        metavar="T",
        help="only dead letters written at or after T (epoch ms, ISO 8601 or -2h ago)",
    )
    r.add_argument(
        "--to-time",
        default=None,
        metavar="T",
        help="only dead letters written at or before T (epoch ms, ISO 8601 or -2h ago)",
    )
    r.add_argument(
        "--include-replayed",
        action="store_true",
        help="also replay dead letters an earlier replay took",
    )
    r.add_argument(
        "--dry-run",
        action="store_true",
        help="print one line per dead letter that would be replayed (its position, record "
        "id, stage and the topic it would go to); publish nothing",
    )
    r.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="S",
        help="give up reading after S seconds without a record (default: 10)",
    )
    kafka_arguments(r)
    r.set_defaults(func=lambda a: run_async(_replay, a, "dlq replay"))
