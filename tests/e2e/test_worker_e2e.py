"""End to end on the real broker: 500 mixed records through ``ctxpress worker``.

Valid transcripts and tool outputs, invalid JSON, bytes that are not UTF-8,
schema violations, and records that the gate rejects (through the test
pipeline factory, see ``workers.testing.worker``).  The worker is started as a
subprocess, stopped with SIGTERM while records are in flight, and restarted:
every valid record must be on ``compressed`` exactly once with the stats the
in-process pipeline computes, every bad one once on ``dead-letter`` with its
reason and headers, and the counts must match exactly.  Start-up to the first
output must take under 15 s and the SIGTERM shutdown under 10 s.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import orjson
import pytest

from tests.e2e._support import Run, check_exactly_once, collect
from tests.kafka_broker import kafka_bootstrap  # noqa: F401
from workers.service.kafka.io import produce_lines
from workers.service.supervise import WorkerProcess, child_pids
from workers.testing.worker import mixed_stream

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(300)]


def _children(pid: int) -> list[str]:
    """The command lines of ``pid``'s child processes."""
    return [
        Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        for child in child_pids(pid)
    ]


@pytest.mark.parametrize("pipeline_in", ["thread", "process"])
def test_500_mixed_records_exactly_once(
    kafka_bootstrap: str,  # noqa: F811
    tmp_path: Path,
    pipeline_in: str,
) -> None:
    run = Run(kafka_bootstrap, tmp_path)
    run.create_topics()
    samples = mixed_stream(500, seed=7, rows=40)
    first, second = samples[:250], samples[250:]
    run.produce(first)
    extra = {"CTXPRESS_PIPELINE_PROCESS": "1" if pipeline_in == "process" else "0"}

    worker = run.worker("worker-1", **extra).start()
    try:
        # start-up: process start to the first record out (read back by a consumer)
        started = worker.started_at
        records = run.read("compressed", idle=30.0, until=time.monotonic() + 30, count=1)
        assert records, f"no output within 30 s:\n{worker.log_tail()}"
        first_output = time.monotonic() - started
        print(f"\nstart-up to first output: {first_output:.2f} s")
        assert first_output < 15.0
        spawned = [c for c in _children(worker.pid) if "multiprocessing.spawn" in c]
        assert len(spawned) == (1 if pipeline_in == "process" else 0), _children(worker.pid)

        # SIGTERM while the second half is in flight
        run.produce(second)
        run.wait_for_outputs(300, worker, timeout=60)
        code, seconds = worker.terminate(timeout=30)
        print(f"SIGTERM shutdown: {seconds:.2f} s (exit {code})")
        assert code == 0, worker.log_tail()
        assert seconds < 10.0
    finally:
        if worker.alive():
            worker.kill()

    worker = run.worker("worker-2", **extra).start()
    try:
        verdict = collect(run, samples, timeout=90)
    finally:
        code, _ = worker.terminate(timeout=30)
    check_exactly_once(run, samples, verdict)
    kinds = {s.kind for s in samples}
    assert kinds == {
        "transcript",
        "anthropic",
        "tool_output",
        "gate",
        "bad_json",
        "not_utf8",
        "schema",
    }
    assert "Traceback" not in worker.log_tail(2000)


def _standard_log_record(rid: str, n: int) -> bytes:
    lines = "\n".join(
        f"2025-01-01 12:00:{i % 60:02d} INFO request {i} of {rid} handled in {i * 7 % 900} ms"
        for i in range(n)
    )
    record = {
        "id": rid,
        "kind": "tool_output",
        "mode": "standard",
        "command": "tail -n 400 app.log",
        "content": lines + "\napi_key=sk-proj-abcdefghijklmnopqrstuvwx\n",
    }
    return orjson.dumps(record)


def _get(url: str, token: str | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=5) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except urllib.error.URLError:  # not listening yet
        return 0, b""


def test_offload_topic_backs_expand_on_every_worker(kafka_bootstrap: str, tmp_path: Path) -> None:  # noqa: F811
    run = Run(kafka_bootstrap, tmp_path)
    run.create_topics()
    lines = [_standard_log_record(f"std{i}", 300) for i in range(3)]
    asyncio.run(produce_lines(lines, run.settings()))
    worker = run.worker("worker-a", CTXPRESS_WEB_TOKEN="s3cret").start()
    try:
        compressed = run.read("compressed", idle=30.0, until=time.monotonic() + 60, count=3)
        assert len(compressed) == 3, worker.log_tail()
        offload = {r.key.decode(): orjson.loads(r.value) for r in run.read("offload", idle=2.0)}
        markers = set()
        for r in compressed:
            markers |= set(re.findall(r"<<cx:([0-9a-f]{16})>>", r.value.decode()))
        assert markers and markers <= set(offload)
        digest = sorted(markers)[0]
        base = f"http://127.0.0.1:{run.port}/expand/{digest}"
        assert _get(base)[0] == 401
        assert _get(base, "wrong")[0] == 401
        status, body = _get(base, "s3cret")
        assert status == 200
        assert body.decode("utf-8") == offload[digest]["text"]
        assert "sk-proj-" not in body.decode()  # redacted before it was persisted
        assert _get(f"http://127.0.0.1:{run.port}/expand/{'0' * 16}", "s3cret")[0] == 404
    finally:
        worker.terminate(timeout=30)

    # Another worker (own consumer group, nothing to consume) serves the same hash
    # from the offload topic it reads from the beginning.
    other = Run(kafka_bootstrap, tmp_path, tag=run.tag + "b")
    env = other.env(CTXPRESS_TOPIC_PREFIX=run.prefix)
    second = WorkerProcess(env, tmp_path / "worker-b.log").start()
    try:
        deadline = time.monotonic() + 30
        status = 0
        while time.monotonic() < deadline and status != 200:
            status = _get(f"http://127.0.0.1:{other.port}/expand/{digest}")[0]
            time.sleep(0.3)
        assert status == 200, second.log_tail()
    finally:
        second.terminate(timeout=30)


def test_dlq_replay_republishes_original_bytes(kafka_bootstrap: str, tmp_path: Path) -> None:  # noqa: F811
    run = Run(kafka_bootstrap, tmp_path)
    run.create_topics()
    bad = [s for s in mixed_stream(60, seed=3) if not s.ok][:6]
    run.produce(bad)
    worker = run.worker().start()
    try:
        first = run.read("dead-letter", idle=20.0, until=time.monotonic() + 40, count=len(bad))
        assert len(first) == len(bad), worker.log_tail()
        env = run.env()
        done = subprocess.run(
            [*WorkerProcess(env, tmp_path / "x.log").argv[:-1], "dlq", "replay"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert f"re-published {len(bad)} dead letters" in done.stderr
        letters = run.read(
            "dead-letter", idle=20.0, until=time.monotonic() + 40, count=2 * len(bad)
        )
    finally:
        worker.terminate(timeout=30)
    assert len(letters) == 2 * len(bad)
    replayed = [r for r in letters if "ctxpress.replay.of" in dict(r.headers)]
    assert len(replayed) == len(bad)
    originals = {orjson.loads(r.value).get("original_value") for r in first}
    assert {orjson.loads(r.value).get("original_value") for r in replayed} == originals
