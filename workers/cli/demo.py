"""``ctxpress demo``: the whole service on this machine, end to end, in one command.

1. fetch and start the local Apache Kafka (``deploy/kafka/kafka.sh start``);
2. create the topics from topics/ (idempotent);
3. start ``ctxpress worker`` in the background (pid file ``.cache/demo/worker.pid``,
   log ``.cache/demo/worker.log``), or reuse the one a previous demo left running;
4. push ``samples/sample.jsonl`` through it (``ctxpress produce``);
5. read ``compressed``, ``stats`` and ``dead-letter`` back (only what this run
   produced) until every input line is accounted for, and print the savings;
6. leave the worker and the broker running (``--stop-after`` stops them;
   ``ctxpress demo --stop`` stops both later, by PID).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from workers.core.settings import Settings, SettingsError
from workers.service.kafka.options import client_options
from workers.service.supervise import WorkerProcess, free_port
from workers.service.topics import REPO_ROOT, TopicNames, create_topics, load_topics

__all__ = ["register"]

KAFKA_SH = REPO_ROOT / "deploy" / "kafka" / "kafka.sh"
DEMO_DIR = REPO_ROOT / ".cache" / "demo"
PID_FILE = DEMO_DIR / "worker.pid"
PORT_FILE = DEMO_DIR / "worker.port"
LOG_FILE = DEMO_DIR / "worker.log"
SAMPLE = REPO_ROOT / "samples" / "sample.jsonl"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "demo",
        help="start Kafka and the worker, push the sample through, print the savings",
        description=(
            "Fetch and start the local Kafka broker, create the topics, start the worker in the "
            "background, push a JSONL file (default: samples/sample.jsonl) through it and print "
            "the savings read back from the compressed, stats and dead-letter topics. The "
            "worker and the broker keep running afterwards unless --stop-after is given."
        ),
    )
    p.add_argument(
        "-i", "--input", default=str(SAMPLE), help="JSONL file to push (default: the sample)"
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=90.0,
        metavar="S",
        help="seconds to wait for every record to come back (default: 90)",
    )
    p.add_argument(
        "--mode",
        default=None,
        choices=("off", "lossless", "standard", "aggressive"),
        help="default mode of a worker this demo starts (default: CTXPRESS_MODE or lossless)",
    )
    p.add_argument(
        "--stop-after", action="store_true", help="stop the worker and the broker at the end"
    )
    p.add_argument(
        "--stop",
        action="store_true",
        help="only stop the worker and the broker a demo left running",
    )
    p.set_defaults(func=run)


def _say(text: str) -> None:
    print(f"demo: {text}", file=sys.stderr, flush=True)


def _settings(mode: str | None) -> Settings:
    overrides: dict[str, Any] = {"mode": mode}
    # the bootstrap follows kafka.sh's broker by the one rule of workers.core.localkafka
    return Settings.from_env(**overrides)


def _kafka(action: str) -> int:
    return subprocess.run(["bash", str(KAFKA_SH), action], check=False).returncode


def _worker_pid() -> int | None:
    """PID of the demo's worker when it is still alive (and really ours)."""
    try:
        pid = int(PID_FILE.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    if not any(b"ctxpress" in part for part in cmdline) or b"worker" not in cmdline:
        return None
    return pid


def _stop_worker() -> None:
    pid = _worker_pid()
    if pid is None:
        _say("no demo worker running")
        PID_FILE.unlink(missing_ok=True)
        return
    _say(f"stopping the worker (pid {pid}) ...")
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
    PID_FILE.unlink(missing_ok=True)
    _say("worker stopped")


def _stop_all() -> int:
    _stop_worker()  # the worker first: one whose broker vanished is slow to stop
    _say("stopping the Kafka broker ...")
    return _kafka("stop")


def _port_free(port: int) -> bool:
    import socket

    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _start_worker(settings: Settings) -> tuple[int, int]:
    pid = _worker_pid()
    if pid is not None:
        port = int(PORT_FILE.read_text()) if PORT_FILE.exists() else settings.web_port
        _say(
            f"reusing the worker a previous demo started (pid {pid}, web port {port}); "
            "'ctxpress demo --stop' first to start one with other settings"
        )
        return pid, port
    port = settings.web_port if _port_free(settings.web_port) else free_port()
    # The user's CTXPRESS_* settings apply to the worker as well.
    env = {
        **os.environ,
        "CTXPRESS_KAFKA_BOOTSTRAP": settings.kafka_bootstrap,
        "CTXPRESS_WEB_PORT": str(port),
        "CTXPRESS_MODE": settings.mode,
        "PYTHONUNBUFFERED": "1",
    }
    DEMO_DIR.mkdir(parents=True, exist_ok=True)
    worker = WorkerProcess(env, LOG_FILE, detach=True).start()
    PID_FILE.write_text(f"{worker.pid}\n")
    PORT_FILE.write_text(f"{port}\n")
    _say(
        f"worker started (pid {worker.pid}, log {LOG_FILE}, metrics http://127.0.0.1:{port}/metrics)"
    )
    return worker.pid, port


@dataclass
class Tally:
    inputs: int
    compressed: dict[str, dict[str, Any]] = field(default_factory=dict)
    dead: list[dict[str, Any]] = field(default_factory=list)
    stats: list[dict[str, Any]] = field(default_factory=list)

    @property
    def input_letters(self) -> list[dict[str, Any]]:
        return [d for d in self.dead if d.get("stage") in ("decode", "validate", "pipeline")]

    @property
    def accounted(self) -> int:
        return len(self.compressed) + len(self.input_letters)


async def _read_back(
    settings: Settings,
    names: TopicNames,
    starts: dict[str, dict[int, int]],
    tally: Tally,
    timeout: float,
) -> bool:
    from workers.service.kafka.io import read_topic

    deadline = time.monotonic() + timeout
    while True:
        tally.compressed.clear()
        tally.dead.clear()
        async for r in read_topic(
            settings, names.compressed, idle_timeout=1.0, start_offsets=starts[names.compressed]
        ):
            record = orjson.loads(r.value)
            tally.compressed[r.key.decode() if r.key else str(record.get("id"))] = record
        async for r in read_topic(
            settings, names.dead_letter, idle_timeout=1.0, start_offsets=starts[names.dead_letter]
        ):
            tally.dead.append(orjson.loads(r.value))
        if tally.accounted >= tally.inputs:
            break
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(1.0)
    tally.stats = [
        orjson.loads(r.value)
        async for r in read_topic(
            settings, names.stats, idle_timeout=1.5, start_offsets=starts[names.stats]
        )
    ]
    return True


def _summary(tally: Tally) -> str:
    before = sum(r["compression"]["tokens_before"] for r in tally.compressed.values())
    after = sum(r["compression"]["tokens_after"] for r in tally.compressed.values())
    saved = 100.0 * (before - after) / before if before else 0.0
    stages = Counter(d.get("stage", "?") for d in tally.dead)
    lines = [
        "",
        "ctxpress demo: savings read back from Kafka",
        "",
        f"{'input records':<24}{tally.inputs:>10,}",
        f"{'compressed':<24}{len(tally.compressed):>10,}",
        f"{'dead letters':<24}{len(tally.dead):>10,}"
        + (f"   ({', '.join(f'{k}: {v}' for k, v in sorted(stages.items()))})" if stages else ""),
        f"{'tokens before':<24}{before:>10,}",
        f"{'tokens after':<24}{after:>10,}",
        f"{'saved':<24}{saved:>9.1f}%",
        "",
        f"{'record':<28}{'mode':<11}{'before':>8}{'after':>8}{'saved':>8}",
    ]
    for rid, record in sorted(tally.compressed.items()):
        comp = record["compression"]
        pct = comp.get("saved_pct", 0.0)
        lines.append(
            f"{rid[:27]:<28}{comp['mode']:<11}{comp['tokens_before']:>8,}{comp['tokens_after']:>8,}{pct:>7.1f}%"
        )
    engines: dict[str, list[int]] = {}
    for row in tally.stats:
        e = engines.setdefault(row["engine"], [0, 0, 0, 0])
        e[0] += row["tokens_before"]
        e[1] += row["tokens_after"]
        e[2] += row["status"] == "applied"
        e[3] += int(row.get("details", {}).get("messages_rejected", 0))
    if engines:
        lines += [
            "",
            f"{'engine':<18}{'tokens saved':>13}{'saved %':>9}{'applied':>9}{'rejected':>10}",
        ]
        for name, (b, a, applied, rejected) in engines.items():
            pct = 100.0 * (b - a) / b if b else 0.0
            lines.append(f"{name:<18}{b - a:>13,}{pct:>8.1f}%{applied:>9,}{rejected:>10,}")
    for d in tally.input_letters:
        lines.append(f"dead letter: {d.get('record_id') or '(no id)'}: {d['reason'][:110]}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from workers.service.kafka.io import end_offsets, produce_lines

    if args.stop:
        return _stop_all()
    try:
        settings = _settings(args.mode)
    except SettingsError as exc:
        print(f"ctxpress demo: {exc}", file=sys.stderr)
        return 2
    source = Path(args.input)
    if not source.is_file():
        print(f"ctxpress demo: input {source} does not exist; pass -i FILE", file=sys.stderr)
        return 2
    names = TopicNames.from_settings(settings)

    _say("starting the local Kafka broker (deploy/kafka/kafka.sh start) ...")
    if _kafka("start") != 0:
        print("ctxpress demo: the broker did not start (see above)", file=sys.stderr)
        return 1
    created = asyncio.run(
        create_topics(
            settings.kafka_bootstrap,
            load_topics(),
            settings.topic_prefix,
            client_options=client_options(settings),
            max_message_bytes=settings.max_message_bytes,
        )
    )
    _say(f"topics ready ({len(created)} created) with prefix {settings.topic_prefix!r}")
    pid, port = _start_worker(settings)

    outputs = [names.compressed, names.dead_letter, names.stats]
    starts = asyncio.run(end_offsets(settings, outputs))
    lines = [line for line in source.read_bytes().splitlines() if line.strip()]
    report = asyncio.run(produce_lines(lines, settings))
    if report.failed:
        print(
            f"ctxpress demo: {len(report.failed)} lines not produced: {report.failed[:3]}",
            file=sys.stderr,
        )
        return 1
    _say(f"produced {report.sent} records from {source}; waiting for the worker ...")
    tally = Tally(inputs=report.sent)
    started = time.monotonic()
    complete = asyncio.run(_read_back(settings, names, starts, tally, args.timeout))
    if not complete:
        print(
            f"ctxpress demo: timed out after {args.timeout:g} s: {tally.accounted} of "
            f"{tally.inputs} records accounted for on {names.compressed} and {names.dead_letter}. "
            f"Is the worker running? See {LOG_FILE} (worker pid {pid}).",
            file=sys.stderr,
        )
        return 1
    print(_summary(tally))
    print(f"\nall {tally.inputs} records accounted for in {time.monotonic() - started:.1f} s")
    if args.stop_after:
        return _stop_all()
    print(
        f"\nThe worker (pid {pid}, metrics http://127.0.0.1:{port}/metrics) and the Kafka broker "
        "are still running; stop both with: .venv/bin/ctxpress demo --stop"
    )
    return 0
