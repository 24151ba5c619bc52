"""``ctxpress kafka ...`` (the local broker) and ``ctxpress topics ...`` (topics/ as data).

``register(subparsers)`` adds both commands to the main parser; every leaf sets ``func`` and
``func(args)`` returns the process exit code.

    ctxpress kafka fetch|start|stop|status|logs [-f] [-n N]
    ctxpress kafka tool --list | NAME [ARG ...]    Kafka's own console tools (kafka-tools jar)
    ctxpress topics list [--prefix P] [--dir D] [--json]
    ctxpress topics create [--prefix P] [--bootstrap B] [--replication-factor N] [--dir D]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workers.cli._common import UserError
from workers.service.kafka.options import client_options
from workers.service.topics import REPO_ROOT, TopicSpec, TopicSpecError, create_topics, load_topics

__all__ = ["KAFKA_SCRIPT", "TOOLS", "KafkaTool", "register", "tool_argv"]

KAFKA_SCRIPT = REPO_ROOT / "deploy" / "kafka" / "kafka.sh"
KAFKA_POM = REPO_ROOT / "deploy" / "kafka" / "pom.xml"
TOOLS_LOG4J = REPO_ROOT / "deploy" / "kafka" / "tools-log4j2.properties"

_KAFKA_ACTIONS = {
    "fetch": "download the broker's and the console tools' jars from Maven Central into the "
    "cache (once per pom.xml)",
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


# -- ctxpress kafka tool --------------------------------------------------------------------


@dataclass(frozen=True)
class KafkaTool:
    """One of Kafka's console tools: ``bin/kafka-NAME.sh`` runs ``main_class``."""

    main_class: str
    help: str
    # where the default --bootstrap-server goes when the arguments name none: "front" (top-level
    # option; jopt-simple tools take it anywhere), "end" (an option of the tool's subcommand),
    # None (the tool takes no --bootstrap-server)
    bootstrap: str | None = "front"


_T = "org.apache.kafka.tools."
# Names as in Kafka's bin/ folder without "kafka-" and ".sh"; classes as found with `unzip -l`
# in kafka-tools-4.1.1.jar and kafka_2.13-4.1.1.jar (ConfigCommand is still in the core jar).
TOOLS: dict[str, KafkaTool] = {
    "acls": KafkaTool(_T + "AclCommand", "list, add and remove ACLs"),
    "broker-api-versions": KafkaTool(
        _T + "BrokerApiVersionsCommand", "the API versions each broker supports"
    ),
    "client-metrics": KafkaTool(_T + "ClientMetricsCommand", "client metrics subscriptions"),
    "cluster": KafkaTool(_T + "ClusterTool", "cluster id, unregister a broker", "end"),
    "configs": KafkaTool(
        "kafka.admin.ConfigCommand", "describe and alter topic, broker, client configs"
    ),
    "console-consumer": KafkaTool(
        _T + "consumer.ConsoleConsumer", "print a topic's records (--isolation-level ...)"
    ),
    "console-producer": KafkaTool(_T + "ConsoleProducer", "send lines from stdin to a topic"),
    "console-share-consumer": KafkaTool(
        _T + "consumer.ConsoleShareConsumer", "print records through a share group"
    ),
    "consumer-groups": KafkaTool(
        _T + "consumer.group.ConsumerGroupCommand",
        "list, describe (offsets, lag, members), reset and delete consumer groups",
    ),
    "consumer-perf-test": KafkaTool(_T + "ConsumerPerformance", "consumer throughput test"),
    "delegation-tokens": KafkaTool(_T + "DelegationTokenCommand", "delegation tokens"),
    "delete-records": KafkaTool(
        _T + "DeleteRecordsCommand", "delete records below an offset (--offset-json-file)"
    ),
    "dump-log": KafkaTool("kafka.tools.DumpLogSegments", "print a log segment's records", None),
    "e2e-latency": KafkaTool(_T + "EndToEndLatency", "end-to-end latency test", None),
    "features": KafkaTool(_T + "FeatureCommand", "describe and upgrade feature versions"),
    "get-offsets": KafkaTool(_T + "GetOffsetShell", "a topic's offsets (--time -1: the ends)"),
    "groups": KafkaTool(_T + "GroupsCommand", "list every group, all types"),
    "jmx": KafkaTool(_T + "JmxTool", "read JMX metrics", None),
    "leader-election": KafkaTool(_T + "LeaderElectionCommand", "elect partition leaders"),
    "log-dirs": KafkaTool(_T + "LogDirsCommand", "log directories and partition sizes"),
    "metadata-quorum": KafkaTool(
        _T + "MetadataQuorumCommand", "KRaft quorum status and replication"
    ),
    "producer-perf-test": KafkaTool(
        _T + "ProducerPerformance",
        "producer throughput test (--producer-props bootstrap.servers=...)",
        None,
    ),
    "reassign-partitions": KafkaTool(
        _T + "reassign.ReassignPartitionsCommand", "move partitions between brokers"
    ),
    "replica-verification": KafkaTool(
        _T + "ReplicaVerificationTool", "compare replicas (--broker-list)", None
    ),
    "share-groups": KafkaTool(_T + "consumer.group.ShareGroupCommand", "share groups"),
    "storage": KafkaTool("kafka.tools.StorageTool", "format and inspect KRaft storage", None),
    "streams-application-reset": KafkaTool(
        _T + "StreamsResetter", "reset a Kafka Streams application's offsets"
    ),
    "streams-groups": KafkaTool(_T + "streams.StreamsGroupCommand", "streams groups"),
    "topics": KafkaTool(_T + "TopicCommand", "list, describe, create, alter and delete topics"),
    "transactions": KafkaTool(_T + "TransactionsCommand", "list, describe and abort transactions"),
    "verifiable-consumer": KafkaTool(_T + "VerifiableConsumer", "system-test consumer"),
    "verifiable-producer": KafkaTool(_T + "VerifiableProducer", "system-test producer"),
}

_NO_DEFAULT_BOOTSTRAP = ("--bootstrap-server", "--bootstrap-controller", "--broker-list")


def _tool_named(name: str) -> tuple[str, KafkaTool | None]:
    """``console-consumer``, ``kafka-console-consumer`` and ``kafka-console-consumer.sh`` name
    the same tool; a Java class name (``org.apache.kafka.tools.TopicCommand``) is run as it is."""
    short = name.removesuffix(".sh").removeprefix("kafka-")
    if short in TOOLS:
        return TOOLS[short].main_class, TOOLS[short]
    if "." in name and not name.endswith(".sh"):
        return name, None
    raise UserError(
        f"no Kafka tool {name!r}; 'ctxpress kafka tool --list' lists them: " + ", ".join(TOOLS)
    )


def tool_argv(
    name: str, args: list[str], jars: Path, bootstrap: str, java: str = "java"
) -> list[str]:
    """The ``java`` command line that runs tool ``name`` with ``args``.

    When the tool takes ``--bootstrap-server`` and ``args`` name no broker (and ask for no
    ``--help``), ctxpress's own bootstrap (CTXPRESS_KAFKA_BOOTSTRAP, else the local broker) is
    added, so ``ctxpress kafka tool topics --list`` talks to the broker the other commands use.
    """
    main_class, tool = _tool_named(name)
    given = [a.split("=", 1)[0] for a in args]
    if (
        tool is not None
        and tool.bootstrap is not None
        and not any(flag in given for flag in _NO_DEFAULT_BOOTSTRAP)
        and not {"-h", "--help", "--version"} & set(given)
    ):
        extra = ["--bootstrap-server", bootstrap]
        args = [*extra, *args] if tool.bootstrap == "front" else [*args, *extra]
    opts = shlex.split(os.environ.get("CTXPRESS_KAFKA_TOOL_OPTS", "-Xmx256m"))
    return [
        java,
        *opts,
        "-Djava.awt.headless=true",
        f"-Dlog4j2.configurationFile={TOOLS_LOG4J}",
        "-cp",
        f"{jars}/*",
        main_class,
        *args,
    ]


def _tools_jars() -> Path:
    """The cache's jar folder, fetched first when pom.xml changed or kafka-tools is missing."""
    from workers.core.localkafka import broker_home

    home = broker_home(os.environ)
    jars = home / "jars"
    stamp = home / "jars.stamp"
    want = hashlib.sha256(KAFKA_POM.read_bytes()).hexdigest()
    try:
        fresh = stamp.read_text().strip() == want
    except OSError:
        fresh = False
    if fresh and any(jars.glob("kafka-tools-[0-9]*.jar")):
        return jars
    # kafka.sh prints its progress on stdout: here it goes to stderr, stdout is the tool's
    code = subprocess.run(
        ["bash", str(KAFKA_SCRIPT), "fetch"], stdout=sys.stderr, check=False
    ).returncode
    if code != 0 or not any(jars.glob("kafka-tools-[0-9]*.jar")):
        raise UserError(f"could not fetch Kafka's tools into {jars} (kafka.sh fetch, exit {code})")
    return jars


def _tool_list() -> str:
    width = max(len(name) for name in TOOLS)
    lines = [f"{'NAME'.ljust(width)}  {'MAIN CLASS'.ljust(52)}  WHAT"]
    for name, tool in TOOLS.items():
        lines.append(f"{name.ljust(width)}  {tool.main_class.ljust(52)}  {tool.help}")
    return "\n".join(lines)


def _run_tool(args: argparse.Namespace) -> int:
    if args.list:
        print(_tool_list())
        return 0
    if not args.name:
        _err("kafka tool: name a tool (ctxpress kafka tool --list lists them)")
        return 2
    java = os.environ.get("JAVA", "java")
    try:
        _tool_named(args.name)  # an unknown name fails before any fetch
        if shutil.which(java) is None:
            raise UserError(f"{java} not found on PATH: Kafka's tools need Java 17+")
        argv = tool_argv(args.name, list(args.tool_args), _tools_jars(), _bootstrap(), java)
    except UserError as exc:
        _err(f"kafka tool: {exc}")
        return 2
    try:
        return subprocess.run(argv, check=False).returncode
    except KeyboardInterrupt:  # console-consumer ends with Ctrl-C
        return 130


def _bootstrap() -> str:
    from workers.core.localkafka import bootstrap_from_env

    return bootstrap_from_env()


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
    tool = kafka_sub.add_parser(
        "tool",
        help="run one of Kafka's own console tools (kafka-console-consumer, ...) on its jars",
        description=(
            "Run a Kafka console tool from the kafka-tools jar in the broker's cache (fetched "
            "first if needed), like bin/kafka-NAME.sh: 'ctxpress kafka tool console-consumer "
            "--topic ctxpress.compressed --isolation-level read_committed --from-beginning'. "
            "NAME may carry Kafka's 'kafka-' prefix and '.sh' suffix, or be a Java main class. "
            "Without --bootstrap-server, ctxpress's bootstrap is passed (CTXPRESS_KAFKA_BOOTSTRAP, "
            "else the local broker). JVM flags: CTXPRESS_KAFKA_TOOL_OPTS (default -Xmx256m). "
            "Every argument after NAME goes to the tool; the exit code is the tool's."
        ),
    )
    tool.add_argument("--list", action="store_true", help="list the tools and their main classes")
    tool.add_argument("name", nargs="?", metavar="NAME", help="the tool (see --list)")
    tool.add_argument("tool_args", nargs=argparse.REMAINDER, metavar="ARG", help="its arguments")
    tool.set_defaults(func=_run_tool)

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
