"""``ctxpress worker``: run the Faust worker (what ``faust -A workers.app:app worker`` does).

Every setting comes from the environment (see ``ctxpress worker --help``); the
few flags here override the most common ones.  SIGTERM and Ctrl-C stop the
worker gracefully: the batch in flight is published (or, with exactly_once,
its transaction aborted) before the process exits.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Any

from workers.core.settings import Settings, SettingsError, settings_help

__all__ = ["register", "run_worker"]

EPILOG = """\
The worker reads {prefix}transcripts and {prefix}tool-outputs and writes
{prefix}compressed, {prefix}stats, {prefix}dead-letter and {prefix}offload
(create them first: ctxpress topics create). Metrics: http://WEB_HOST:WEB_PORT/metrics;
originals: GET /expand/{{hash}}.

Also startable the usual Faust way (same settings):
  faust -A workers.app:app worker -l info

"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "worker",
        help="run the Kafka worker (Faust agents: compress, publish, dead-letter)",
        description=(
            "Run the ctxpress stream-processing worker on Kafka: consume transcripts and tool "
            "outputs, compress them, publish compressed records, per-engine stats, dead letters "
            "and offloaded originals."
        ),
        epilog=EPILOG.format(prefix="ctxpress.") + settings_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "-l",
        "--loglevel",
        default=os.environ.get("CTXPRESS_LOG_LEVEL", "info"),
        choices=("debug", "info", "warning", "error", "critical"),
        help="log level (default: info, or CTXPRESS_LOG_LEVEL)",
    )
    p.add_argument("--bootstrap", default=None, help="override CTXPRESS_KAFKA_BOOTSTRAP")
    p.add_argument("--web-port", type=int, default=None, help="override CTXPRESS_WEB_PORT")
    p.add_argument("--mode", default=None, help="override CTXPRESS_MODE (default mode of records)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        settings = Settings.from_env(
            kafka_bootstrap=args.bootstrap, web_port=args.web_port, mode=args.mode
        )
    except SettingsError as exc:
        print(f"ctxpress worker: {exc}", file=sys.stderr)
        return 2
    return run_worker(settings, args.loglevel)


def run_worker(settings: Settings, loglevel: str = "info") -> int:
    """Build the app and run a Faust worker until it stops; returns the exit code."""
    import faust

    from workers.engines import UnknownEngine
    from workers.service.app import create_app

    try:
        app: Any = create_app(settings)
    except (SettingsError, UnknownEngine) as exc:
        print(f"ctxpress worker: {exc}", file=sys.stderr)
        return 2
    worker = faust.Worker(app, loglevel=loglevel, redirect_stdouts=False)
    logging.getLogger("workers").setLevel(loglevel.upper())
    try:
        worker.execute_from_commandline()
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return 0
        return code if isinstance(code, int) else 1
    return 0  # pragma: no cover - execute_from_commandline always raises SystemExit
