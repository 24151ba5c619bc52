"""``ctxpress produce``, ``ctxpress consume``, ``ctxpress dlq replay`` and ``ctxpress bench-kafka``.

Topics are named by their short names from topics/ (``transcripts``,
``tool-outputs``, ``compressed``, ``stats``, ``dead-letter``, ``offload``); the
prefix and the broker come from the CTXPRESS_* settings.

    ctxpress produce [-i FILE] [--topic NAME]
    ctxpress consume --topic NAME [--count N] [--timeout S] [-o FILE] [--envelope]
    ctxpress dlq replay [--count N] [--filter-stage S] [--dry-run]
    ctxpress bench-kafka [--records N] [--sizes 2048,51200]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import sys
from collections.abc import Sequence
from typing import Any

import orjson

from workers.cli._common import UserError, open_in, open_out
from workers.core.settings import Settings, SettingsError
from workers.service.kafka import clients
from workers.service.kafka.io import produce_lines, read_topic
from workers.service.process import DLQ_PREFIX, SHORT_NAMES, TopicNames

__all__ = ["register", "replay_plan"]


def _settings(args: argparse.Namespace) -> Settings:
    try:
        overrides: dict[str, Any] = {}
        if getattr(args, "bootstrap", None):
            overrides["kafka_bootstrap"] = args.bootstrap
        if getattr(args, "prefix", None) is not None:
            overrides["topic_prefix"] = args.prefix
        return Settings.from_env(**overrides)
    except SettingsError as exc:
        raise UserError(str(exc)) from exc


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--bootstrap",
        default=None,
        metavar="B",
        help="bootstrap servers (default: CTXPRESS_KAFKA_BOOTSTRAP, 127.0.0.1:19092)",
    )
    p.add_argument(
        "--prefix",
        default=None,
        metavar="P",
        help="topic name prefix (default: CTXPRESS_TOPIC_PREFIX, 'ctxpress.')",
    )


def _run(func: Any, args: argparse.Namespace, name: str) -> int:
    try:
        code: int = asyncio.run(func(args))
        return code
    except UserError as exc:
        print(f"ctxpress {name}: {exc}", file=sys.stderr)
        return 2
    except LookupError as exc:
        print(f"ctxpress {name}: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        from aiokafka.errors import KafkaError

        if isinstance(exc, KafkaError | OSError):
            print(
                f"ctxpress {name}: Kafka error: {type(exc).__name__}: {exc}. Is the broker "
                "running ('ctxpress kafka start') and CTXPRESS_KAFKA_BOOTSTRAP right?",
                file=sys.stderr,
            )
            return 1
        raise


# -- produce ---------------------------------------------------------------------------


async def _produce(args: argparse.Namespace) -> int:
    settings = _settings(args)
    if args.topic is not None and args.topic not in SHORT_NAMES:
        raise UserError(f"unknown topic {args.topic!r}; valid topics: {', '.join(SHORT_NAMES)}")
    source, _size = open_in(args.input)
    try:
        report = await produce_lines(source, settings, args.topic)
    finally:
        if source is not sys.stdin.buffer:
            source.close()
    parts = ", ".join(f"{n:,} to {t}" for t, n in sorted(report.by_topic.items())) or "nothing"
    print(
        f"produced {report.sent:,} records ({parts}), {report.bytes / 1e6:.2f} MB "
        f"in {report.seconds:.2f} s",
        file=sys.stderr,
    )
    for line_no, reason in report.failed[:20]:
        print(f"ctxpress produce: line {line_no} not sent: {reason}", file=sys.stderr)
    return 1 if report.failed else 0


# -- consume ---------------------------------------------------------------------------


def _envelope(record: Any) -> bytes:
    value = record.value
    try:
        parsed: Any = orjson.loads(value) if value is not None else None
    except orjson.JSONDecodeError:
        parsed = value.decode("utf-8", "backslashreplace")
    return orjson.dumps(
        {
            "topic": record.topic,
            "partition": record.partition,
            "offset": record.offset,
            "timestamp": record.timestamp,
            "key": record.key.decode("utf-8", "backslashreplace") if record.key else None,
            "headers": {k: v.decode("utf-8", "backslashreplace") for k, v in record.headers},
            "value": parsed,
        }
    )


async def _consume(args: argparse.Namespace) -> int:
    settings = _settings(args)
    names = TopicNames.from_settings(settings)
    try:
        topic = names.by_short(args.topic)
    except SettingsError as exc:
        raise UserError(str(exc)) from exc
    seen = 0
    with open_out(args.output or "-") as out:
        assert out is not None
        async for record in read_topic(
            settings, topic, count=args.count, idle_timeout=args.timeout
        ):
            if args.envelope:
                out.write(_envelope(record) + b"\n")
            elif record.value is not None:
                out.write(record.value + b"\n")
            else:
                out.write(b"null\n")
            seen += 1
        out.flush()
    if args.count is not None and seen < args.count:
        print(
            f"ctxpress consume: {seen:,} of {args.count:,} records from {topic} "
            f"(nothing new for {args.timeout:g} s)",
            file=sys.stderr,
        )
        return 1
    print(f"ctxpress consume: {seen:,} records from {topic}", file=sys.stderr)
    return 0


# -- dlq replay --------------------------------------------------------------------------


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

    settings = _settings(args)
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


# -- registration ------------------------------------------------------------------------


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    topics = ", ".join(SHORT_NAMES)
    p = sub.add_parser(
        "produce",
        help="push a JSONL file through the worker (one Kafka record per line)",
        description=(
            "Send each line of a JSONL file to an input topic, its bytes unchanged (invalid "
            "lines too: the worker dead-letters them). Key: the record id when the line parses. "
            'Without --topic, records with "kind": "tool_output" go to tool-outputs and the '
            "rest to transcripts."
        ),
    )
    p.add_argument("-i", "--input", default="-", help="JSONL file, or - for stdin (default: -)")
    p.add_argument("--topic", default=None, metavar="NAME", help=f"short topic name ({topics})")
    _common(p)
    p.set_defaults(func=lambda a: _run(_produce, a, "produce"))

    c = sub.add_parser(
        "consume",
        help="print a topic's records, one value per line",
        description=(
            "Read a topic from the beginning (read_committed, no consumer group) and print one "
            "record value per line. Dead letters carry record_id, reason, stage and source in "
            "their value; --envelope adds key, headers and position."
        ),
    )
    c.add_argument("--topic", required=True, metavar="NAME", help=f"short topic name ({topics})")
    c.add_argument("--count", type=int, default=None, metavar="N", help="stop after N records")
    c.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="S",
        help="stop after S seconds without a new record (default: 10)",
    )
    c.add_argument("-o", "--output", default=None, help="output file (default: stdout)")
    c.add_argument(
        "--envelope",
        action="store_true",
        help="print {topic, partition, offset, timestamp, key, headers, value} objects",
    )
    _common(c)
    c.set_defaults(func=lambda a: _run(_consume, a, "consume"))

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
    _common(r)
    r.set_defaults(func=lambda a: _run(_replay, a, "dlq replay"))

    b = sub.add_parser(
        "bench-kafka",
        help="throughput through the broker: worker vs plain aiokafka loop vs in-process",
        description=(
            "Measure records/s and MB/s through the local broker for 2 KB and 50 KB records: the "
            "ctxpress worker, a plain aiokafka consume->produce loop on the same broker, and the "
            "in-process pipeline. Starts its own worker; needs a running broker."
        ),
    )
    b.add_argument(
        "--records", type=int, default=None, metavar="N", help="records per size (default: by size)"
    )
    b.add_argument(
        "--sizes",
        default="2048,51200",
        help="record sizes in bytes, comma-separated (default: 2048,51200)",
    )
    b.add_argument(
        "--mode", default="lossless", help="compression mode of the records (default: lossless)"
    )
    b.add_argument("--json", action="store_true", help="print the results as JSON too")
    b.add_argument(
        "--bootstrap",
        default=None,
        metavar="B",
        help="bootstrap servers (default: CTXPRESS_KAFKA_BOOTSTRAP); the bench creates its own "
        "uuid-prefixed topics",
    )
    b.set_defaults(func=_bench)


def _bench(args: argparse.Namespace) -> int:
    try:
        from workers.bench.kafka import main as bench_main
    except ModuleNotFoundError as exc:  # pragma: no cover
        print(f"ctxpress bench-kafka: not available ({exc})", file=sys.stderr)
        return 2
    try:
        settings = _settings(args)
    except UserError as exc:
        print(f"ctxpress bench-kafka: {exc}", file=sys.stderr)
        return 2
    sizes: Sequence[int] = [int(s) for s in args.sizes.split(",") if s.strip()]
    return bench_main(settings, sizes, args.records, args.mode, args.json)
