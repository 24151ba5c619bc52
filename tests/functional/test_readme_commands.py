"""README commands that need no broker, run as the README writes them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.conftest import SAMPLE
from workers.cli import main
from workers.core.settings import SETTINGS

CTXPRESS = Path(sys.executable).with_name("ctxpress")


def test_worker_help_lists_every_setting() -> None:
    done = subprocess.run(
        [str(CTXPRESS), "worker", "--help"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    missing = [s.env for s in SETTINGS if s.env not in done.stdout]
    assert not missing


@pytest.mark.slow  # runs a whole command over the corpus / a large input
def test_bare_bench_runs_every_mode_on_the_corpus_and_prints_both_tokenizers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["bench"]) == 0
    captured = capsys.readouterr()
    mode_table = captured.out.split("\n\n", 1)[0]  # the family table follows a blank line
    rows = [line.split() for line in mode_table.splitlines()[1:]]
    assert [r[0] for r in rows] == ["lossless", "standard", "aggressive"]
    assert "savings per output family" in captured.out
    assert all(float(r[1]) > 0 for r in rows)
    assert "median of 5 cold passes" in captured.err
    assert "bpe-openai" in captured.err and "tiktoken" in captured.err


def test_compress_with_the_o200k_encoding(tmp_path: Path) -> None:
    out, stats = tmp_path / "small.jsonl", tmp_path / "stats.jsonl"
    code = main(
        ["compress", "--mode", "lossless", "--encoding", "o200k_base", "-i", str(SAMPLE),
         "-o", str(out), "--stats", str(stats), "--dead-letter", str(tmp_path / "dlq.jsonl")]
    )  # fmt: skip
    assert code == 0
    records = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert records and all(r["compression"]["tokens_before"] > 0 for r in records)
    assert {r["compression"]["encoding"] for r in records} == {"o200k_base"}


def test_version_names_the_installed_package() -> None:
    from importlib.metadata import version

    result = subprocess.run(
        [sys.executable, "-m", "workers.cli", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0
    assert result.stdout.strip() == f"ctxpress {version('ctxpress')}"
