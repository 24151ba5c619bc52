"""Running real programs for the corpus: a clean environment, a timeout, what they printed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "MAX_OUTPUT_CHARS",
    "TIMEOUT_S",
    "Capture",
    "Runner",
    "clean_env",
    "first_line",
    "go_env",
]

TIMEOUT_S = 60.0
MAX_OUTPUT_CHARS = 200_000  # one captured output; larger ones are cut at a line boundary


@dataclass(frozen=True)
class Capture:
    """One program run: the command as a user would type it and what it printed."""

    key: str
    command: str
    output: str
    ask: str
    answer: str
    tool: str = "bash"
    meta: dict[str, Any] = field(default_factory=dict, compare=False)


# -- running programs ---------------------------------------------------------------------------


def clean_env(work: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """An environment from scratch: PATH (the running Python's bin first), HOME, a UTF-8 locale.

    Only PATH, HOME and the toolchain locations rustup needs are taken from the
    caller; tokens, keys and proxies in ``os.environ`` never reach a program.
    """
    path = os.pathsep.join(
        [str(Path(sys.executable).parent), os.environ.get("PATH", "/usr/bin:/bin")]
    )
    env = {
        "PATH": path,
        "HOME": os.environ.get("HOME", str(work)),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "TMPDIR": str(work),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_PAGER": "cat",
        "PAGER": "cat",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_NO_INPUT": "1",
        "PIP_NO_COLOR": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "PYTHONUTF8": "1",
    }
    for name in ("RUSTUP_HOME", "CARGO_HOME"):  # where rustup's cargo finds its toolchain
        if name in os.environ:
            env[name] = os.environ[name]
    env.update(extra or {})
    return env


class Runner:
    """Runs programs in ``work`` with :func:`clean_env` and a timeout; output is stdout+stderr."""

    def __init__(self, work: Path, timeout: float = TIMEOUT_S) -> None:
        self.work = work
        self.timeout = timeout
        self.skipped: list[str] = []

    def have(self, program: str) -> bool:
        return shutil.which(program, path=clean_env(self.work)["PATH"]) is not None

    def run(
        self,
        argv: Sequence[str],
        cwd: Path,
        *,
        env: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> str | None:
        """What ``argv`` printed (stderr interleaved), or None when it is missing or hangs."""
        try:
            done = subprocess.run(
                list(argv),
                cwd=cwd,
                env=clean_env(self.work, env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                timeout=timeout or self.timeout,
                check=False,
            )
        except FileNotFoundError:
            self.skipped.append(f"{argv[0]}: not found")
            return None
        except subprocess.TimeoutExpired:
            self.skipped.append(f"{' '.join(argv)}: timed out")
            return None
        return _cut(done.stdout.decode("utf-8", "replace"))


def _cut(text: str, limit: int = MAX_OUTPUT_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[: text.rfind("\n", 0, limit) + 1]


def go_env(work: Path, **extra: str) -> dict[str, str]:
    """Go offline in ``work``: no module proxy, no toolchain download, no telemetry, and its
    own module and build caches."""
    return {
        "GOFLAGS": "-mod=mod",
        "GOPROXY": "off",
        "GOTOOLCHAIN": "local",
        "GOTELEMETRY": "off",
        "GOPATH": str(work / "gopath"),
        "GOCACHE": str(work / "gocache"),
        **extra,
    }


def first_line(text: str, *needles: str, default: str = "") -> str:
    """The first line of ``text`` holding one of ``needles`` (stripped), else ``default``:
    what a capture's answer quotes."""
    for line in text.splitlines():
        if any(n in line for n in needles):
            return line.strip()
    return default
