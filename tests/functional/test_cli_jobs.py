"""``ctxpress compress --jobs N``: the same bytes as one core, in input order, memory bounded."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from workers.cli import main
from workers.core.settings import Settings
from workers.pipeline import parallel
from workers.pipeline.parallel import compress_parallel
from workers.pipeline.runner import Pipeline


def corpus() -> bytes:
    lines = []
    for i in range(120):
        if i % 17 == 5:
            lines.append(b"not json at all")
        elif i % 23 == 7:
            lines.append(b"")
        else:
            listing = "\n".join(f"src/pkg_{i}/module_{k}.py" for k in range(120))
            record = {
                "id": f"r{i}",
                "messages": [
                    {"role": "user", "content": f"question {i}"},
                    {"role": "tool", "content": listing},
                    {"role": "tool", "content": listing},
                ],
            }
            lines.append(json.dumps(record).encode())
    return b"\n".join(lines) + b"\n"


def untimed(data: bytes) -> bytes:
    return re.sub(rb'("(?:duration_ms|ms)":)[0-9.eE+-]+', rb"\g<1>0", data)


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "CHUNK_LINES", 8)


def run(tmp_path: Path, jobs: int, mode: str) -> dict[str, bytes]:
    d = tmp_path / f"{mode}-{jobs}"
    d.mkdir()
    (d / "in.jsonl").write_bytes(corpus())
    args = ["compress", "--mode", mode, "-i", str(d / "in.jsonl"), "-o", str(d / "out.jsonl")]
    args += ["--stats", str(d / "stats.jsonl"), "--dead-letter", str(d / "dlq.jsonl")]
    assert main([*args, "--offload", str(d / "stash"), "--jobs", str(jobs), "--quiet"]) == 0
    stash = d / "stash"  # one shard folder per key prefix
    files = {p.name: p.read_bytes() for p in stash.rglob("*") if p.is_file()}
    files["out"] = (d / "out.jsonl").read_bytes()
    files["dlq"] = (d / "dlq.jsonl").read_bytes()
    files["stats"] = untimed((d / "stats.jsonl").read_bytes())
    return files


@pytest.mark.parametrize("mode", ["lossless", "standard"])
def test_jobs_give_the_bytes_of_one_core(tmp_path: Path, small_chunks: None, mode: str) -> None:
    one, two = run(tmp_path, 1, mode), run(tmp_path, 2, mode)
    assert one == two
    if mode == "standard":  # stash files were compared too
        assert len(one) > 3, sorted(one)
    ids = [json.loads(x)["id"] for x in two["out"].splitlines()]
    assert ids == sorted(ids, key=lambda x: int(x[1:])) and len(ids) == 108  # 7 bad lines, 5 blank
    letters = [json.loads(x) for x in two["dlq"].splitlines()]
    assert [x["source"]["line"] for x in letters] == [i + 1 for i in range(120) if i % 17 == 5]


def test_memory_is_bounded_and_every_line_comes_back(small_chunks: None) -> None:
    pipeline = Pipeline(Settings.from_env(mode="lossless"))
    lines = corpus().splitlines(keepends=True)
    read = 0

    def source() -> Iterator[bytes]:
        nonlocal read
        for line in lines:
            read += 1
            yield line

    results = compress_parallel(source(), pipeline, None, timings=False, jobs=2)
    first = next(results)
    # at most 2 * jobs chunks in flight (plus the one being cut) when the first result comes
    assert read <= (2 * 2 + 1) * parallel.CHUNK_LINES
    rest = [first, *results]
    assert [r.line_no for r in rest] == [i + 1 for i in range(120) if i % 23 != 7 or i % 17 == 5]
    assert read == len(lines)


def test_one_chunk_runs_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_pool(*args: object, **kwargs: object) -> None:
        raise AssertionError("a pool was started for one chunk")

    monkeypatch.setattr(parallel, "ProcessPoolExecutor", no_pool)
    pipeline = Pipeline(Settings.from_env(mode="lossless"))
    lines = corpus().splitlines(keepends=True)[:5]
    assert len(list(compress_parallel(lines, pipeline, None, jobs=2))) == 5


def test_jobs_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as info:
        main(["compress", "--jobs", "0", "-i", str(tmp_path / "x")])
    assert info.value.code == 2


def test_progress_on_stdin_shows_rate_and_eta(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_bytes(corpus())
    cmd = [sys.executable, "-m", "workers.cli", "compress", "--mode", "off", "--quiet"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    with src.open("rb") as stdin:  # stdin redirected from a file: its size is known
        done = subprocess.run(
            [*cmd, "--progress", "always", "-o", os.devnull],
            stdin=stdin,
            capture_output=True,
            timeout=120,
            env=env,
        )
    err = done.stderr.decode()
    assert "100.0%" in err and "MB/s" in err and "ETA" in err, err
    with src.open("rb") as packed:  # a pipe: no size, but bytes read and the rate
        cat = subprocess.Popen(["cat"], stdin=packed, stdout=subprocess.PIPE)
        done = subprocess.run(
            [*cmd, "--progress", "always", "-o", os.devnull],
            stdin=cat.stdout,
            capture_output=True,
            timeout=120,
            env=env,
        )
        cat.wait()
    err = done.stderr.decode()
    assert re.search(r"\d+ records [0-9.]+ MB [0-9.]+ MB/s", err), err


def test_bench_jobs_prints_one_core_and_n_jobs_in_the_same_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    sample = Path(__file__).resolve().parents[2] / "samples" / "sample.jsonl"
    args = ["bench", "-i", str(sample), "--modes", "lossless", "--repeat", "1", "--no-families"]
    assert main([*args, "--jobs", "2", "--jobs-mb", "1"]) == 0
    out = capsys.readouterr().out
    section = out.split("multi-core:", 1)[1].splitlines()
    assert section[1].split()[:4] == ["mode", "1", "core", "MB/s"] and "2 jobs MB/s" in section[1]
    row = section[2].split()
    assert row[0] == "lossless" and float(row[1]) > 0 and float(row[2]) > 0
    assert row[3].endswith("x") and float(row[3][:-1]) > 0
    assert float(row[4]) > 0 and len(row) == 9  # CPU x, machine x, the three load averages
    assert row[5].endswith("x") and 0 < float(row[5][:-1]) <= 4  # 2 processes: at most ~2x
