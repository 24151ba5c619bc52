"""The worker's topics (issue 14): it fails fast with the command to run when one is missing,
creates none itself (the changelog follows the topic prefix), and the usual Faust commands work.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.e2e._support import Run
from tests.kafka_broker import kafka_bootstrap  # noqa: F401
from workers.service.kafka import clients
from workers.service.topics import load_topics, missing_topics
from workers.testing.worker import mixed_stream

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(300)]

FAUST = [sys.executable, "-m", "faust", "-A", "workers.app:app"]


async def _topics_with(bootstrap: str, needle: str) -> list[str]:
    admin = clients.admin(clients.connection(bootstrap=bootstrap))
    await admin.start()
    try:
        return sorted(t for t in await admin.list_topics() if needle in t)
    finally:
        await admin.close()


def test_worker_without_topics_exits_with_the_command(
    kafka_bootstrap: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    run = Run(kafka_bootstrap, tmp_path)
    worker = run.worker().start()
    started = time.monotonic()
    code = worker.wait(timeout=60)
    took = time.monotonic() - started
    log = worker.log_path.read_text()
    assert code == 2, log
    assert took < 20, took
    assert f"ctxpress topics create --prefix {run.prefix}" in log, log
    assert f"{run.prefix}transcripts" in log and f"{run.prefix}savings-changelog" in log, log
    assert "Ready" not in log, log
    # nothing created behind the user's back, the changelog included
    assert asyncio.run(_topics_with(kafka_bootstrap, run.tag)) == []

    # the usual Faust way refuses too (no retrying forever)
    faust = subprocess.run(
        [*FAUST, "worker", "-l", "info"],
        env=run.env(),
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert faust.returncode != 0
    assert "ctxpress topics create" in faust.stdout + faust.stderr
    assert asyncio.run(_topics_with(kafka_bootstrap, run.tag)) == []


def test_faust_agents_lists_the_agent(kafka_bootstrap: str, tmp_path: Path) -> None:  # noqa: F811
    run = Run(kafka_bootstrap, tmp_path)
    out = subprocess.run(
        [*FAUST, "agents"], env=run.env(), capture_output=True, text=True, timeout=90, check=False
    )
    assert out.returncode == 0, out.stderr
    assert "ctxpress.compress" in out.stdout
    assert f"{run.prefix}transcripts,{run.prefix}tool-outputs" in out.stdout.replace("\n", "")


def test_changelog_follows_the_prefix(kafka_bootstrap: str, tmp_path: Path) -> None:  # noqa: F811
    run = Run(kafka_bootstrap, tmp_path)
    run.create_topics()
    names = run.names
    assert asyncio.run(missing_topics(kafka_bootstrap, names.all())) == []
    samples = [s for s in mixed_stream(40, seed=3) if s.ok]
    worker = run.worker().start()
    try:
        run.produce(samples)
        run.wait_for_outputs(len(samples), worker, timeout=90)
        changelog = run.read("savings-changelog", idle=2.0)
    finally:
        code, _ = worker.terminate()
    assert code == 0, worker.log_tail()
    assert changelog, "the savings table wrote no changelog entry"
    assert all(len(r.value) > 2 for r in changelog)
    ours = asyncio.run(_topics_with(kafka_bootstrap, run.tag))
    made = sorted(spec.full_name(run.prefix) for spec in load_topics().values())
    assert set(names.all()) <= set(made)
    assert ours == made, ours  # no <app id>-savings-changelog next to them


def _savings_records(port: int) -> int | None:
    import json
    import urllib.request

    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/savings", timeout=5) as response:
            rows = json.loads(response.read())["windows"]
    except OSError:
        return None
    return sum(int(row["records"]) for row in rows)  # engine runs, over every window


def test_savings_table_reads_its_own_changelog_and_is_restored_after_a_restart(
    kafka_bootstrap: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    """The table manager knows the prefixed changelog: Faust's recovery does not read it back
    as an unknown topic (two log lines per savings update before), and a restarted worker
    serves the savings of the batches before it."""
    run = Run(kafka_bootstrap, tmp_path)
    run.create_topics()
    samples = [s for s in mixed_stream(30, seed=5) if s.ok]
    first = run.worker().start()
    try:
        run.produce(samples)
        run.wait_for_outputs(len(samples), first, timeout=90)
        deadline = time.monotonic() + 30
        before = _savings_records(run.port)
        while not before and time.monotonic() < deadline:
            time.sleep(0.5)
            before = _savings_records(run.port)
        time.sleep(2.0)  # the changelog entries of the last batch reach the broker
    finally:
        code, _ = first.terminate()
    assert code == 0, first.log_tail()
    log = (tmp_path / "worker.log").read_text(errors="replace")
    assert "recovery unknown topic" not in log and "Error in recovery" not in log, log[-3000:]
    assert before, "the worker served no savings"

    second = run.worker("worker2").start()
    try:
        deadline = time.monotonic() + 90
        after = None
        while time.monotonic() < deadline:
            assert second.alive(), second.log_tail()
            after = _savings_records(run.port)
            if after == before:
                break
            time.sleep(1.0)
    finally:
        code, _ = second.terminate()
    assert code == 0, second.log_tail()
    assert after == before, (before, after)
    log = (tmp_path / "worker2.log").read_text(errors="replace")
    assert "recovery unknown topic" not in log and "Error in recovery" not in log, log[-3000:]
