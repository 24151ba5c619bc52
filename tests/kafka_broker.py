"""The local Apache Kafka broker for tests that need a real one (``@pytest.mark.kafka``).

Not a conftest: a test module opts in with ::

    from tests.kafka_broker import kafka_bootstrap  # noqa: F401

``kafka_bootstrap`` (session scope) runs ``deploy/kafka/kafka.sh start`` - which fetches the jars
from Maven Central the first time and returns at once when the broker already runs - and yields
the bootstrap string. The broker stays up between tests. At the end of the session it is stopped
only if this session started it and no other live pytest session still uses it (each session
holds a lease file under ``$CTXPRESS_KAFKA_HOME/leases`` while it runs).  Before it stops a broker
it started, it deletes the topics made during the session (tests name theirs with a fresh prefix
each run): kept, they pile up in the broker's data folder run after run, and a broker with
thousands of partitions takes minutes to start.

Environment: ``CTXPRESS_KAFKA_PORT``, ``CTXPRESS_KAFKA_CONTROLLER_PORT`` and
``CTXPRESS_KAFKA_HOME`` are passed through to kafka.sh.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from workers.core.localkafka import pid_alive

REPO = Path(__file__).resolve().parents[1]
KAFKA_SH = REPO / "deploy" / "kafka" / "kafka.sh"

__all__ = ["KAFKA_SH", "broker_bootstrap", "kafka_bootstrap", "kafka_sh"]


def broker_home() -> Path:
    return Path(os.environ.get("CTXPRESS_KAFKA_HOME", REPO / ".cache" / "kafka"))


def broker_bootstrap() -> str:
    """The bootstrap every ctxpress command uses (the rule of workers.core.localkafka)."""
    from workers.core.localkafka import bootstrap_from_env

    return bootstrap_from_env()


def kafka_sh(action: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Run ``deploy/kafka/kafka.sh ACTION`` and capture its output."""
    return subprocess.run(
        ["bash", str(KAFKA_SH), action],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


async def _with_admin(bootstrap: str, before: set[str] | None) -> set[str]:
    """The broker's topics; with ``before``, first delete those not in it (but Kafka's own)."""
    from workers.service.kafka import clients

    admin = clients.admin(clients.connection(bootstrap=bootstrap))
    await admin.start()
    try:
        topics = set(await admin.list_topics())
        if before is None:
            return topics
        made = sorted(t for t in topics - before if not t.startswith("__"))
        for i in range(0, len(made), 100):  # requests of a bounded size
            await admin.delete_topics(made[i : i + 100])
        return set(made)
    finally:
        await admin.close()


def _topics(bootstrap: str) -> set[str]:
    import asyncio

    return asyncio.run(_with_admin(bootstrap, None))


def delete_topics_made_since(bootstrap: str, before: set[str]) -> set[str]:
    """Delete every topic that is not in ``before`` (except Kafka's own); the names deleted."""
    import asyncio

    return asyncio.run(_with_admin(bootstrap, before))


def _other_live_leases(leases: Path, mine: Path) -> list[Path]:
    live = []
    for lease in leases.glob("*.lease"):
        if lease == mine:
            continue
        try:
            pid = int(lease.stem)
        except ValueError:
            continue
        if pid_alive(pid):
            live.append(lease)
        else:
            lease.unlink(missing_ok=True)  # left by a session that crashed
    return live


@pytest.fixture(scope="session")
def kafka_bootstrap() -> Iterator[str]:
    """Bootstrap servers of a running local broker; started (and later stopped) if needed."""
    if shutil.which(os.environ.get("JAVA", "java")) is None:
        pytest.skip("no java on PATH: the local Kafka broker needs Java 17+")
    leases = broker_home() / "leases"
    leases.mkdir(parents=True, exist_ok=True)
    lease = leases / f"{os.getpid()}.lease"
    lease.write_text(broker_bootstrap() + "\n")

    was_running = kafka_sh("status", timeout=30).returncode == 0
    if not was_running:
        started = kafka_sh("start")
        if started.returncode != 0:
            lease.unlink(missing_ok=True)
            pytest.fail(
                "deploy/kafka/kafka.sh start failed "
                f"(exit {started.returncode}):\n{started.stdout}\n{started.stderr}",
                pytrace=False,
            )
    bootstrap = broker_bootstrap()
    before = _topics(bootstrap) if not was_running else set()
    try:
        yield bootstrap
    finally:
        lease.unlink(missing_ok=True)
        if not was_running and not _other_live_leases(leases, lease):
            try:
                delete_topics_made_since(bootstrap, before)
            except Exception as exc:  # the broker still stops; the topics stay
                print(f"kafka_bootstrap: could not delete this session's topics: {exc}")
            kafka_sh("stop", timeout=120)
