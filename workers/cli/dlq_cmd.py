"""``ctxpress dlq replay [--count N] [--filter-stage S] [--dry-run]``: re-publish dead letters."""

from __future__ import annotations

import argparse
import asyncio
import base64
import sys
from typing import Any

import orjson

from workers.cli._kafka import kafka_arguments, run_async, settings_of
from workers.service.dead_letters import DLQ_PREFIX
from workers.service.topics import TopicNames

__all__ = ["register", "replay_plan"]


def replay_plan(record: Any) -> tuple[str, bytes | None, bytes, list[tuple[str, bytes]]] | str:
    """``(topic, key, value, headers)`` to re-publish a dead letter, or why it cannot be."""
    headers = {k: v for k, v in record.headers}
    if headers.get("ctxpress.dlq.replayable") != b"true":
        stage = headers.get("ctxpress.dlq.error.stage", b"?").decode()
        return f"stage {stage}: a report about a published record, not an undelivered input"
    topic = headers.get("ctxpress.dlq.original.topic")
    if not topic:
        return "no ctxpress.dlq.original.topic header"
    try:
        body = orjson.loads(record.value)
    except orjson.JSONDecodeError:
        return "value is not dead-letter JSON"
    if "original_value" in body:
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


async def _replay(args: argparse.Namespace) -> int:

    from workers.service.kafka import clients
    from workers.service.kafka.io import read_topic

    settings = settings_of(args)
    names = TopicNames.from_settings(settings)
    plans: list[tuple[str, bytes | None, bytes, list[tuple[str, bytes]]]] = []
    skipped: dict[str, int] = {}
    async for record in read_topic(
        settings, names.dead_letter, idle_timeout=args.timeout, until_end=True
    ):
        stage = dict(record.headers).get("ctxpress.dlq.error.stage", b"").decode()
        if args.filter_stage and stage != args.filter_stage:
            continue
        plan = replay_plan(record)
        if isinstance(plan, str):
            skipped[plan] = skipped.get(plan, 0) + 1
            continue
        plans.append(plan)
        if args.count is not None and len(plans) >= args.count:
            break
    if not args.dry_run and plans:
        producer = clients.producer(
            clients.connection(settings), acks="all", enable_idempotence=True, linger_ms=5
        )
        await producer.start()
        try:
            futures = [
                await producer.send(topic, value, key=key, headers=headers)
                for topic, key, value, headers in plans
            ]
            await asyncio.gather(*futures)
        finally:
            await producer.stop()
    by_topic: dict[str, int] = {}
    for topic, *_ in plans:
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
            "engine dead letters describe records that were published, so they are skipped."
        ),
    )
    r.add_argument("--count", type=int, default=None, metavar="N", help="replay at most N")
    r.add_argument(
        "--filter-stage",
        default=None,
        choices=("decode", "validate", "pipeline", "publish", "gate", "engine"),
        help="only dead letters of this stage",
    )
    r.add_argument("--dry-run", action="store_true", help="count, do not publish")
    r.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="S",
        help="give up reading after S seconds without a record (default: 10)",
    )
    kafka_arguments(r)
    r.set_defaults(func=lambda a: run_async(_replay, a, "dlq replay"))
