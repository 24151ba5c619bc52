"""``ctxpress expand``: reverse every marker ctxpress wrote; lossless output comes back byte for byte."""

from __future__ import annotations

import argparse
import sys

from workers.cli._common import UserError, offload_dir, refuse_overwrite
from workers.cli._inputs import open_input, open_output
from workers.core.jsonl import BadLine, decode_line
from workers.core.offload import DirectoryStore
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
        "--offload", default=None, metavar="DIR", help="offload directory used by compress"
    )
    p.add_argument(
        "--lenient",
        action="store_true",
        help="leave markers whose stash is missing instead of failing",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except UserError as exc:
        print(f"ctxpress expand: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    # a typo must not create a folder: expand only reads the store
    store = (
        DirectoryStore(offload_dir(args.offload, create=False), create=False)
        if args.offload
        else None
    )
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
