"""``ctxpress produce`` and ``consume`` the way Kafka users work (issue 14), on the real broker."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.e2e._support import Run
from tests.kafka_broker import kafka_bootstrap  # noqa: F401
from workers.cli import main
from workers.service.supervise import ctxpress_argv

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(300)]


def _records(n: int, start: int = 0) -> bytes:
    return b"".join(
        orjson.dumps(
            {
                "id": f"r{i}",
                "meta": {"user": f"user-{i % 3}"},
                "messages": [{"role": "user", "content": f"hello {i}"}],
            }
        )
        + b"\n"
        for i in range(start, start + n)
    )


def _consume(run: Run, tmp: Path, *extra: str) -> tuple[int, list[Any], float]:
    out = tmp / f"out-{time.monotonic_ns()}.jsonl"
    started = time.monotonic()
    code = main(
        ["consume", "--topic", "transcripts", "--prefix", run.prefix, "-o", str(out), *extra]
    )
    took = time.monotonic() - started
    return code, [orjson.loads(line) for line in out.read_bytes().splitlines()], took


def test_produce_and_consume_like_kcat(kafka_bootstrap: str, tmp_path: Path) -> None:  # noqa: F811
    run = Run(kafka_bootstrap, tmp_path)
    run.create_topics()
    source = tmp_path / "in.jsonl"
    source.write_bytes(_records(12))
    before_ms = int(time.time() * 1000) - 1000
    code = main(
        [
            "produce",
            "-i",
            str(source),
            "--prefix",
            run.prefix,
            "--key-field",
            "meta.user",
            "--header",
            "tenant=acme",
            "--mode",
            "off",
        ]
    )
    assert code == 0

    # keys and headers on request; --until-end stops at the end instead of an idle timeout
    code, rows, took = _consume(run, tmp_path, "--keys", "--headers", "-e", "--timeout", "30")
    assert code == 0
    assert took < 10, took
    assert len(rows) == 12
    assert {r["value"]["id"] for r in rows} == {f"r{i}" for i in range(12)}
    for r in rows:
        assert r["key"] == r["value"]["meta"]["user"]
        assert r["headers"] == {"tenant": "acme", "ctxpress.mode": "off"}

    _, everything, _ = _consume(run, tmp_path, "--envelope", "-e")
    by_partition: dict[int, list[dict[str, Any]]] = {}
    for r in everything:
        by_partition.setdefault(r["partition"], []).append(r)
    # three keys: at most three partitions hold records
    used = sorted(by_partition)
    one = used[0]
    _, only, _ = _consume(run, tmp_path, "-p", str(one), "--envelope", "-e")
    assert [r["offset"] for r in only] == [r["offset"] for r in by_partition[one]]
    assert {r["partition"] for r in only} == {one}

    # offsets: the last record of each partition; from offset 1; from the end: nothing
    _, last, _ = _consume(run, tmp_path, "--from-offset", "-1", "--envelope", "-e")
    assert sorted((r["partition"], r["offset"]) for r in last) == sorted(
        (p, rs[-1]["offset"]) for p, rs in by_partition.items()
    )
    _, later, _ = _consume(run, tmp_path, "-p", str(one), "--from-offset", "1", "-e")
    assert len(later) == len(by_partition[one]) - 1
    code, none, took = _consume(run, tmp_path, "--from-offset", "end", "-e", "--timeout", "30")
    assert (code, none) == (0, [])
    assert took < 10

    # time: everything was produced after before_ms; nothing after now + 1 h
    _, since, _ = _consume(run, tmp_path, "--from-time", str(before_ms), "-e")
    assert len(since) == 12
    _, future, _ = _consume(run, tmp_path, "--from-time", str(before_ms + 3_600_000), "-e")
    assert future == []

    # --follow waits past the idle timeout for the next record
    out = tmp_path / "follow.jsonl"
    follower = subprocess.Popen(
        [
            *ctxpress_argv(),
            "consume",
            "--topic",
            "transcripts",
            "--prefix",
            run.prefix,
            "--bootstrap",
            kafka_bootstrap,
            "--follow",
            "--timeout",
            "1",
            "--count",
            "13",
            "-o",
            str(out),
        ],
        stderr=subprocess.PIPE,
    )
    try:
        time.sleep(4.0)  # past --timeout: only --follow keeps it waiting
        assert follower.poll() is None, follower.stderr.read() if follower.stderr else ""
        more = tmp_path / "more.jsonl"
        more.write_bytes(_records(1, start=12))
        assert main(["produce", "-i", str(more), "--prefix", run.prefix]) == 0
        assert follower.wait(timeout=30) == 0
    finally:
        if follower.poll() is None:
            follower.kill()
            follower.wait()
    assert len(out.read_bytes().splitlines()) == 13


def test_consume_refuses_a_partition_the_topic_lacks(
    kafka_bootstrap: str,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    run = Run(kafka_bootstrap, tmp_path)
    run.create_topics()
    code = main(["consume", "--topic", "transcripts", "--prefix", run.prefix, "-p", "9", "-e"])
    assert code == 2
    assert "no partition 9" in capsys.readouterr().err


def test_produce_sends_every_line_around_one_the_topic_refuses(
    kafka_bootstrap: str,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Topics of an old deployment (1 MiB): the 1.05 MB line is refused by produce itself,
    so the idempotent producer's sequence is never broken (no OutOfOrderSequenceNumber for
    the lines after it); the summary counts only what was sent."""
    run = Run(kafka_bootstrap, tmp_path)
    run.create_topics(max_message_bytes=1024 * 1024)
    filler = "x" * 4000
    lines = [
        orjson.dumps({"id": f"s{i}", "messages": [{"role": "user", "content": f"{i} {filler}"}]})
        for i in range(300)
    ]
    big = orjson.dumps({"id": "big", "messages": [{"role": "tool", "content": "y" * 1_050_000}]})
    lines.insert(226, big)
    source = tmp_path / "in.jsonl"
    source.write_bytes(b"\n".join(lines) + b"\n")
    code = main(["produce", "-i", str(source), "--prefix", run.prefix])
    err = capsys.readouterr().err
    assert code == 1
    assert "line 227 not sent: RecordTooLarge" in err and "max.message.bytes" in err
    assert err.count("not sent") == 1, err
    sent_bytes = sum(len(line) for line in lines) - len(big)
    assert (
        f"produced 300 records (300 to {run.names.transcripts}), {sent_bytes / 1e6:.2f} MB" in err
    )
    ids = {orjson.loads(r.value)["id"] for r in run.read("transcripts", idle=3.0)}
    assert ids == {f"s{i}" for i in range(300)}


def test_an_auth_failure_is_one_error_without_unclosed_clients(
    kafka_bootstrap: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    import os

    source = tmp_path / "in.jsonl"
    source.write_bytes(_records(2))
    env = {
        **os.environ,
        "CTXPRESS_KAFKA_BOOTSTRAP": kafka_bootstrap,
        "CTXPRESS_KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT",  # the broker speaks PLAINTEXT
        "CTXPRESS_KAFKA_SASL_MECHANISM": "PLAIN",
        "CTXPRESS_KAFKA_SASL_USERNAME": "u",
        "CTXPRESS_KAFKA_SASL_PASSWORD": "p",
    }
    for command in (["produce", "-i", str(source)], ["consume", "--topic", "compressed", "-e"]):
        done = subprocess.run(
            [*ctxpress_argv(), *command],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode != 0, done.stderr
        assert f"ctxpress {command[0]}:" in done.stderr, done.stderr
        assert "Unclosed" not in done.stderr and "Traceback" not in done.stderr, done.stderr
