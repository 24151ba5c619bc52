"""``ctxpress kafka ...`` (the local broker) and ``ctxpress topics ...`` (topics/ as data).

``register(subparsers)`` adds both commands to the main parser; every leaf sets ``func`` and
``func(args)`` returns the process exit code.

    ctxpress kafka fetch|start|stop|status|logs [-f] [-n N]
    ctxpress topics list [--prefix P] [--dir D] [--json]
    ctxpress topics create [--prefix P] [--bootstrap B] [--replication-factor N] [--dir D]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from workers.service.kafka.options import client_options
from workers.service.topics import REPO_ROOT, TopicSpec, TopicSpecError, create_topics, load_topics

__all__ = ["KAFKA_SCRIPT", "register"]

KAFKA_SCRIPT = REPO_ROOT / "deploy" / "kafka" / "kafka.sh"

_KAFKA_ACTIONS = {
    "fetch": "download the broker's jars from Maven Central into the cache (once)",
    "start": "start the local single-node broker (fetches first if needed) and wait until ready",
    "stop": "stop the local broker (SIGTERM, SIGKILL after 30 s)",
    "status": "print whether the local broker runs (exit 0) or not (exit 3)",
    "logs": "print the local broker's server.log",
}


def _err(message: str) -> None:
    print(f"ctxpress: error: {message}", file=sys.stderr)


# -- ctxpress kafka -------------------------------------------------------------------------


def _run_kafka(args: argparse.Namespace) -> int:
    script: Path = KAFKA_SCRIPT
    if not script.is_file():
        _err(
            f"{script} not found: 'ctxpress kafka' needs the ctxpress repository "
            "(pip install -e .), not an installed wheel"
        )
        return 2
    argv = ["bash", str(script), args.kafka_action]
    if args.kafka_action == "logs":
        argv += ["-n", str(args.lines)]
        if args.follow:
            argv.append("-f")
    try:
        return subprocess.run(argv, check=False).returncode
    except KeyboardInterrupt:  # `logs -f` ends with Ctrl-C
        return 130


# -- ctxpress topics ------------------------------------------------------------------------


def _settings() -> Any:
    from workers.core.settings import Settings

    return Settings.from_env()


def _retention(ms: int) -> str:
    if ms < 0:
        return "forever"
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1000)):
        if ms >= size and ms % size == 0:
            return f"{ms // size}{unit}"
    return f"{ms}ms"


def _prefix(args: argparse.Namespace) -> str:
    if args.prefix is not None:
        return str(args.prefix)
    return str(_settings().topic_prefix)


def _topics_list(args: argparse.Namespace) -> int:
    try:
        specs = load_topics(args.dir)
        prefix = _prefix(args)
    except (TopicSpecError, ValueError) as exc:
        _err(str(exc))
        return 2
    if args.json:
        rows = [
            {
                "topic": spec.full_name(prefix),
                "name": spec.name,
                "partitions": spec.partitions,
                "replication_factor": spec.replication_factor,
                "retention_ms": spec.retention_ms,
                "cleanup_policy": spec.cleanup_policy,
                "configs": spec.kafka_configs(),
                "key": spec.key,
                "value_schema": spec.value_schema,
                "direction": spec.direction,
                "description": spec.description,
            }
            for spec in specs.values()
        ]
        print(json.dumps(rows, indent=2))
        return 0
    print(_table(list(specs.values()), prefix))
    return 0


def _table(specs: list[TopicSpec], prefix: str) -> str:
    header = ("TOPIC", "DIR", "PARTITIONS", "RF", "RETENTION", "CLEANUP", "VALUE SCHEMA", "KEY")
    rows = [
        (
            spec.full_name(prefix),
            spec.direction or "-",
            str(spec.partitions),
            str(spec.replication_factor),
            _retention(spec.retention_ms),
            spec.cleanup_policy,
            f"schemas/{spec.value_schema}",
            spec.key,
        )
        for spec in specs
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
    lines = []
    for row in [header, *rows]:
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])]
        lines.append("  ".join([*cells, row[-1]]))
    return "\n".join(lines)


def _topics_create(args: argparse.Namespace) -> int:
    try:
        specs = load_topics(args.dir)
        settings = _settings()
        options = client_options(settings)  # the worker's own: one rule for every client
    except (TopicSpecError, ValueError) as exc:
        _err(str(exc))
        return 2
    prefix = args.prefix if args.prefix is not None else settings.topic_prefix
    bootstrap = args.bootstrap or settings.kafka_bootstrap
    try:
        created = asyncio.run(
            create_topics(
                bootstrap,
                specs,
                prefix,
                replication_factor=args.replication_factor,
                client_options=options,
                timeout_ms=args.timeout_ms,
                max_message_bytes=settings.max_message_bytes,
            )
        )
    except TopicSpecError as exc:
        _err(str(exc))
        return 2
    except Exception as exc:
        _err(
            f"creating topics on {bootstrap} failed: {type(exc).__name__}: {exc}. "
            "Is the broker running ('ctxpress kafka start' for the local one) and is "
            "CTXPRESS_KAFKA_BOOTSTRAP / --bootstrap right?"
        )
        return 1
    names = {spec.full_name(prefix) for spec in specs.values()}
    for name in sorted(names):
        print(f"{'created' if name in created else 'exists '}  {name}")
    print(f"{len(created)} created, {len(names) - len(created)} already existed on {bootstrap}")
    return 0


# -- registration ---------------------------------------------------------------------------


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``kafka`` and ``topics`` to the main parser's subparsers."""
    kafka = subparsers.add_parser(
        "kafka",
        help="run the local single-node Apache Kafka broker (deploy/kafka/kafka.sh)",
        description=(
            "Run a real single-node Apache Kafka (KRaft) on 127.0.0.1 from Maven Central jars; "
            "no Docker. Ports: CTXPRESS_KAFKA_PORT (default: the port of a 127.0.0.1 "
            "CTXPRESS_KAFKA_BOOTSTRAP, else 19092), CTXPRESS_KAFKA_CONTROLLER_PORT (19093); "
            "cache: CTXPRESS_KAFKA_HOME (.cache/kafka). Every ctxpress command then finds the "
            "running broker without CTXPRESS_KAFKA_BOOTSTRAP. The exit code is kafka.sh's."
        ),
    )
    kafka_sub = kafka.add_subparsers(dest="kafka_action", metavar="ACTION", required=True)
    for action, help_text in _KAFKA_ACTIONS.items():
        p = kafka_sub.add_parser(action, help=help_text, description=help_text)
        if action == "logs":
            p.add_argument(
                "-f", "--follow", action="store_true", help="keep printing new lines (Ctrl-C ends)"
            )
            p.add_argument(
                "-n",
                "--lines",
                type=int,
                default=100,
                metavar="N",
                help="number of last lines to print (default: 100)",
            )
        p.set_defaults(func=_run_kafka)

    topics = subparsers.add_parser(
        "topics",
        help="list or create the Kafka topics defined in topics/",
        description="The topics ctxpress reads and writes, defined as data in topics/*.json.",
    )
    topics_sub = topics.add_subparsers(dest="topics_action", metavar="ACTION", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--prefix",
            default=None,
            metavar="P",
            help="topic name prefix (default: CTXPRESS_TOPIC_PREFIX, 'ctxpress.')",
        )
        p.add_argument(
            "--dir",
            default=None,
            type=Path,
            metavar="D",
            help="folder with the topic definitions (default: the repository's topics/)",
        )

    listing = topics_sub.add_parser(
        "list",
        help="print the topic table from topics/",
        description="Print every topic defined in topics/ with its full name and settings.",
    )
    common(listing)
    listing.add_argument("--json", action="store_true", help="print JSON instead of a table")
    listing.set_defaults(func=_topics_list)

    create = topics_sub.add_parser(
        "create",
        help="create the missing topics on a Kafka cluster (existing ones are left alone)",
        description=(
            "Create every topic from topics/ that does not exist yet. Idempotent: existing "
            "topics keep their partitions and configs. Security settings come from the "
            "CTXPRESS_KAFKA_* environment."
        ),
    )
    common(create)
    create.add_argument(
        "--bootstrap",
        default=None,
        metavar="B",
        help="bootstrap servers host:port[,host:port] (default: CTXPRESS_KAFKA_BOOTSTRAP; unset: "
        "the local broker, 127.0.0.1:$CTXPRESS_KAFKA_PORT or the one 'ctxpress kafka start' "
        "runs, else 127.0.0.1:19092)",
    )
    create.add_argument(
        "--replication-factor",
        type=int,
        default=None,
        metavar="N",
        help="override the files' replication factor (1, for the single-node broker)",
    )
    create.add_argument(
        "--timeout-ms",
        type=int,
        default=30000,
        metavar="MS",
        help="admin request timeout in milliseconds (default: 30000)",
    )
    create.set_defaults(func=_topics_create)
