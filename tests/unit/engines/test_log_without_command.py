"""A log whose command says nothing is read as the log it is.

A chat's tool message often comes without the call that made it, and a log comes from
commands no filter knows (``./run.sh``, ``python3 worker.py``).  Content detection reads the
first lines: when most of them say they are log lines (a level, a syslog or journal header,
a request), the output gets the log filter, as a read of a ``.log`` file does.  The log here
is written by a real program: Python's ``logging`` with a journal-like format, several
services interleaved, now and then a failure.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from workers.core.settings import Settings
from workers.engines._filters import builtin_filters
from workers.pipeline.runner import Pipeline
from workers.pipeline.visibility import lost_facts
from workers.testing import expanded_record

_PROGRAM = r"""
import logging, random, sys, time
rng = random.Random(11)
services = ["api", "billing", "postgres", "nginx", "worker"]
handlers = {}
for name in services:
    handler = logging.StreamHandler(sys.stdout)
    pid = rng.randint(300, 9999)
    handler.setFormatter(logging.Formatter(
        f"%(asctime)s ci-host {name}[{pid}]: %(levelname)s %(message)s", "%b %d %H:%M:%S"))
    log = logging.getLogger(name)
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
for i in range(600):
    log = logging.getLogger(rng.choice(services))
    r = rng.random()
    if r < 0.9:
        log.info("request id=%012x took %dms status=%d", rng.getrandbits(48),
                 rng.randint(1, 900), rng.choice([200, 200, 201, 204, 304]))
    elif r < 0.98:
        log.warning("slow query on table orders took %dms", rng.randint(900, 5000))
    else:
        log.error("upstream /api/orders/%d failed: connection refused", rng.randint(100, 999))
"""


@pytest.fixture(scope="module")
def journal() -> str:
    done = subprocess.run(
        [sys.executable, "-c", _PROGRAM], capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout


def _chat(text: str) -> dict[str, Any]:
    return {
        "id": "c",
        "messages": [
            {"role": "user", "content": "what broke on the ci host?"},
            {"role": "tool", "tool_call_id": "x", "content": text},
        ],
    }


def test_a_log_without_a_command_is_read_as_a_log(journal: str) -> None:
    filters = builtin_filters()
    for command, tool in ((None, None), ("./run.sh", "bash"), ("python3 services.py", "bash")):
        found = filters.detect(command, tool, journal)
        assert (found.source, found.family) == ("content", "logfile"), (command, found)


def test_data_and_code_without_a_command_are_not_logs() -> None:
    filters = builtin_filters()
    rows = "".join(
        f"2026-12-02T10:{i // 60:02d}:{i % 60:02d}Z,ACME,{10 + i % 9}.5,{i}\n" for i in range(300)
    )
    source = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(60))
    for text in (rows, source):
        assert filters.detect(None, None, text).family != "logfile"


def test_the_chat_log_saves_and_keeps_every_failure(journal: str) -> None:
    record = _chat(journal)
    errors = [line for line in journal.splitlines() if " ERROR " in line]
    assert errors  # the program logged failures
    for mode in ("standard", "aggressive"):
        outcome = Pipeline(Settings(mode=mode)).run_raw(record)
        assert outcome.rejections == []
        assert lost_facts(record, outcome.record) == []
        assert expanded_record(outcome) == record
        text = outcome.record["messages"][1]["content"]
        assert all(line in text for line in errors), mode
        saved = 1 - outcome.stats["tokens_after"] / outcome.stats["tokens_before"]
        assert saved > 0.6, (mode, saved)
