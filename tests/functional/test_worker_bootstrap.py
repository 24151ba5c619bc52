"""One bootstrap rule for every Kafka command, the worker and kafka.sh (issue 14).

CTXPRESS_KAFKA_BOOTSTRAP, else 127.0.0.1:$CTXPRESS_KAFKA_PORT, else the broker that
``ctxpress kafka start`` left running (its kafka.bootstrap file), else 127.0.0.1:19092.
No broker needed: every command is pointed at a closed port and must name it in its error.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from workers.cli import main
from workers.core.localkafka import bootstrap_from_env
from workers.core.settings import Settings
from workers.service.supervise import free_port

REPO = Path(__file__).resolve().parents[2]
KAFKA_SH = REPO / "deploy" / "kafka" / "kafka.sh"


def _home_with_broker(tmp_path: Path, bootstrap: str, pid: int) -> Path:
    home = tmp_path / "kafka-home"
    home.mkdir()
    (home / "kafka.bootstrap").write_text(bootstrap + "\n")
    (home / "kafka.pid").write_text(f"{pid}\n")
    return home


def test_rule_order(tmp_path: Path) -> None:
    home = _home_with_broker(tmp_path, "127.0.0.1:39092", os.getpid())
    base = {"CTXPRESS_KAFKA_HOME": str(home)}
    assert bootstrap_from_env(base) == "127.0.0.1:39092"
    assert bootstrap_from_env({**base, "CTXPRESS_KAFKA_PORT": "29092"}) == "127.0.0.1:29092"
    assert (
        bootstrap_from_env(
            {**base, "CTXPRESS_KAFKA_PORT": "29092", "CTXPRESS_KAFKA_BOOTSTRAP": "h1:9093,h2:9093"}
        )
        == "h1:9093,h2:9093"
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    assert bootstrap_from_env({"CTXPRESS_KAFKA_HOME": str(empty)}) == "127.0.0.1:19092"
    # Settings read the same rule
    assert Settings.from_env(base).kafka_bootstrap == "127.0.0.1:39092"
    assert Settings.from_env({**base, "CTXPRESS_KAFKA_PORT": "1"}).kafka_bootstrap == (
        "127.0.0.1:1"
    )


def test_stale_broker_file_is_ignored(tmp_path: Path) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    home = _home_with_broker(tmp_path, "127.0.0.1:39092", dead.pid)
    assert bootstrap_from_env({"CTXPRESS_KAFKA_HOME": str(home)}) == "127.0.0.1:19092"


@pytest.mark.parametrize(
    "argv",
    [
        ["topics", "create", "--timeout-ms", "2000"],
        ["produce", "-i", str(REPO / "samples" / "sample.jsonl")],
        ["consume", "--topic", "compressed", "--timeout", "1"],
        ["dlq", "replay", "--timeout", "1"],
    ],
    ids=["topics-create", "produce", "consume", "dlq-replay"],
)
def test_every_command_follows_the_local_broker(
    argv: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    port = free_port()  # nothing listens there
    home = _home_with_broker(tmp_path, f"127.0.0.1:{port}", os.getpid())
    monkeypatch.delenv("CTXPRESS_KAFKA_BOOTSTRAP", raising=False)
    monkeypatch.delenv("CTXPRESS_KAFKA_PORT", raising=False)
    monkeypatch.setenv("CTXPRESS_KAFKA_HOME", str(home))
    code = main(argv)
    err = capsys.readouterr().err
    assert code != 0
    assert str(port) in err, err
    assert "19092" not in err, err


def test_the_worker_follows_the_local_broker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workers.service.app import create_app

    monkeypatch.delenv("CTXPRESS_KAFKA_BOOTSTRAP", raising=False)
    monkeypatch.setenv("CTXPRESS_KAFKA_PORT", "29092")
    monkeypatch.setenv("CTXPRESS_DATA_DIR", str(tmp_path / "data"))
    app = create_app(source=None)
    assert [str(url) for url in app.conf.broker] == ["kafka://127.0.0.1:29092"]
    assert app.ctxpress.settings.kafka_bootstrap == "127.0.0.1:29092"


def test_kafka_sh_takes_the_port_of_a_local_bootstrap(tmp_path: Path) -> None:
    env = {**os.environ, "CTXPRESS_KAFKA_HOME": str(tmp_path)}
    env.pop("CTXPRESS_KAFKA_PORT", None)
    env["CTXPRESS_KAFKA_BOOTSTRAP"] = "127.0.0.1:29092"
    status = subprocess.run(
        ["bash", str(KAFKA_SH), "status"], env=env, capture_output=True, text=True, check=False
    )
    assert "127.0.0.1:29092" in status.stdout, status
    env["CTXPRESS_KAFKA_BOOTSTRAP"] = "kafka.example:9092"
    start = subprocess.run(
        ["bash", str(KAFKA_SH), "start"], env=env, capture_output=True, text=True, check=False
    )
    assert start.returncode == 1
    assert "names another cluster" in start.stderr


def test_the_worker_consumer_fetches_at_most_fetch_max_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Faust passes no fetch.max.bytes to aiokafka (50 MB per fetch: a backlog of 800 50 KB
    records peaked the worker at 295 MB); the worker's consumer gets CTXPRESS_FETCH_MAX_BYTES,
    and still fetches a record up to CTXPRESS_MAX_MESSAGE_BYTES whole (per partition)."""
    import asyncio

    from workers.service.app import create_app

    monkeypatch.setenv("CTXPRESS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("CTXPRESS_FETCH_MAX_BYTES", "1234567")

    async def go() -> tuple[int, int]:
        app = create_app(source=None)
        consumer = app.consumer._thread._create_worker_consumer(app.transport)
        try:
            return consumer._fetch_max_bytes, consumer._max_partition_fetch_bytes
        finally:
            await consumer.stop()

    fetch, per_partition = asyncio.run(go())
    assert fetch == 1234567
    assert per_partition == Settings.from_env().max_message_bytes
