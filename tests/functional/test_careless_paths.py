"""Careless paths give one-line errors (exit 2), never a truncated input or a traceback."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.conftest import SAMPLE
from workers.cli import main
from workers.cli._common import read_lines
from workers.pipeline.batch import LongLine

RECORD = orjson.dumps({"id": "a", "messages": [{"role": "user", "content": "hello there"}]})


@pytest.fixture
def src(tmp_path: Path) -> Path:
    path = tmp_path / "f.jsonl"
    path.write_bytes(RECORD + b"\n")
    return path


def _err(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize("flag", ["-o", "--stats", "--dead-letter"])
def test_an_output_that_is_the_input_is_refused(
    src: Path, tmp_path: Path, flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["compress", "-i", str(src), "-o", str(tmp_path / "out.jsonl"), flag, str(src)]
    assert main(args) == 2
    assert "is the input" in _err(capsys)
    assert src.read_bytes() == RECORD + b"\n"


def test_the_same_file_given_twice_is_refused(
    src: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "o.jsonl")
    assert main(["compress", "-i", str(src), "-o", out, "--stats", out]) == 2
    assert "also the file of -o" in _err(capsys)


def test_expand_output_that_is_the_input_is_refused(
    src: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["expand", "-i", str(src), "-o", str(src)]) == 2
    assert "is the input" in _err(capsys)
    assert src.read_bytes() == RECORD + b"\n"


def test_stdin_redirected_from_the_output_is_refused(src: Path) -> None:
    with open(src, "rb") as stdin:
        run = subprocess.run(
            [sys.executable, "-m", "workers.cli", "compress", "-o", str(src)],
            stdin=stdin,
            capture_output=True,
            timeout=120,
        )
    assert run.returncode == 2
    assert b"is the input" in run.stderr and b"Traceback" not in run.stderr
    assert src.read_bytes() == RECORD + b"\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-o", "/dev/full"], "No space left on device"),
        (["-o", "{tmp}"], "is a directory"),
        (["-o", "{tmp}/out.jsonl", "--offload", "{src}"], "is not a directory"),
        (["-o", "{tmp}/out.jsonl", "--dead-letter", "/dev/full"], "No space left"),
    ],
)
def test_unwritable_outputs_are_one_line_errors(
    src: Path, tmp_path: Path, args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    if message.startswith("No space") and not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    bad = b"not json\n" if "--dead-letter" in args else b""
    src.write_bytes(RECORD + b"\n" + bad)
    filled = [a.format(tmp=tmp_path, src=src) for a in args]
    assert main(["compress", "--mode", "lossless", "-i", str(src), *filled]) == 2
    assert message in _err(capsys)


def test_expand_does_not_create_a_missing_offload_dir(
    src: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    typo = tmp_path / "typo" / "dir"
    assert main(["expand", "-i", str(src), "-o", str(tmp_path / "x"), "--offload", str(typo)]) == 2
    assert "does not exist" in _err(capsys)
    assert not (tmp_path / "typo").exists()


def test_read_lines_bounds_a_long_line() -> None:
    data = b"a\n" + b"x" * 5000 + b"\nbb\n" + b"z" * 3000
    lines = list(read_lines(io.BytesIO(data), 1000))
    assert lines[0] == b"a\n" and lines[2] == b"bb\n"
    assert isinstance(lines[1], LongLine) and lines[1].size == 5001
    assert isinstance(lines[3], LongLine) and lines[3].size == 3000
    assert list(read_lines(io.BytesIO(data), 10_000)) == [
        b"a\n",
        b"x" * 5000 + b"\n",
        b"bb\n",
        b"z" * 3000,
    ]


def _peak_rss_kb(data_mb: int) -> tuple[int, bytes]:
    """Peak RSS of ``ctxpress compress`` fed one line of ``data_mb`` MiB without a newline."""
    env = dict(os.environ, CTXPRESS_MAX_RECORD_BYTES=str(16 * 1024 * 1024))
    cmd = [
        sys.executable,
        "-m",
        "workers.cli",
        "compress",
        "--dead-letter",
        "/dev/stdout",
        "-o",
        "/dev/null",
        "--quiet",
    ]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    block = b"x" * (1 << 20)
    proc.stdin.write(RECORD + b'\n{"id": "big", "messages": [{"role": "user", "content": "')
    for _ in range(data_mb):
        proc.stdin.write(block)
    proc.stdin.close()
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return usage.ru_maxrss, out


def test_a_long_line_without_newline_is_read_bounded() -> None:
    base, _ = _peak_rss_kb(1)
    peak, out = _peak_rss_kb(512)
    letter = orjson.loads(out)
    assert letter["reason"].startswith("line 2: record is 536,870,9")
    # at most the 16 MiB limit (and a chunk) beyond a small run, not the 512 MiB line
    assert peak - base < 80 * 1024, (base, peak)


def test_a_long_line_survives_pickling_to_a_worker_process() -> None:
    import pickle

    line = pickle.loads(pickle.dumps(LongLine(b"head", 123)))
    assert isinstance(line, LongLine) and line == b"head" and line.size == 123


def test_a_symlinked_shard_folder_is_a_one_line_error_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "st"
    store.mkdir()
    for i in range(256):  # whichever shard a stash lands in, it is a link out of the store
        (store / f"{i:02x}").symlink_to(tmp_path)
    code = main(
        ["compress", "--mode", "standard", "-i", str(SAMPLE), "-o", str(tmp_path / "o.jsonl"),
         "--offload", str(store), "--quiet"]
    )  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.startswith("ctxpress compress: offload store") and "\n" not in err
    assert "Traceback" not in err
    assert not [p for p in tmp_path.iterdir() if p.is_file() and len(p.name) == 16]
