"""A real service log whose events interleave, for folding repeats wherever they stand.

``python -m tests.support.service_log_sample`` runs the generated corpus's
service simulation (``tools/service.py`` of :mod:`workers.bench.corpus`, seeded: HTTP access lines, job and pool-stat lines, a payment retry
WARNING that differs only in its timestamp and attempt counter, slow-query
WARNINGs that name a customer, webhook ERRORs with a traceback), lets
:mod:`logging` write its log file, and keeps what ``tail -n 200`` of it shows
in ``tests/data/service-log/tail-200.txt`` (the temporary folder's path
replaced by ``/home/dev/proj``).  The tests read the file only.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from workers.bench.corpus import PROJECT_FILES

OUT = Path(__file__).resolve().parent.parent / "data" / "service-log" / "tail-200.txt"

# the program of the generated corpus (one service simulation for both)
PROGRAM = textwrap.dedent(PROJECT_FILES["tools/service.py"])


def capture() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "service.py").write_text(PROGRAM, encoding="utf-8")
        subprocess.run([sys.executable, "service.py", "11"], cwd=root, check=True, timeout=120)
        done = subprocess.run(
            ["tail", "-n", "200", "logs/service.log"],
            cwd=root,
            stdout=subprocess.PIPE,
            text=True,
            check=True,
            timeout=60,
        )
        return done.stdout.replace(str(root), "/home/dev/proj")


if __name__ == "__main__":
    OUT.write_text(capture(), encoding="utf-8")
    print(f"wrote {OUT}")
