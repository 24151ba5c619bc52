"""The README's first command, end to end: scripts/main-job.sh on its own broker.

It runs with its own Kafka ports and data directory (so it never touches the
broker other tests share) and ``--stop-after`` (so it leaves nothing running).
"""

from __future__ import annotations

import os
import socket
import subprocess
import uuid
from pathlib import Path

import pytest

from tests.conftest import REPO
from workers.cli import demo

pytestmark = pytest.mark.kafka


def _port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def test_main_job_pushes_the_sample_through_kafka_and_prints_the_savings(tmp_path: Path) -> None:
    if demo.PID_FILE.exists():
        pytest.skip("a demo worker is running here (ctxpress demo --stop ends it)")
    port, controller, web = 19392, 19393, 16391
    assert not _port_open(port), f"port {port} is taken; this test needs it free"
    env = {
        **os.environ,
        "CTXPRESS_KAFKA_PORT": str(port),
        "CTXPRESS_KAFKA_CONTROLLER_PORT": str(controller),
        "CTXPRESS_KAFKA_BOOTSTRAP": f"127.0.0.1:{port}",
        "CTXPRESS_KAFKA_HOME": str(tmp_path / "kafka"),
        "CTXPRESS_WEB_PORT": str(web),
        "CTXPRESS_TOPIC_PREFIX": f"mainjob-{uuid.uuid4().hex[:8]}.",
        "CTXPRESS_APP_ID": f"mainjob-{uuid.uuid4().hex[:8]}",
        "CTXPRESS_SKIP_KAFKA_FETCH": "1",
    }
    done = subprocess.run(
        ["bash", "scripts/main-job.sh", "--stop-after"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert "all 8 records accounted for" in output
    lines = {line.split("  ")[0].strip(): line for line in output.splitlines() if "  " in line}
    assert lines["compressed"].split()[-1] == "6"
    assert "(decode: 1, validate: 1)" in lines["dead letters"]
    assert "saved" in lines and lines["saved"].split()[-1].endswith("%")
    assert not _port_open(port), "--stop-after left the broker running"
    assert not demo.PID_FILE.exists()
