"""Running ``ctxpress worker`` as a child process (demo, benchmark, end-to-end tests).

:class:`WorkerProcess` starts the worker with a given environment, logs to a
file, and stops it by its own PID (SIGTERM with a deadline, or SIGKILL).
:func:`scrape` reads one metric from the worker's ``/metrics`` page.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import IO

__all__ = [
    "WorkerProcess",
    "child_pids",
    "cpu_seconds",
    "ctxpress_argv",
    "free_port",
    "peak_rss_mb",
    "scrape",
    "worker_env",
]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def worker_env(
    overrides: Mapping[str, str], base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The current environment without CTXPRESS_* settings, plus ``overrides``."""
    env = {
        k: v
        for k, v in (os.environ if base is None else base).items()
        if not k.startswith("CTXPRESS_") or k.startswith("CTXPRESS_KAFKA_HOME")
    }
    env.update(overrides)
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def ctxpress_argv() -> list[str]:
    """How to run this install's ``ctxpress`` (its script, else ``python -m workers.cli``)."""
    exe = Path(sys.executable).with_name("ctxpress")
    if exe.is_file():
        return [str(exe)]
    return [sys.executable, "-m", "workers.cli"]


class WorkerProcess:
    """One ``ctxpress worker`` child process."""

    def __init__(
        self,
        env: Mapping[str, str],
        log_path: str | os.PathLike[str],
        argv: list[str] | None = None,
        *,
        detach: bool = False,
    ) -> None:
        self.env = dict(env)
        self.log_path = Path(log_path)
        self.argv = argv or [*ctxpress_argv(), "worker"]
        self.detach = detach
        self.proc: subprocess.Popen[bytes] | None = None
        self.started_at = 0.0
        self._log: IO[bytes] | None = None

    @property
    def pid(self) -> int:
        assert self.proc is not None, "worker not started"
        return self.proc.pid

    def start(self) -> WorkerProcess:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed in wait()
        self.started_at = time.monotonic()
        self.proc = subprocess.Popen(
            self.argv,
            env=self.env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=self.detach,
        )
        return self

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def wait(self, timeout: float | None = None) -> int:
        assert self.proc is not None
        code = self.proc.wait(timeout)
        if self._log is not None:
            self._log.close()
            self._log = None
        return code

    def terminate(self, timeout: float = 30.0) -> tuple[int, float]:
        """SIGTERM; wait up to ``timeout`` (then SIGKILL). Returns (exit code, seconds)."""
        assert self.proc is not None
        started = time.monotonic()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.wait()
        return code, time.monotonic() - started

    def kill(self) -> int:
        """SIGKILL, the crash test's way of stopping."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        return self.wait()

    def log_tail(self, lines: int = 60) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])


def scrape(port: int, metric: str, labels: Mapping[str, str] | None = None) -> float | None:
    """Sum of ``metric`` samples (matching ``labels``) on ``http://127.0.0.1:port/metrics``."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as resp:
            body = resp.read().decode("utf-8")
    except (urllib.error.URLError, OSError):
        return None
    total = 0.0
    found = False
    pattern = re.compile(rf"^{re.escape(metric)}(\{{[^}}]*\}})? ([0-9.eE+-]+)$", re.M)
    for match in pattern.finditer(body):
        label_text = match.group(1) or ""
        if labels and not all(f'{k}="{v}"' in label_text for k, v in labels.items()):
            continue
        total += float(match.group(2))
        found = True
    return total if found else 0.0 if body else None


def child_pids(pid: int) -> list[int]:
    """The child processes of ``pid`` (Linux ``/proc``; empty elsewhere or once it is gone)."""
    found: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return found
    for task in tasks:
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def peak_rss_mb(pid: int) -> float | None:
    """The peak resident memory of process ``pid`` (``VmHWM``), in MB; None off Linux."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return None


def cpu_seconds(pid: int) -> float | None:
    """CPU seconds (user + system) process ``pid`` has used so far; None off Linux."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) is in parentheses and may hold spaces: count after it
    fields = stat[stat.rindex(")") + 2 :].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks
