"""``ctxpress consume --topic NAME [--count N] [--timeout S] [-o FILE] [--envelope]``."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import orjson

from workers.cli._common import UserError, open_out
from workers.cli._kafka import kafka_arguments, run_async, settings_of
from workers.core.settings import SettingsError
from workers.service.topics import SHORT_NAMES, TopicNames

__all__ = ["register"]


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
    from workers.service.kafka.io import read_topic

    settings = settings_of(args)
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


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    topics = ", ".join(SHORT_NAMES)
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
    kafka_arguments(c)
    c.set_defaults(func=lambda a: run_async(_consume, a, "consume"))
