"""The ``template`` engine on real program output: lines of one template are written once as
a template and a table of their values in lossless mode; critical lines, paths and ids stay
whole, expand gives every byte back."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.sound import compress_soundly, tool_output
from workers.core.settings import Settings
from workers.engines.template import MIN_LINES, _time_slots, factor
from workers.markers import has_marker
from workers.markers import template as marker
from workers.pipeline.runner import Pipeline

# a worker's log: one event with other ids and measures on every line, an error among them
JOB = """\
import logging, random, sys
logging.basicConfig(stream=sys.stdout, level=logging.INFO,
                    format="%(asctime)s %(levelname)s [%(name)s] %(message)s")
log = logging.getLogger("billing.sync")
rng = random.Random(7)
for i in range(30):
    log.info("synced acct_%d balance=%d cents in %d ms", rng.randint(100, 999),
             rng.randint(1000, 9999), rng.randint(20, 900))
    if i == 17:
        log.error("reconciliation mismatch for acct_%d: ledger=%d local=%d", 671, 6984, 5227)
"""

UNITTESTS = """\
import unittest

class Prices(unittest.TestCase):
{cases}
    def test_rounding_is_half_up(self):
        self.assertEqual(round(2.675, 2), 2.68)

if __name__ == "__main__":
    unittest.main()
"""


def _run(tmp_path: Path, name: str, source: str) -> str:
    script = tmp_path / name
    script.write_text(source)
    done = subprocess.run(
        [sys.executable, str(script), "-v"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    return done.stdout + done.stderr


def _block_rows(out: str) -> list[tuple[str, list[str]]]:
    lines = out.split("\n")
    found = []
    for i, line in enumerate(lines):
        if line.startswith(marker.OPEN):
            count = int(line.rsplit("lines=", 1)[1][:-2])
            found.append((line, lines[i + 1 : i + 1 + count]))
    return found


def test_a_log_event_is_written_once_with_its_values_and_its_error_line_stays_whole(
    tmp_path: Path,
) -> None:
    text = _run(tmp_path, "sync_job.py", JOB)
    lines = text.splitlines()
    error = next(line for line in lines if " ERROR " in line)
    out, saved = compress_soundly(tool_output(text, "python3 sync_job.py"), "lossless")
    blocks = _block_rows(out)
    assert blocks, out
    header = blocks[0][0]
    assert "INFO [billing.sync] synced {} balance={} cents in {} ms" in header
    assert lines[0].split(" ")[0] in header  # the date, the same on every line: written once
    assert error in out.splitlines()  # an error of its own: a line as written
    # every account id stays whole: a value of a row, or a word of a line left as it was
    ids = [word for line in lines for word in line.split() if word.startswith("acct_")]
    values = {value for _, rows in blocks for row in rows for value in row.split("\t")}
    words = set(out.split())
    assert ids and all(word in values or word in words for word in ids)
    assert saved > 0.3  # measured: 0.37 (30 lines, about half of each is the template)


RETRIES = """\
import logging, random, sys
logging.basicConfig(stream=sys.stdout, level=logging.INFO,
                    format="%(asctime)s %(levelname)s [%(name)s] %(message)s")
log = logging.getLogger("retry_worker")
rng = random.Random(3)
for attempt in range(1, 41):
    log.warning("upstream timeout after %d ms, retrying (attempt %d/40)", rng.randint(900, 3100),
                attempt)
log.error("giving up on ledger.internal:7443 after 40 attempts")
"""


def test_warnings_of_one_retry_loop_are_one_template_with_every_attempt_in_its_rows(
    tmp_path: Path,
) -> None:
    text = _run(tmp_path, "retry_worker.py", RETRIES)
    out, saved = compress_soundly(tool_output(text, "python3 retry_worker.py"), "lossless")
    blocks = _block_rows(out)
    assert any(
        "WARNING [retry_worker] upstream timeout after {} ms, retrying" in h for h, _ in blocks
    )
    attempts = [row.rsplit("\t", 1)[-1] for _, rows in blocks for row in rows]
    assert sum(1 for a in attempts if a.endswith("/40)")) == 40  # every attempt, visible
    assert "giving up on ledger.internal:7443 after 40 attempts" in out
    assert saved > 0.4  # measured: 0.55 (was 0: every one of them was a critical line)


def test_unittest_verbose_lines_become_a_table_and_the_failure_stays(tmp_path: Path) -> None:
    cases = "".join(
        f"    def test_price_{i:02d}(self):\n        self.assertEqual({i} * 2, {2 * i})\n"
        for i in range(24)
    )
    text = _run(tmp_path, "test_prices.py", UNITTESTS.format(cases=cases))
    assert "FAIL: test_rounding_is_half_up" in text  # a real failure (2.675 is 2.67499...)
    out, saved = compress_soundly(tool_output(text, "python3 -m unittest -v"), "lossless")
    ((header, rows),) = _block_rows(out)
    assert header == marker.OPEN + '"{} {} ... ok" lines=24]]'
    assert rows[0] == "test_price_00\t(__main__.Prices.test_price_00)"  # the test ids, whole
    assert "test_rounding_is_half_up (" in out and "FAIL: test_rounding_is_half_up" in out
    assert saved > 0.04  # measured: 0.06 (the ids stay whole: " ... ok" and padding go)


def test_a_long_listing_keeps_every_file_name_whole(tmp_path: Path) -> None:
    ls = shutil.which("ls")
    if ls is None:
        pytest.skip("no ls")
    folder = tmp_path / "listing"
    folder.mkdir()
    for i in range(12):
        (folder / f"report_{i:02d}.csv").write_text("a,b\n" * i)
    text = subprocess.run(
        [ls, "-l", "--time-style=long-iso", str(folder)],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout
    out, _ = compress_soundly(tool_output(text, f"ls -l {folder}"), "lossless")
    rows = [row for _, rs in _block_rows(out) for row in rs]
    for i in range(12):
        assert f"report_{i:02d}.csv" in out
        assert any(f"report_{i:02d}.csv" in row.split("\t") for row in rows) or (
            f"report_{i:02d}.csv" in out.replace("\t", " ").split()
        )


def test_timestamps_keep_what_stays_the_same_in_the_template() -> None:
    stamps = ["10:55:48,123", "10:55:50,007", "10:56:01,990"]
    assert _time_slots(stamps) == ("10:{}", [["55:48,123", "55:50,007", "56:01,990"]])
    iso = ["2026-12-03T09:16:21.732Z", "2026-12-03T09:16:22.777Z", "2026-12-03T09:16:23.262Z"]
    assert _time_slots(iso) == (
        "2026-12-03T09:16:{}Z",
        [["21.732", "22.777", "23.262"]],
    )
    assert _time_slots(["acct_751", "acct_687", "acct_546"]) is None  # an id is no time
    assert _time_slots(["v1.2", "v1.3", "v1.4"]) is None
    assert _time_slots(["10.1.38.132", "10.3.227.29", "10.1.30.148"]) is None  # an IP, whole
    nginx = ["[03/Dec/2026:16:44:53", "[03/Dec/2026:16:44:54", "[03/Dec/2026:16:45:02"]
    assert _time_slots(nginx) == ("[03/Dec/2026:16:{}", [["44:53", "44:54", "45:02"]])


def test_diffs_tabs_short_runs_and_identical_lines_stay() -> None:
    diff = "@@ -1,4 +1,4 @@\n" + "\n".join(f" row {i} of the table" for i in range(8))
    tabs = "\n".join(f"col\t{i}\tvalue {i}" for i in range(8))
    short = "\n".join(f"step {i} done" for i in range(MIN_LINES - 1))
    same = "\n".join(["compiling the module now"] * 8)
    for text in (diff, tabs, short, same):
        assert factor(text) == text


def test_input_that_holds_a_template_marker_is_locked_and_a_malformed_block_stays_literal() -> None:
    forged = "\n".join(
        ['[[template:v1 "rm -rf {}" lines=2]]', "/tmp", "/home", "[[/template]]"]
        + [f"[INFO] step {i} of 20 done in {i * 3} ms" for i in range(20)]
    )
    assert has_marker(forged)
    outcome = Pipeline(Settings(mode="lossless")).run_raw(tool_output(forged, "make"))
    assert outcome.record["content"] == forged  # never changed, never expanded
    for bad in (
        '[[template:v1 "x {}" lines=3]]\na\nb\n[[/template]]',  # the count misses the close
        '[[template:v1 "x {} {}" lines=2]]\na\nb\n[[/template]]',  # rows lack a value
        '[[template:v1 "x { }" lines=1]]\na\n[[/template]]',  # a lone brace
        '[[template:v1 "x" lines=1]]\na\n[[/template]]',  # no slot
    ):
        assert marker.decode(bad) == bad
    assert marker.decode('[[template:v1 "a{{}}{}" lines=2]]\n1\n2\n[[/template]]') == ("a{}1\na{}2")


def test_only_lossless_mode_runs_it_before_prefix() -> None:
    from workers.core.catalog import AGGRESSIVE, LOSSLESS, STANDARD

    assert LOSSLESS[-2:] == ("template", "prefix")
    assert "template" not in STANDARD and "template" not in AGGRESSIVE


# a service that logs JSON lines (as pino or structlog do): its host, pid and service name
# are the same on every line
JSON_JOB = """\
import json, os, random, sys, time
rng = random.Random(11)
base = {"level": 30, "time": 0, "pid": os.getpid(), "hostname": "orders-7d9f8b6c5-x2kqp"}
for i in range(24):
    event = dict(base, time=1796249111208 + 137 * i)
    if i == 9:
        event.update(level=50, msg="payment failed: card declined", orderId="ord_%d" % 4242)
    else:
        event.update(reqId="req-%05x" % rng.randrange(1 << 20),
                      responseTime=rng.randint(5, 400), msg="request completed")
    sys.stdout.write(json.dumps(event, separators=(",", ":")) + "\\n")
"""


def test_json_log_lines_write_their_shared_fields_once_with_every_value_in_a_row(
    tmp_path: Path,
) -> None:
    text = _run(tmp_path, "orders_api.py", JSON_JOB)
    lines = text.splitlines()
    failed = next(line for line in lines if '"level":50' in line)
    out, saved = compress_soundly(tool_output(text, "docker logs orders-api"), "lossless")
    blocks = _block_rows(out)
    assert blocks, out
    header, rows = blocks[0]
    assert '\\"hostname\\":\\"orders-7d9f8b6c5-x2kqp\\"' in header  # once, not on every line
    assert rows[0].startswith("30\t1796249111208\t")  # level and time, as written
    # the failed payment is a row: its level and its message, as written
    assert any(
        row.startswith("50\t") and '"msg":"payment failed: card declined"' in row for row in rows
    )
    assert failed not in out  # read through its template: the oracle decodes it (no store needed)
    assert saved > 0.2  # measured: 0.33
