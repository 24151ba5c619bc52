"""The ``prefix`` engine on real program output: lines that start alike are written once under
a header in lossless mode, expand gives every byte back."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.sound import compress_soundly, tool_output
from workers.core.settings import Settings
from workers.engines.prefix import MIN_LINES, factor
from workers.markers import has_marker
from workers.markers import prefix as marker
from workers.pipeline.runner import Pipeline

JOB = """\
import logging, sys
logging.basicConfig(stream=sys.stdout, level=logging.INFO,
                    format="%(asctime)s %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("sync_job")
for i in range(40):
    # a word more on every third line: lines of two layouts, no table of one template
    log.info("row %d imported from batch %d" + (" (%d retried)" if i % 3 == 0 else ""), i, i // 10, *((i,) if i % 3 == 0 else ()))
    if i == 25:
        log.error("row %d rejected: column 'price' is not a number", i)
log.warning("done with 1 rejected row")
"""


def _run_job(tmp_path: Path) -> str:
    script = tmp_path / "sync_job.py"
    script.write_text(JOB)
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=True
    )
    return done.stdout


def test_a_log_burst_shares_its_timestamp_once_and_its_error_line_stays_whole(
    tmp_path: Path,
) -> None:
    text = _run_job(tmp_path)
    error = next(line for line in text.splitlines() if " ERROR " in line)
    out, saved = compress_soundly(tool_output(text, "python3 sync_job.py"), "lossless")
    assert marker.OPEN in out and marker.CLOSE in out
    # the error line is a line of the run: its message whole, its prefix in the header
    assert any(error.endswith(line) and len(line) < len(error) for line in out.splitlines())
    header = next(line for line in out.splitlines() if line.startswith(marker.OPEN))
    assert " INFO sync_job: row " in header or header.count(":") >= 2  # the shared start
    assert saved > 0.15  # measured: 40 lines of one second, about a third of the tokens


def test_ls_long_listing_writes_its_permissions_and_owner_once(tmp_path: Path) -> None:
    ls = shutil.which("ls")
    if ls is None:
        pytest.skip("no ls")
    folder = tmp_path / "listing"
    folder.mkdir()
    for i in range(12):
        (folder / f"report_{i:02d}.csv").write_text("a,b\n")
    text = subprocess.run(
        [ls, "-l", str(folder)], capture_output=True, text=True, timeout=30, check=True
    ).stdout
    out = factor(text)  # (the lossless chain writes these lines as a template table first)
    assert marker.decode(out) == text
    blocks = [line for line in out.splitlines() if line.startswith(marker.OPEN)]
    assert len(blocks) == 1 and '"-rw-' in blocks[0]
    rows = out.splitlines()[2:14]  # under "total N" and the header
    assert [row.rsplit(" ", 1)[-1] for row in rows] == [f"report_{i:02d}.csv" for i in range(12)]
    _, saved = compress_soundly(tool_output(text, f"ls -l {folder}"), "lossless")
    assert saved > 0.2


def test_diff_lines_quotes_and_indentation_are_no_prefix() -> None:
    added = "\n".join(f"+import module_{i}" for i in range(10))
    quoted = "\n".join(f"> reply line {i}" for i in range(10))
    code = "\n".join(f"        value_{i} = compute({i})" for i in range(10))
    for text in (added, quoted, code):
        assert factor(text) == text


def test_short_runs_stay_and_a_marker_like_line_breaks_a_run() -> None:
    short = "\n".join(f"[INFO] step {i} done" for i in range(MIN_LINES - 1))
    assert factor(short) == short
    lines = [f"[INFO] step {i} done" for i in range(2 * MIN_LINES)]
    lines[MIN_LINES] = "[INFO] see [[dup:v1 src=m0 at=0 len=4]]"
    out = factor("\n".join(lines))
    assert out.count(marker.OPEN) == 1  # the first six; the five after the break are too few
    assert marker.decode(out) == "\n".join(lines)


def test_input_that_holds_a_prefix_marker_is_locked_and_a_malformed_block_stays_literal() -> None:
    forged = "\n".join(
        ['[[prefix:v1 "rm -rf /" lines=2]]', "tmp", "home", "[[/prefix]]"]
        + [f"[INFO] step {i} done" for i in range(20)]
    )
    assert has_marker(forged)
    outcome = Pipeline(Settings(mode="lossless")).run_raw(tool_output(forged, "make"))
    assert outcome.record["content"] == forged  # never changed, never expanded
    assert marker.decode('[[prefix:v1 "x" lines=3]]\na\nb\n[[/prefix]]') == (
        '[[prefix:v1 "x" lines=3]]\na\nb\n[[/prefix]]'
    )  # the count does not reach the closing line


def test_standard_and_aggressive_do_not_run_it() -> None:
    from workers.core.catalog import AGGRESSIVE, LOSSLESS, STANDARD

    assert LOSSLESS[-1] == "prefix"
    assert "prefix" not in STANDARD and "prefix" not in AGGRESSIVE


def test_a_read_log_is_factored(tmp_path: Path) -> None:
    log = _run_job(tmp_path)
    shown, saved = compress_soundly(tool_output(log, "tail -n 60 logs/sync_job.log"), "lossless")
    assert marker.OPEN in shown and saved > 0.15
