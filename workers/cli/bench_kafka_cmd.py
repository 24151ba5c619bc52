"""``ctxpress bench-kafka [--records N] [--sizes 2048,51200,...]``: throughput through the broker."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from workers.cli._common import UserError
from workers.cli._kafka import settings_of

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    b = sub.add_parser(
        "bench-kafka",
        help="throughput through the broker: worker vs plain aiokafka loop vs in-process",
        description=(
            "Measure records/s and MB/s through the local broker for 2 KB, 50 KB, 1 MB and 5 MB records: the "
            "ctxpress worker, a plain aiokafka consume->produce loop on the same broker, and the "
            "in-process pipeline. Starts its own worker; needs a running broker. The topics it "
            "creates are deleted at the end."
        ),
    )
    b.add_argument(
        "--records", type=int, default=None, metavar="N", help="records per size (default: by size)"
    )
    b.add_argument(
        "--sizes",
        default="2048,51200,1048576,5242880",
        help="record sizes in bytes, comma-separated (default: 2048,51200,1048576,5242880: "
        "single tool outputs, long ones, 1 MB and 5 MB transcripts)",
    )
    b.add_argument(
        "--mode", default="lossless", help="compression mode of the records (default: lossless)"
    )
    b.add_argument("--json", action="store_true", help="print the results as JSON too")
    b.add_argument(
        "--keep-topics",
        action="store_true",
        help="keep the bench<uuid>-* topics it creates (deleted at the end by default, also "
        "when the run fails)",
    )
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
        settings = settings_of(args)
    except UserError as exc:
        print(f"ctxpress bench-kafka: {exc}", file=sys.stderr)
        return 2
    sizes: Sequence[int] = [int(s) for s in args.sizes.split(",") if s.strip()]
    return bench_main(settings, sizes, args.records, args.mode, args.json, args.keep_topics)
