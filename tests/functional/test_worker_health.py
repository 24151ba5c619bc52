"""Liveness and readiness of the worker, and the watchdog that bounds its exit."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

from workers.core.settings import Settings
from workers.service.app import Health
from workers.service.handler import BatchHandler
from workers.service.process import Processor
from workers.service.publish import ListPublisher, PublishError
from workers.service.source import MemorySource
from workers.service.topics import TopicNames
from workers.testing.worker import gate_rejecting_pipeline


def test_ready_and_live_follow_the_publisher_and_fatal_errors() -> None:
    async def go() -> None:
        names = TopicNames.from_prefix("h.")
        publisher = ListPublisher()
        processor = Processor(gate_rejecting_pipeline(Settings()), names, "g")
        handler = BatchHandler(processor, publisher, source=MemorySource())
        health = Health(publisher, handler)
        assert health.live() == (True, "ok")
        assert health.ready() == (False, "waiting for the partition assignment")
        handler.assigned({(names.transcripts, 0): 0})
        assert health.ready() == (True, "ok")

        await publisher.stop()
        assert health.live() == (False, "the publisher is stopped")
        assert health.ready() == (False, "the publisher is stopped")

        fresh = Health(ListPublisher(), handler)
        fresh.record(PublishError("fenced"))
        fresh.record(PublishError("second"))  # the first one stays
        live, reason = fresh.live()
        assert not live and "PublishError: fenced" in reason
        assert fresh.ready()[0] is False

    asyncio.run(go())


def test_watchdog_exits_a_stuck_process_with_the_code() -> None:
    code = (
        "import time\n"
        "from workers.cli.worker_cmd import ExitWatchdog\n"
        "w = ExitWatchdog()\n"
        "w.arm(5.0, 'late')\n"
        "w.arm(0.5, 'SIGTERM', code=3)\n"  # the earlier deadline wins
        "w.arm(2.0, 'later')\n"
        "time.sleep(30)\n"
    )
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=20, check=False
    )
    took = time.monotonic() - started
    assert proc.returncode == 3, proc.stderr
    assert "still running 0.5 s after SIGTERM; exiting with code 3" in proc.stderr
    assert took < 10


def test_a_cancelled_watchdog_does_not_fire() -> None:
    code = (
        "import time\n"
        "from workers.cli.worker_cmd import ExitWatchdog\n"
        "w = ExitWatchdog()\n"
        "w.arm(0.3, 'x')\n"
        "w.cancel()\n"
        "time.sleep(1.0)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], timeout=20, check=False)
    assert proc.returncode == 0
