"""The ``ctxpress`` command line: one sub-command module each, registered here.

Each module exposes ``register(subparsers)``; its sub-parsers set ``func`` to
a callable taking the parsed args and returning an exit code.  Errors that a
user can fix print one line that says what to do and exit 2; bugs raise.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from workers.core.errors import CtxpressError

__all__ = ["main"]

COMMAND_MODULES = (
    "workers.cli.compress",
    "workers.cli.expand_cmd",
    "workers.cli.bench",
    "workers.cli.kafka_cmd",
    "workers.cli.worker_cmd",
    "workers.cli.produce_cmd",
    "workers.cli.consume_cmd",
    "workers.cli.dlq_cmd",
    "workers.cli.bench_kafka_cmd",
    "workers.cli.demo",
    "workers.cli.corpus_cmd",
    "workers.cli.stats_cmd",
)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ctxpress")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ctxpress",
        description="Compress LLM chat transcripts and agent tool outputs without making them wrong.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version", action="version", version=f"ctxpress {_version()}", help="print the version"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue  # that command is not part of this build yet
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        code: int = func(args)
    except KeyboardInterrupt:
        print("ctxpress: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except CtxpressError as exc:  # raised on purpose: one line that says what to do, no traceback
        print(f"ctxpress {args.command}: {exc}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
