"""Coloured tool output (ANSI escape sequences) captured once from real programs.

``python -m tests.support.ansi_samples`` writes the tiny projects of
:mod:`tests.support.runner_samples` into a temporary folder, runs this
machine's programs on them with colour forced on (``tsc --pretty``, ``cargo
build --color=always``, ``cargo test --color=always``, ``gcc
-fdiagnostics-color=always``, ``jest --colors``, ``vitest`` with
``FORCE_COLOR=1``, ``ls --color=always``, ``git log --color=always --stat``,
``grep --color=always``, ``git diff --color=always``; each only when it is
installed) and writes what they printed to ``ansi_samples.json`` beside this
file, with the temporary folder's path replaced by ``/home/dev/proj``.  The
tests read the JSON only: the repository stands alone.

Each sample: ``name``, ``command`` and ``output`` (the escape sequences as
the program wrote them).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from tests.support import runner_samples as rs

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "ansi_samples.json"
REPO = HERE.parent.parent
GCC_ARGS = ("gcc", "-fdiagnostics-color=always", "-Wall", "-Wextra", "-c", "main.c", "-o")


def load() -> list[dict[str, Any]]:
    """The captured samples (the checked-in JSON)."""
    data: list[dict[str, Any]] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return data


def _run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    full = dict(os.environ, TERM="xterm-256color", LC_ALL="C.UTF-8")
    for name in ("NO_COLOR", "CI", "PYTEST_ADDOPTS"):
        full.pop(name, None)
    full.update(env or {})
    proc = subprocess.run(
        argv, cwd=cwd, env=full, capture_output=True, text=True, timeout=300, check=False
    )
    return proc.stdout + proc.stderr


def capture(work: Path) -> list[dict[str, Any]]:
    samples: list[dict[str, Any]] = []

    def add(name: str, command: str, output: str) -> None:
        output = output.replace(str(work), rs.PROJ)
        output = re.sub(r"/tmp/[\w.-]+/", "/tmp/x/", output)
        if "\x1b" in output:
            samples.append({"name": name, "command": command, "output": output})

    have = shutil.which
    bins = rs.JS_TOOLS / ".bin"
    if have("node") and bins.is_dir():
        js = work / "js"
        js.mkdir(parents=True)
        os.symlink(rs.JS_TOOLS, js / "node_modules")
        rs._write(
            js,
            {
                "package.json": '{"name": "slug", "version": "1.0.0"}\n',
                "slug.js": rs.JS_SRC,
                "slug.cjs": rs.JS_CJS,
                "src/order.ts": rs.TS_SRC,
                "vitest/slug.test.js": rs._js_suite(
                    "import { describe, it, expect } from 'vitest';\nimport { slug } from '../slug.js';",
                    "describe",
                ),
                "jest/slug.test.js": rs._js_suite(
                    "const { slug } = require('../slug.cjs');", "describe"
                ),
            },
        )
        if (bins / "tsc").exists():
            add(
                "tsc-pretty",
                "npx tsc --noEmit --pretty",
                _run([str(bins / "tsc"), "--noEmit", "--pretty", "--strict", "src/order.ts"], js),
            )
        if (bins / "jest").exists():
            add(
                "jest-colors",
                "npx jest --colors",
                _run([str(bins / "jest"), "--colors", "--rootDir", "jest"], js),
            )
        if (bins / "vitest").exists():
            add(
                "vitest-color",
                "npx vitest run",
                _run([str(bins / "vitest"), "run", "vitest"], js, {"FORCE_COLOR": "1"}),
            )
    if have("cargo"):
        env_rs = {"CARGO_TARGET_DIR": str(work / "target"), "CARGO_TERM_COLOR": "always"}
        rb = work / "rb"
        rs._write(
            rb,
            {"Cargo.toml": rs.CARGO_TOML.replace("ledger", "totals"), "src/lib.rs": rs.RUST_BROKEN},
        )
        add(
            "cargo-build-color",
            "cargo build --color=always",
            _run(["cargo", "build", "--offline", "--color=always"], rb, env_rs),
        )
        rt = work / "rs"
        rs._write(rt, {"Cargo.toml": rs.CARGO_TOML, "src/lib.rs": rs.RUST_LIB})
        _run(["cargo", "test", "--offline", "--no-run"], rt, env_rs)
        add(
            "cargo-test-color",
            "cargo test --color=always",
            _run(["cargo", "test", "--offline", "--color=always"], rt, env_rs),
        )
    if have("gcc"):
        gc = work / "gcc"
        rs._write(gc, {"main.c": rs.GCC_SRC})
        add(
            "gcc-color",
            "gcc -fdiagnostics-color=always -Wall -Wextra -c main.c",
            _run(
                [*GCC_ARGS, os.devnull],
                gc,
                {"LC_ALL": "C"},
            ),
        )
    add(
        "ls-color",
        "ls --color=always -la workers/engines",
        _run(["ls", "--color=always", "-la", "--time-style=+", "workers/engines"], REPO),
    )
    add(
        "ls-color-r",
        "ls --color=always -R workers",
        _run(["ls", "--color=always", "-R", "workers"], REPO),
    )
    if have("git"):
        add(
            "git-log-color",
            "git log --color=always --stat -n 12",
            _run(["git", "log", "--color=always", "--stat", "-n", "12", "e9da36f"], REPO),
        )
        add(
            "git-diff-color",
            "git diff --color=always HEAD~3",
            _run(["git", "diff", "--color=always", "ff490f8~3", "ff490f8", "--", "workers"], REPO),
        )
    add(
        "grep-color",
        "grep --color=always -rn 'def ' workers/core",
        _run(["grep", "--color=always", "-rn", "def ", "workers/core"], REPO),
    )
    return samples


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="ctx-ansi-") as tmp:
        samples = capture(Path(tmp))
    FIXTURE.write_text(json.dumps(samples, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    for s in samples:
        print(f"{s['name']:18} {len(s['output']):7} chars {s['output'].count(chr(27)):5} escapes")


if __name__ == "__main__":
    main()
