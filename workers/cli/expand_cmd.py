"""``ctxpress expand``: reverse every marker ctxpress wrote; lossless output comes back byte for byte."""

from __future__ import annotations

import argparse
import asyncio
import sys

from workers.cli._common import UserError, offload_dir, refuse_overwrite
from workers.cli._inputs import open_input, open_output
from workers.cli._kafka import kafka_arguments, settings_of
from workers.core.jsonl import BadLine, decode_line
from workers.core.offload import DirectoryStore, OffloadStore
from workers.messages import InvalidRecord
from workers.pipeline.expand import ExpandError, expand_line

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "expand",
        help="restore compressed records (reverse every marker)",
        description="Reverse every ctxpress marker. Records compressed in lossless mode come back "
        "byte for byte; lossy modes need the --offload store they were compressed with.",
    )
    p.add_argument(
        "-i",
        "--input",
        default="-",
        help="compressed JSONL file, or - for stdin (default: -); .gz and .zst input is "
        "decompressed",
    )
    p.add_argument(
        "-o",
        "--output",
        default="-",
        help="output JSONL file, or - for stdout (default: -); *.gz and *.zst are written "
        "compressed",
    )
    p.add_argument(
        "--offload",
        default=None,
        metavar="DIR|kafka",
        help="offload directory used by compress, or 'kafka': the worker's compacted offload "
        "topic (for records read back from the compressed topic; --bootstrap and --prefix "
        "pick the cluster and topic; a folder named kafka is ./kafka)",
    )
    p.add_argument(
        "--lenient",
        action="store_true",
        help="leave markers whose stash is missing instead of failing",
    )
    kafka_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except UserError as exc:
        print(f"ctxpress expand: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    from workers.cli._kafka_offload import KAFKA_STORE

    if args.offload == KAFKA_STORE:
        return _run_kafka(args)
    # a typo must not create a folder: expand only reads the store
    store = (
        DirectoryStore(offload_dir(args.offload, create=False), create=False)
        if args.offload
        else None
    )
    return _expand(args, store)


def _run_kafka(args: argparse.Namespace) -> int:
    """``--offload kafka``: the offload topic read whole into memory, then the input expanded."""
    from workers.cli._kafka_offload import OffloadTopic

    settings = settings_of(args)

    async def go() -> int:
        async with OffloadTopic(settings) as topic:
            print(
                f"ctxpress expand: {len(topic):,} stashed originals from {topic.topic}",
                file=sys.stderr,
            )
            return _expand(args, topic.store)

    try:
        return asyncio.run(go())
    except UserError:
        raise
    except Exception as exc:
        from workers.service.kafka.clients import kafka_error_hint

        hint = kafka_error_hint(exc, "expand")
        if hint is None:
            raise
        print(hint, file=sys.stderr)
        return 1


def _expand(args: argparse.Namespace, store: OffloadStore | None) -> int:
    source, _, _ = open_input(args.input)
    refuse_overwrite(source, (("-o", args.output),))
    errors = 0
    with open_output(args.output) as out:
        assert out is not None
        for line_no, raw in enumerate(source, start=1):
            stripped = raw.strip()
            if not stripped:
                continue
            value = decode_line(stripped, line_no, 1 << 62)
            if isinstance(value, BadLine):
                print(f"ctxpress expand: {value.reason}", file=sys.stderr)
                errors += 1
                continue
            try:
                restored = expand_line(stripped, value, store, strict=not args.lenient)
            except (ExpandError, InvalidRecord, ValueError) as exc:
                print(f"ctxpress expand: line {line_no}: {exc}", file=sys.stderr)
                errors += 1
                continue
            out.write(restored + b"\n")
    if errors:
        print(f"ctxpress expand: {errors} line(s) could not be expanded", file=sys.stderr)
        return 1
    return 0
