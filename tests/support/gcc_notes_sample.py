"""A real ``make -k`` log of gcc warnings with ``note:`` lines, for the diagnostics blocks.

``python -m tests.support.gcc_notes_sample`` writes a small C project (six files, each
with an unused variable, ``sprintf`` into a short buffer, a maybe-uninitialized value and,
in one, an undeclared name) into a temporary folder, runs ``make -k`` with
``-Wall -Wextra -Wformat-overflow=2`` and writes what gcc printed to
``tests/data/gcc-notes/make-k.txt``.  The tests read the file only.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "data" / "gcc-notes" / "make-k.txt"


def _source(i: int) -> str:
    body = ["#include <stdio.h>\n", f"static int unused_{i};\n"]
    for j in range(4):
        body.append(
            f"int f{i}_{j}(int x) {{ int y; char buf[8]; if (x > {j}) y = x * {i}; "
            f'sprintf(buf, "%d", x); return y; }}\n'
        )
    if i == 4:
        body.append(f"int broken_{i}(void) {{ return undefined_symbol_{i}; }}\n")
    return "".join(body)


def capture() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        names = [f"mod{i:03d}" for i in range(6)]
        for i, name in enumerate(names):
            (root / f"{name}.c").write_text(_source(i), encoding="utf-8")
        (root / "Makefile").write_text(
            "CFLAGS=-O2 -Wall -Wextra -Wformat-overflow=2\n"
            f"OBJS={' '.join(n + '.o' for n in names)}\n"
            "all: libmods.a\nlibmods.a: $(OBJS)\n\tar rcs $@ $^\n"
            "%.o: %.c\n\tgcc $(CFLAGS) -c $< -o $@\n",
            encoding="utf-8",
        )
        done = subprocess.run(
            ["make", "-k"],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            check=False,
            env={"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"},
        )  # fmt: skip (as a terminal shows it: make's lines and gcc's in order)
        return done.stdout


if __name__ == "__main__":
    OUT.write_text(capture(), encoding="utf-8")
    print(f"wrote {OUT}")
