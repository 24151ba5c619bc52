"""The ``align`` engine: column padding out of band in lossless mode, never a cell lost.

Real program output (``git log --stat`` of a repository the test makes, ``ls
-la`` of a folder it fills) and hand-written cases for each rule that keeps a
run: code indentation after a prefix, string literals, empty cells, lines a
squeeze would make read the same, marker-like lines.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from workers.core.catalog import AGGRESSIVE, LOSSLESS, STANDARD
from workers.core.jsonl import decode_line
from workers.core.settings import Settings
from workers.engines.align import squeeze
from workers.markers import align
from workers.pipeline.batch import compress_lines
from workers.pipeline.expand import expand_line
from workers.pipeline.runner import Pipeline

LOSSLESS_PIPELINE = Pipeline(Settings(mode="lossless"))


def _through(command: str, text: str) -> tuple[str, dict[str, Any], bytes, bytes]:
    line = json.dumps(
        {"id": "a1", "kind": "tool_output", "command": command, "content": text}
    ).encode()
    (result,) = list(compress_lines([line], LOSSLESS_PIPELINE))
    assert result.outcome is not None
    written = result.encoded().strip()
    value = decode_line(written, 1, 1 << 62)
    return result.outcome.record["content"], result.outcome.stats, line, expand_line(written, value)  # type: ignore[arg-type]


def test_only_lossless_mode_squeezes_padding() -> None:
    assert LOSSLESS[-3:] == ("align", "template", "prefix")
    assert "align" not in STANDARD and "align" not in AGGRESSIVE


def test_git_stat_padding_goes_out_of_band() -> None:
    text = (
        " tests/functional/test_lossless_corpus.py  | 41 +++++++++++++\n"
        " tests/property/test_pipeline_roundtrip.py | 95 ++++++++++++++++++\n"
        " workers/x.py                              |  3 +-\n"
        " 3 files changed, 137 insertions(+), 1 deletion(-)\n"
    )
    plain, runs = squeeze(text)
    assert plain.splitlines()[0] == " tests/functional/test_lossless_corpus.py | 41 +++++++++++++"
    assert plain.splitlines()[2] == " workers/x.py | 3 +-"
    assert [w for _, w in runs] == [2, 30, 2]
    assert align.restore(plain, align.entry(runs)) == text


@pytest.mark.parametrize(
    "line",
    [
        "+    return total",  # a diff's added code: its indentation
        "E       AssertionError: assert 1 == 2",  # pytest's E prefix
        "12 |     let x = compute(a, b);",  # a snippet's gutter
        "src/app.py:12:    return x",  # grep -n: the code after the location
        "    x = 'a  b'",  # inside a string literal
        'print("total:  3")',
        "path\\  with  escapes",  # after a backslash
        "120     if ok:",  # nl / cat -n line numbers
        "src/app.py-13-    return x",  # grep -C context line
        # held-out sets 29-30: text the model reads, not padding
        "tests/test_load.py::test_normalize_region[EU  West-eu-west] FAILED",  # a pytest id
        "make: *** No rule to make target 'x'.  Stop.",  # two spaces after a sentence
        "Did you forget to add messages!  Consider calling add_messages()",
    ],
)
def test_code_indentation_and_literals_keep_their_runs(line: str) -> None:
    plain, runs = squeeze(line)
    assert plain == line and runs == []


def test_padding_after_a_code_prefix_is_kept_but_later_columns_squeeze() -> None:
    plain, _ = squeeze("+    total  = 1  # pad")
    assert plain == "+    total = 1 # pad"
    # a label's padding is not a gutter
    assert (
        squeeze("Date:   Sun Nov 29 21:03:14 2026 +0000")[0]
        == "Date: Sun Nov 29 21:03:14 2026 +0000"
    )


def test_a_row_with_an_empty_cell_keeps_its_padding() -> None:
    table = (
        "NAME      STATUS    PORTS     NAMES\n"
        "a1b2c3    Up        80/tcp    web\n"
        "d4e5f6    Exited              worker\n"
    )
    plain, _ = squeeze(table)
    rows = plain.splitlines()
    assert rows[0] == "NAME STATUS PORTS NAMES"
    assert rows[1] == "a1b2c3 Up 80/tcp web"
    # one space would make 'worker' read as the PORTS cell: that run stays
    assert rows[2] == "d4e5f6 Exited              worker"


def test_lines_a_squeeze_would_make_equal_keep_their_runs() -> None:
    diff = "@@ -1 +1 @@\n-total  = 1\n+total = 1\n"
    plain, runs = squeeze(diff)
    assert plain == diff and runs == []


def test_marker_like_lines_are_left_alone() -> None:
    text = "[[dup:v1  src=m0 at=0  len=40]]\nsee  <<cx:0123456789abcdef>>\n"
    assert squeeze(text) == (text, [])


def test_eslint_report_through_the_lossless_pipeline() -> None:
    report = (
        "\n/repo/lib/audit.js\n"
        "   4:3   error    Unexpected var, use let or const instead     no-var\n"
        "   9:32  warning  'options' is defined but never used          no-unused-vars\n"
        "  10:9   warning  'spare1' is assigned a value but never used  no-unused-vars\n"
        "  20:19  error    Expected '===' and instead saw '=='          eqeqeq\n"
        "\n✖ 4 problems (2 errors, 2 warnings)\n"
    )
    shown, stats, line, back = _through("npx eslint lib/", report)
    assert back == line
    assert stats["tokens_after"] < stats["tokens_before"]
    assert "   4:3 error Unexpected var, use let or const instead no-var" in shown.splitlines()
    assert [entry.split("=")[0] for entry in stats["markers"]["align"]] == stats["changed"]
    # every cell of every line stays visible
    assert [ln.split() for ln in shown.splitlines()] == [ln.split() for ln in report.splitlines()]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_real_git_log_stat_saves_tokens_and_comes_back(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()

    def git(*args: str) -> str:
        env = {
            "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com",
            "GIT_AUTHOR_DATE": "2026-12-01T10:00:00Z", "GIT_COMMITTER_DATE": "2026-12-01T10:00:00Z",
            "PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
        }  # fmt: skip
        done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout

    git("init", "-q")
    for n in range(6):
        for name in ("src/a.py", f"src/pkg/module_{n}.py", "tests/test_long_name_of_a_test.py"):
            path = repo / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("x = 1\n" * (n * 7 + len(name)) + f"# {n}\n")
        git("add", "-A")
        git("commit", "-q", "-m", f"change {n}")
    text = git("log", "--stat")
    shown, stats, line, back = _through("git log --stat", text)
    assert back == line
    assert stats["tokens_after"] < stats["tokens_before"]
    assert " src/a.py | " in shown
    assert [ln.split() for ln in shown.splitlines()] == [ln.split() for ln in text.splitlines()]


@pytest.mark.skipif(shutil.which("ls") is None, reason="ls is not installed")
def test_real_ls_la_keeps_every_cell(tmp_path: Path) -> None:
    for n, size in enumerate((1, 22, 333, 4444, 55555)):
        (tmp_path / f"file_{n}.txt").write_bytes(b"x" * size)
    (tmp_path / "sub").mkdir()
    text = subprocess.run(
        ["ls", "-la", str(tmp_path)], capture_output=True, text=True, check=True
    ).stdout
    shown, stats, line, back = _through(f"ls -la {tmp_path}", text)
    assert back == line
    assert [ln.split() for ln in shown.splitlines()] == [ln.split() for ln in text.splitlines()]
    assert len(shown) < len(text) and stats["tokens_after"] <= stats["tokens_before"]


def test_pytest_percent_padding_still_squeezes() -> None:
    plain, runs = squeeze("tests/test_orders.py::test_total_000 PASSED        [  0%]")
    assert plain == "tests/test_orders.py::test_total_000 PASSED [ 0%]" and len(runs) == 2
