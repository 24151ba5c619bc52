"""``ctxpress produce [-i FILE] [--topic NAME] [--key-field F] [--header K=V] [--mode M]``."""

from __future__ import annotations

import argparse
import sys

from workers.cli._common import UserError, open_in
from workers.cli._kafka import kafka_arguments, run_async, settings_of
from workers.core.catalog import MODES
from workers.service.records import MODE_HEADER
from workers.service.topics import SHORT_NAMES

__all__ = ["parse_headers", "register"]


def parse_headers(items: list[str]) -> list[tuple[str, bytes]]:
    """``K=V`` arguments as Kafka headers (the value may contain '=' and be empty)."""
    out: list[tuple[str, bytes]] = []
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise UserError(f"--header {item!r}: give NAME=VALUE")
        out.append((name, value.encode("utf-8")))
    return out


async def _produce(args: argparse.Namespace) -> int:
    from workers.service.kafka.io import produce_lines

    settings = settings_of(args)
    if args.topic is not None and args.topic not in SHORT_NAMES:
        raise UserError(f"unknown topic {args.topic!r}; valid topics: {', '.join(SHORT_NAMES)}")
    headers = parse_headers(args.header or [])
    if args.mode is not None:
        if args.mode not in (*MODES, "auto"):
            raise UserError(f"unknown mode {args.mode!r}; valid modes: {', '.join(MODES)}, auto")
        headers.append((MODE_HEADER, args.mode.encode("utf-8")))
    source, _size = open_in(args.input)
    try:
        report = await produce_lines(
            source, settings, args.topic, key_field=args.key_field, headers=headers
        )
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
            "lines too: the worker dead-letters them). Key: the record id (or --key-field) when "
            'the line parses. Without --topic, records with "kind": "tool_output" go to '
            "tool-outputs and the rest to transcripts."
        ),
    )
    p.add_argument("-i", "--input", default="-", help="JSONL file, or - for stdin (default: -)")
    p.add_argument("--topic", default=None, metavar="NAME", help=f"short topic name ({topics})")
    p.add_argument(
        "--key-field",
        default="id",
        metavar="F",
        help="record field whose value (string or integer) is the Kafka key; a dotted path "
        "such as metadata.user reaches into objects; records without it get no key "
        "(default: id)",
    )
    p.add_argument(
        "--header",
        action="append",
        default=None,
        metavar="K=V",
        help="add header K with value V to every record (repeat for several)",
    )
    p.add_argument(
        "--mode",
        default=None,
        choices=(*MODES, "auto"),
        help=f"send a {MODE_HEADER} header: the worker compresses these records in this "
        "mode (auto: by their token count), over their own 'mode' field and CTXPRESS_MODE",
    )
    kafka_arguments(p)
    p.set_defaults(func=lambda a: run_async(_produce, a, "produce"))
