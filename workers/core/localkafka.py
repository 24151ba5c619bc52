"""Where ctxpress finds Kafka when CTXPRESS_KAFKA_BOOTSTRAP is not set: the one rule.

Every command (``topics create``, ``produce``, ``consume``, ``dlq``, ``bench-kafka``, the
worker, ``faust -A workers.app:app``, the demo) and ``deploy/kafka/kafka.sh`` itself use it:

1. ``CTXPRESS_KAFKA_BOOTSTRAP`` when set (any cluster);
2. else ``127.0.0.1:$CTXPRESS_KAFKA_PORT`` when that is set (the port kafka.sh listens on);
3. else the bootstrap of the local broker that ``ctxpress kafka start`` left running
   (``$CTXPRESS_KAFKA_HOME/kafka.bootstrap``, default ``.cache/kafka``; only while its pid lives);
4. else ``127.0.0.1:19092``.

So ``CTXPRESS_KAFKA_PORT=29092 ctxpress kafka start`` in one shell and a plain
``ctxpress produce`` in another talk to the same broker.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = [
    "DEFAULT_BOOTSTRAP",
    "bootstrap_from_env",
    "broker_home",
    "pid_alive",
    "running_broker_bootstrap",
]

DEFAULT_BOOTSTRAP = "127.0.0.1:19092"
_REPO = Path(__file__).resolve().parents[2]


def broker_home(environ: Mapping[str, str]) -> Path:
    """kafka.sh's cache folder: ``CTXPRESS_KAFKA_HOME``, else ``<repository>/.cache/kafka``."""
    home = environ.get("CTXPRESS_KAFKA_HOME", "")
    return Path(home) if home else _REPO / ".cache" / "kafka"


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists (ours or not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def running_broker_bootstrap(environ: Mapping[str, str]) -> str | None:
    """The bootstrap kafka.sh wrote for the broker it started, while that broker's pid lives."""
    home = broker_home(environ)
    try:
        bootstrap = (home / "kafka.bootstrap").read_text().strip()
        pid = int((home / "kafka.pid").read_text().strip() or "0")
    except (OSError, ValueError):
        return None
    if not bootstrap or pid <= 0 or not pid_alive(pid):
        return None
    return bootstrap


def bootstrap_from_env(environ: Mapping[str, str] | None = None) -> str:
    """The bootstrap servers every command uses (the rule in this module's docstring)."""
    env = os.environ if environ is None else environ
    explicit = env.get("CTXPRESS_KAFKA_BOOTSTRAP", "").strip()
    if explicit:
        return explicit
    port = env.get("CTXPRESS_KAFKA_PORT", "").strip()
    if port:
        return f"127.0.0.1:{port}"
    return running_broker_bootstrap(env) or DEFAULT_BOOTSTRAP
