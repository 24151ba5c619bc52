"""Kafka's own console tools and expand from Kafka (issue 14), on the real broker.

One worker in standard mode compresses records that stash (a long pytest run, a long log in a
tool message), so their originals go to the offload topic. Then:

- ``ctxpress kafka tool console-consumer --isolation-level read_committed`` prints the worker's
  output, and skips an aborted transaction that ``read_uncommitted`` shows;
- ``ctxpress kafka tool consumer-groups --describe`` shows the worker's group with no lag;
- ``ctxpress kafka tool topics`` and ``configs --alter`` work on a topic of their own;
- ``ctxpress consume --expand`` and ``ctxpress expand --offload kafka`` give the inputs back byte
  for byte (these inputs have no trailing white space, so standard mode's whitespace
  normalisation does not show and nothing is redacted).
"""

from __future__ import annotations

import asyncio
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest

from tests.e2e._support import Run
from tests.kafka_broker import kafka_bootstrap  # noqa: F401
from workers.service.supervise import ctxpress_argv

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(400)]


def _inputs() -> list[bytes]:
    lines = []
    for r in range(4):
        passed = "\n".join(
            f"tests/test_mod{r}.py::test_case_{i} PASSED   [{i * 100 // 300:3d}%]"
            for i in range(300)
        )
        content = (
            "============================= test session starts =============================\n"
            "platform linux -- Python 3.11.2, pytest-8.3.3\ncollected 301 items\n\n"
            f"{passed}\ntests/test_mod{r}.py::test_broken FAILED\n\n"
            "=================================== FAILURES ===================================\n"
            f"E   assert 41 == 42\n====== 1 failed, 300 passed in 3.2{r}s ======"
        )
        lines.append(
            orjson.dumps(
                {"id": f"t{r}", "kind": "tool_output", "command": "pytest -v", "content": content}
            )
        )
        log = "\n".join(
            f"2026-12-01T10:{i // 60:02d}:{i % 60:02d}Z INFO worker-{r} processed batch {i} "
            f"in {i % 17} ms"
            for i in range(400)
        )
        call = {
            "id": f"call{r}",
            "type": "function",
            "function": {"name": "bash", "arguments": '{"cmd": "cat app.log"}'},
        }
        messages = [
            {"role": "user", "content": "why did the job fail?"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {
                "role": "tool",
                "tool_call_id": f"call{r}",
                "content": log + "\n2026-12-01T11:00:00Z ERROR worker-0 out of memory",
            },
        ]
        lines.append(orjson.dumps({"id": f"c{r}", "messages": messages}))
    return lines


def _ctxpress(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*ctxpress_argv(), *args], capture_output=True, timeout=timeout, check=False
    )


def _by_id(lines: list[bytes]) -> dict[str, bytes]:
    return {orjson.loads(line)["id"]: line for line in lines}


@dataclass
class Deployment:
    run: Run
    inputs: list[bytes]
    tmp: Path


@pytest.fixture(scope="module")
def deployment(
    kafka_bootstrap: str,  # noqa: F811
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Deployment]:
    tmp = tmp_path_factory.mktemp("tools")
    run = Run(kafka_bootstrap, tmp)
    run.create_topics()
    inputs = _inputs()
    source = tmp / "in.jsonl"
    source.write_bytes(b"".join(line + b"\n" for line in inputs))
    worker = run.worker(CTXPRESS_PIPELINE_FACTORY="", CTXPRESS_MODE="standard").start()
    try:
        sent = _ctxpress(
            "produce", "-i", str(source), "--bootstrap", run.bootstrap, "--prefix", run.prefix
        )
        assert sent.returncode == 0, sent.stderr
        run.wait_for_outputs(len(inputs), worker, timeout=180)
        yield Deployment(run, inputs, tmp)
    finally:
        code, _ = worker.terminate()
    assert code == 0, worker.log_tail()


def _tool(run: Run, *args: str) -> subprocess.CompletedProcess[bytes]:
    return _ctxpress("kafka", "tool", *args, "--bootstrap-server", run.bootstrap)


def test_kafka_tool_lists_the_console_tools() -> None:
    done = _ctxpress("kafka", "tool", "--list")
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line.split()[1] for line in done.stdout.decode().splitlines()[1:]}
    assert rows["console-consumer"] == "org.apache.kafka.tools.consumer.ConsoleConsumer"
    assert rows["consumer-groups"] == "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
    assert rows["configs"] == "kafka.admin.ConfigCommand"
    unknown = _ctxpress("kafka", "tool", "kafka-no-such-tool.sh")
    assert unknown.returncode == 2
    assert b"no Kafka tool 'kafka-no-such-tool.sh'" in unknown.stderr


def test_console_consumer_read_committed_and_consumer_groups(deployment: Deployment) -> None:
    run = deployment.run
    compressed = run.names.compressed
    # the worker's output, as a Kafka user reads it: keys are the record ids
    done = _tool(
        run,
        "console-consumer",
        "--topic",
        compressed,
        "--isolation-level",
        "read_committed",
        "--from-beginning",
        "--max-messages",
        str(len(deployment.inputs)),
        "--timeout-ms",
        "60000",
        "--property",
        "print.key=true",
    )
    assert done.returncode == 0, done.stderr
    printed = dict(line.split(b"\t", 1) for line in done.stdout.splitlines())
    assert set(printed) == {k.encode() for k in _by_id(deployment.inputs)}
    values = {r.key: r.value for r in run.read("compressed", idle=2.0)}
    assert printed == values
    assert all(b"<<cx:" in v for v in values.values())  # every record stashed something
    assert f"Processed a total of {len(deployment.inputs)} messages".encode() in done.stderr

    # consumer-groups --describe: the worker's group read both input topics to the end
    inputs = {run.names.transcripts, run.names.tool_outputs}
    rows: list[dict[str, str]] = []
    for _ in range(30):
        done = _tool(run, "consumer-groups", "--describe", "--group", run.app_id)
        assert done.returncode == 0, done.stderr
        lines = [line.split() for line in done.stdout.decode().splitlines()]
        header = next((line for line in lines if line[:2] == ["GROUP", "TOPIC"]), [])
        rows = [
            dict(zip(header, line, strict=False))
            for line in lines
            if header and line and line[0] == run.app_id and line[1] in inputs
        ]
        # a partition that never held a record has no committed offset ("-")
        settled = [r for r in rows if r["LAG"] == "0" or r["LOG-END-OFFSET"] == "0"]
        if {r["TOPIC"] for r in rows} == inputs and len(settled) == len(rows):
            break
        asyncio.run(asyncio.sleep(1.0))
    else:
        raise AssertionError(f"no settled group {run.app_id}:\n{done.stdout.decode()}")
    assert len(rows) == 8, rows  # 4 partitions each, all assigned to the one worker
    committed = {
        topic: sum(
            int(r["CURRENT-OFFSET"]) for r in rows if r["TOPIC"] == topic and r["LAG"] == "0"
        )
        for topic in inputs
    }
    # 4 transcripts and 4 tool outputs, all processed
    assert committed == {run.names.transcripts: 4, run.names.tool_outputs: 4}
    assert all(r["CONSUMER-ID"].startswith("faust-") for r in rows)


def test_console_consumer_skips_an_aborted_transaction(kafka_bootstrap: str) -> None:  # noqa: F811
    topic = f"tools-{uuid.uuid4().hex[:8]}"
    made = _ctxpress(
        "kafka", "tool", "topics", "--create", "--topic", topic, "--partitions", "1",
        "--bootstrap-server", kafka_bootstrap,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert f"Created topic {topic}.".encode() in made.stdout
    limit = _ctxpress(
        "kafka", "tool", "configs", "--alter", "--entity-type", "topics", "--entity-name", topic,
        "--add-config", "max.message.bytes=2000000", "--bootstrap-server", kafka_bootstrap,
    )  # fmt: skip
    assert limit.returncode == 0, limit.stderr
    described = _ctxpress(
        "kafka", "tool", "configs", "--describe", "--entity-type", "topics", "--entity-name",
        topic, "--bootstrap-server", kafka_bootstrap,
    )  # fmt: skip
    assert b"max.message.bytes=2000000" in described.stdout, described.stdout

    async def produce() -> None:
        from aiokafka import AIOKafkaProducer

        producer = AIOKafkaProducer(
            bootstrap_servers=kafka_bootstrap, transactional_id=f"{topic}-tx"
        )
        await producer.start()
        try:
            for value, commit in ((b"first", True), (b"aborted", False), (b"third", True)):
                await producer.begin_transaction()
                await producer.send_and_wait(topic, value)
                if commit:
                    await producer.commit_transaction()
                else:
                    await producer.abort_transaction()
        finally:
            await producer.stop()

    asyncio.run(produce())

    def read(level: str, count: int) -> list[bytes]:
        done = _ctxpress(
            "kafka", "tool", "kafka-console-consumer.sh", "--bootstrap-server", kafka_bootstrap,
            "--topic", topic, "--from-beginning", "--isolation-level", level,
            "--max-messages", str(count), "--timeout-ms", "30000",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout.splitlines()

    assert read("read_committed", 2) == [b"first", b"third"]
    assert read("read_uncommitted", 3) == [b"first", b"aborted", b"third"]
    _ctxpress(
        "kafka", "tool", "topics", "--delete", "--topic", topic,
        "--bootstrap-server", kafka_bootstrap,
    )  # fmt: skip


def test_consume_expand_gives_the_inputs_back(deployment: Deployment) -> None:
    run, tmp = deployment.run, deployment.tmp
    want = _by_id(deployment.inputs)
    common = ("--bootstrap", run.bootstrap, "--prefix", run.prefix)

    expanded = tmp / "expanded.jsonl"
    done = _ctxpress(
        "consume", "--topic", "compressed", "--expand", "-e", "-o", str(expanded), *common
    )
    assert done.returncode == 0, done.stderr
    got = expanded.read_bytes().splitlines()
    assert len(got) == len(want)
    assert _by_id(got) == want  # byte for byte

    # the compressed records, expanded later from the offload topic
    small = tmp / "small.jsonl"
    done = _ctxpress("consume", "--topic", "compressed", "-e", "-o", str(small), *common)
    assert done.returncode == 0, done.stderr
    assert sum(len(line) for line in small.read_bytes().splitlines()) * 4 < sum(
        len(line) for line in want.values()
    )
    back = tmp / "back.jsonl"
    done = _ctxpress("expand", "--offload", "kafka", "-i", str(small), "-o", str(back), *common)
    assert done.returncode == 0, done.stderr
    assert b"stashed originals from " + run.names.offload.encode() in done.stderr
    assert _by_id(back.read_bytes().splitlines()) == want

    # without the offload topic the stashes are missing: expand says so and fails
    bare = _ctxpress("expand", "-i", str(small), "-o", str(tmp / "bare.jsonl"))
    assert bare.returncode == 1
    assert b"stashed span(s) not found" in bare.stderr

    # another prefix has an empty offload topic: every record is named as not expanded
    other = Run(run.bootstrap, tmp / "other")
    other.create_topics()
    done = _ctxpress(
        "expand", "--offload", "kafka", "-i", str(small), "-o", str(tmp / "none.jsonl"),
        "--bootstrap", run.bootstrap, "--prefix", other.prefix,
    )  # fmt: skip
    assert done.returncode == 1
    assert f"{len(want)} line(s) could not be expanded".encode() in done.stderr

    # a prefix without topics: one line at once, not a wait
    missing = _ctxpress(
        "consume", "--topic", "compressed", "--expand", "-e", "--bootstrap", run.bootstrap,
        "--prefix", f"none{other.tag}.",
    )  # fmt: skip
    assert missing.returncode == 2
    assert f"the offload topic none{other.tag}.offload does not exist".encode() in missing.stderr
