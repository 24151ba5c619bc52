"""``docker compose logs`` prefixes each service's line with its name (``worker-1   | ...``,
names padded to one width; a captured run of three seeded services, in Node, Python and Go,
multiplexed that way): the line after the prefix says it is a log line, and the lines of one
service fold as that service's log does."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.sound import compress_soundly, tool_output
from workers.engines._logs import is_log_line

DATA = Path(__file__).resolve().parents[2] / "data" / "holdout-logs"
LOGS = (DATA / "compose-logs.txt").read_text(encoding="utf-8")
PREFIX = re.compile(r"^(\S+) +\| (.*)$")


def test_a_prefixed_line_is_a_log_line_when_its_rest_is() -> None:
    checked = 0
    for line in LOGS.splitlines():
        m = PREFIX.match(line)
        assert m is not None
        if is_log_line(m.group(2)):
            assert is_log_line(line), line
            checked += 1
    assert checked > 100
    assert is_log_line("[pod/api-7d9f8b6c5-x2kqp/api] 2026-12-03T09:14:02.411Z INFO started")
    assert not is_log_line("api-1  | npm notice")
    assert not is_log_line("[1/4] Resolving packages...")


def test_compose_logs_fold_and_keep_their_errors() -> None:
    text, saved = compress_soundly(tool_output(LOGS, "docker compose logs"), "standard")
    assert len(re.findall(r"more lines like this|lines like the next", text)) >= 2
    for line in LOGS.splitlines():
        if " ERROR " in line or "level=ERROR" in line:
            assert line in text or re.sub(r"\d+", "#", line) in {
                re.sub(r"\d+", "#", shown) for shown in text.splitlines()
            }
    assert saved > 0.5
