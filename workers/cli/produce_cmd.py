"""``ctxpress produce [-i FILE] [--topic NAME]``: one Kafka record per input line."""

from __future__ import annotations

import argparse
import sys

from workers.cli._common import UserError, open_in
from workers.cli._kafka import kafka_arguments, run_async, settings_of
from workers.service.topics import SHORT_NAMES

__all__ = ["register"]


async def _produce(args: argparse.Namespace) -> int:
    from workers.service.kafka.io import produce_lines

    settings = settings_of(args)
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
    kafka_arguments(p)
    p.set_defaults(func=lambda a: run_async(_produce, a, "produce"))
