"""A thread pool's log (a captured run of a Java fetcher on four pool threads logging with
log4j 2: ``ERROR [pool-2-thread-3] ... fetch failed for feed host 127.0.0.1:7: Connection
refused``): the thread a failure ran on is volatile, as a pid is, while the host:port it
failed against identifies it.  Before, the thread made four facts of one failure and the two
hosts (ports 7 and 9) folded into one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.sound import compress_soundly, tool_output
from workers.fidelity.facts import line_shape

DATA = Path(__file__).resolve().parents[2] / "data" / "holdout-logs"
LOG = (DATA / "log4j-threads.txt").read_text(encoding="utf-8")
ERRORS = [line for line in LOG.splitlines() if " ERROR " in line]


def test_threads_fold_and_hosts_stay() -> None:
    threads = {line.split("[", 1)[1].split("]", 1)[0] for line in ERRORS}
    assert len(threads) > 1
    shapes = {line_shape(line) for line in ERRORS}
    assert len(shapes) == 2
    assert {s.split("feed host ")[1].split(": ")[0] for s in shapes} == {
        "127.0.0.1:7",
        "127.0.0.1:9",
    }
    for name in ("http-nio-8080-exec-7", "Thread-12", "ForkJoinPool.commonPool-worker-3"):
        assert line_shape(f"ERROR [{name}] upstream refused") == "ERROR [#] upstream refused"
    # a client's address alone (an access log's first column) still folds
    assert line_shape("10.0.0.9 - ERROR x") == line_shape("10.0.0.1 - ERROR x")


@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_each_failing_host_stays_visible(mode: str) -> None:
    text, _ = compress_soundly(tool_output(LOG, "tail -n 80 logs/fetcher.log"), mode)
    shown = [line for line in text.splitlines() if " ERROR " in line]
    assert any("127.0.0.1:7:" in line for line in shown)
    assert any("127.0.0.1:9:" in line for line in shown)
