"""``ctxpress kafka tool``: names, main classes and the default bootstrap (no broker, no JVM)."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from workers.cli import build_parser
from workers.cli._common import UserError
from workers.cli.kafka_cmd import TOOLS, TOOLS_LOG4J, tool_argv
from workers.core.localkafka import broker_home

JARS = Path("/cache/jars")
B = "127.0.0.1:29092"


def _tail(argv: list[str]) -> list[str]:
    """The main class and its arguments (what follows ``-cp JARS/*``)."""
    return argv[argv.index(f"{JARS}/*") + 1 :]


def test_console_consumer_gets_the_ctxpress_bootstrap_in_front() -> None:
    argv = tool_argv("console-consumer", ["--topic", "t", "--isolation-level",
                     "read_committed"], JARS, B, java="/usr/bin/java")  # fmt: skip
    assert argv[0] == "/usr/bin/java"
    assert f"-Dlog4j2.configurationFile={TOOLS_LOG4J}" in argv
    assert TOOLS_LOG4J.is_file()
    assert _tail(argv) == [
        "org.apache.kafka.tools.consumer.ConsoleConsumer",
        "--bootstrap-server", B, "--topic", "t", "--isolation-level", "read_committed",
    ]  # fmt: skip


@pytest.mark.parametrize(
    "name", ["consumer-groups", "kafka-consumer-groups", "kafka-consumer-groups.sh"]
)
def test_kafka_script_names_map_to_the_same_class(name: str) -> None:
    assert _tail(tool_argv(name, ["--list"], JARS, B)) == [
        "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
        "--bootstrap-server", B, "--list",
    ]  # fmt: skip


def test_a_given_broker_or_help_is_left_alone() -> None:
    for args in (
        ["--bootstrap-server", "other:9092", "--list"],
        ["--bootstrap-server=other:9092", "--list"],
        ["--bootstrap-controller", "c:9093", "describe"],
        ["--help"],
    ):
        assert _tail(tool_argv("topics", args, JARS, B))[1:] == args
    # a subcommand's option goes after the subcommand; tools without the option get none
    assert _tail(tool_argv("cluster", ["cluster-id"], JARS, B))[1:] == [
        "cluster-id", "--bootstrap-server", B,
    ]  # fmt: skip
    assert _tail(tool_argv("dump-log", ["--files", "x.log"], JARS, B)) == [
        "kafka.tools.DumpLogSegments", "--files", "x.log",
    ]  # fmt: skip
    assert _tail(tool_argv("org.apache.kafka.tools.TopicCommand", ["--list"], JARS, B)) == [
        "org.apache.kafka.tools.TopicCommand", "--list",
    ]  # fmt: skip


def test_an_unknown_tool_names_the_known_ones() -> None:
    with pytest.raises(UserError, match=r"no Kafka tool 'kafka-nope\.sh'.*console-consumer"):
        tool_argv("kafka-nope.sh", [], JARS, B)


def test_every_argument_after_the_name_goes_to_the_tool() -> None:
    args = build_parser().parse_args(
        ["kafka", "tool", "configs", "--alter", "--entity-type", "topics", "--list", "--help"]
    )
    assert (args.list, args.name) == (False, "configs")
    assert args.tool_args == ["--alter", "--entity-type", "topics", "--list", "--help"]


def test_every_main_class_is_in_the_fetched_jars() -> None:
    jars = broker_home(os.environ) / "jars"
    found = sorted(jars.glob("kafka-tools-[0-9]*.jar"))
    if not found:
        pytest.skip(f"no kafka-tools jar in {jars} yet ('ctxpress kafka fetch')")
    classes: set[str] = set()
    for jar in [found[0], *jars.glob("kafka_2.13-*.jar")]:
        with zipfile.ZipFile(jar) as z:
            classes |= {n[:-6].replace("/", ".") for n in z.namelist() if n.endswith(".class")}
    missing = {name: t.main_class for name, t in TOOLS.items() if t.main_class not in classes}
    assert not missing
