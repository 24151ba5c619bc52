"""Shapes of held-out sets 26 (a JVM service) and 27 (C++, PostgreSQL, git) that lost facts.

The texts are written here in the tools' layouts."""

from __future__ import annotations

from tests.support.fact_kinds import facts_by_kind as _facts
from tests.support.sessions import bash_session
from workers.core.settings import Settings
from workers.pipeline.runner import Pipeline

GREP_A = """\
36:2026-12-07 17:17:28.379 ERROR [http-worker-21] c.a.l.web.LedgerServer [r000035] - unhandled error on POST /transfers
37-java.lang.NullPointerException: Cannot invoke "Account.deposit(Money)" because "to" is null
38-\tat com.acme.ledger.persistence.TransferService.transfer(TransferService.java:23)
39-\tat com.acme.ledger.web.LedgerServer.postTransfer(LedgerServer.java:130)
40-\tat java.base/java.util.concurrent.ThreadPoolExecutor.runWorker(ThreadPoolExecutor.java:1136)
41-\tat java.base/java.lang.Thread.run(Thread.java:840)
42-2026-12-07 17:17:28.387 INFO  [http-worker-21] ledger.access [r000035] - POST /transfers 500 8ms
"""


def test_a_numbered_grep_reads_its_lines_behind_their_numbers() -> None:
    """Set 26: ``grep -n -A16 ' ERROR ' app.log``: the frame in user code under each error is
    a fact, as it is in the log itself (behind ``38-`` no rule had read it as a frame, and
    aggressive aging dropped it while it kept the runtime's frames)."""
    facts = _facts(GREP_A, "grep -n -A16 ' ERROR ' logs/ledger-web.log")
    assert (
        "38-\tat com.acme.ledger.persistence.TransferService.transfer(TransferService.java:23)"
        in facts.get("stack_frame", set())
    )
    # a grep of several files keeps reading ``file:line:`` as the file it names
    many = _facts(
        "src/a.py:12:    raise KeyError(key)\nsrc/b.py:40:    raise KeyError(k)\n",
        "grep -rn raise src",
    )
    assert {"src/a.py", "src/b.py"} <= many.get("grep_file", set())


LOAD = "requests: 953\n  200: 762\n  201: 156\n  400: 8\n  404: 13\n  409: 4\n  500: 10\n"


def test_aggressive_leaves_a_short_output_whole_at_any_age() -> None:
    """Set 26: a load test's summary, seven short lines, aged to ``requests: 953`` and ``… 6
    lines omitted`` (19 tokens saved; ``500: 10`` was what the session was about)."""
    calls = [("bin/load.sh 36400 80", LOAD)] + [
        ("curl -s localhost:36400/health", f"ok {n}\n") for n in range(20)
    ]
    outcome = Pipeline(Settings(mode="aggressive")).run_raw(bash_session(calls))
    assert outcome.record["messages"][2]["content"] == LOAD
    # a long one of the same age is still summarised
    long_load = LOAD + "".join(f"  path /api/v{k}/items: {k * 7}\n" for k in range(40))
    calls[0] = ("bin/load.sh 36400 80", long_load)
    outcome = Pipeline(Settings(mode="aggressive")).run_raw(bash_session(calls))
    assert "omitted" in outcome.record["messages"][2]["content"]


PGBENCH = """\
pgbench (15.18 (Debian 15.18-0+deb12u1))
progress: 5.0 s, 35.2 tps, lat 112.297 ms stddev 22.947, 0 failed
progress: 10.0 s, 34.6 tps, lat 114.955 ms stddev 24.935, 0 failed
progress: 15.0 s, 31.6 tps, lat 126.830 ms stddev 30.242, 0 failed
transaction type: sql/bench.sql
scaling factor: 1
query mode: simple
number of clients: 4
number of threads: 2
maximum number of tries: 1
duration: 15 s
number of transactions actually processed: 511
number of failed transactions: 0 (0.000%)
latency average = 117.796 ms
latency stddev = 26.775 ms
initial connection time = 13.651 ms
tps = 33.917500 (without initial connection time)
"""


def test_an_older_output_keeps_how_it_ended() -> None:
    """Set 27: an older ``pgbench`` run, summarised, kept its banner and lost its result
    (``tps = 33.917500``, the number the slow-query session compared after the index)."""
    # a longer run (more progress lines): an output of at most 256 tokens stays whole
    progress = "".join(
        f"progress: {5 * k}.0 s, 3{k % 10}.2 tps, lat 11{k % 10}.297 ms stddev 22.947, 0 failed\n"
        for k in range(4, 16)
    )
    long_run = PGBENCH.replace("transaction type:", progress + "transaction type:", 1)
    calls = [("pgbench -c 4 -T 75 -f sql/bench.sql ledger", long_run)] + [
        ("curl -s localhost:36400/health", f"ok {n}\n") for n in range(20)
    ]
    outcome = Pipeline(Settings(mode="aggressive")).run_raw(bash_session(calls))
    text = outcome.record["messages"][2]["content"]
    assert "omitted" in text  # summarised: most of it goes
    assert "tps = 33.917500 (without initial connection time)" in text.splitlines()
