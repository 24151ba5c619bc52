"""The batch CLI never fails quietly: a run that produced nothing exits non-zero and says why."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import re
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from workers.cli import main
from workers.cli._inputs import ArrayToLines
from workers.testing import anthropic_record

GOOD = {"id": "a", "messages": [{"role": "user", "content": "hello there"}]}


def compress(tmp_path: Path, data: bytes, *extra: str, name: str = "in.jsonl") -> int:
    src = tmp_path / name
    src.write_bytes(data)
    return main(
        [
            "compress",
            "--mode",
            "lossless",
            "-i",
            str(src),
            "-o",
            str(tmp_path / "out.jsonl"),
            *extra,
        ]
    )


def last_error(capsys: pytest.CaptureFixture[str]) -> str:
    lines = [x for x in capsys.readouterr().err.splitlines() if "error:" in x]
    assert len(lines) == 1, lines
    return lines[0]


def test_a_json_array_exits_1_and_names_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.dumps([GOOD, {**GOOD, "id": "b"}], indent=2).encode()
    assert compress(tmp_path, data) == 1
    err = last_error(capsys)
    assert "no record came out of" in err
    assert "the input looks like a JSON array, not JSONL: pass --input-format json-array" in err


def test_a_bzip2_file_exits_1_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = bz2.compress((json.dumps(GOOD) + "\n").encode())
    assert compress(tmp_path, data) == 1
    assert "the input is bzip2-compressed: decompress it first" in last_error(capsys)


def test_a_pretty_printed_document_exits_1_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert compress(tmp_path, json.dumps(GOOD, indent=2).encode()) == 1
    assert "one JSON document over several lines, not JSONL" in last_error(capsys)


def test_good_input_exits_0_and_an_empty_one_too(tmp_path: Path) -> None:
    assert compress(tmp_path, (json.dumps(GOOD) + "\n").encode(), "--quiet") == 0
    assert json.loads((tmp_path / "out.jsonl").read_bytes())["id"] == "a"
    assert compress(tmp_path, b"", "--quiet") == 0


def test_max_dead_letter_ratio_fails_above_the_threshold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = (json.dumps(GOOD) + "\n" + "not json\n" + json.dumps(GOOD) + "\n").encode()
    assert compress(tmp_path, data, "--quiet") == 0  # one record out: no threshold, no failure
    assert compress(tmp_path, data, "--quiet", "--max-dead-letter-ratio", "0.5") == 0
    capsys.readouterr()
    assert compress(tmp_path, data, "--quiet", "--max-dead-letter-ratio", "0.3") == 1
    err = last_error(capsys)
    assert "1 of 3 line(s) (33.3%) were dead letters, above --max-dead-letter-ratio 0.3" in err
    # the records that did come out are still written
    assert len((tmp_path / "out.jsonl").read_bytes().splitlines()) == 2


def test_max_dead_letter_ratio_must_be_a_share(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as info:
        compress(tmp_path, b"", "--max-dead-letter-ratio", "5")
    assert info.value.code == 2


# -- compressed input and output, JSON arrays ------------------------------------------------

RECORDS = [
    {"id": f"r{i}", "messages": [{"role": "user", "content": f"line {i} " + "word " * 30}]}
    for i in range(40)
]
JSONL = b"".join(json.dumps(r).encode() + b"\n" for r in RECORDS)


def untimed(data: bytes) -> bytes:
    """The output with its timings zeroed (they vary from run to run)."""
    return re.sub(rb'("(?:duration_ms|ms)":)[0-9.eE+-]+', rb"\g<1>0", data)


def plain_output(tmp_path: Path, data: bytes = JSONL) -> bytes:
    assert compress(tmp_path, data, "--quiet") == 0
    return untimed((tmp_path / "out.jsonl").read_bytes())


def output(tmp_path: Path) -> bytes:
    return untimed((tmp_path / "out.jsonl").read_bytes())


def test_gzip_and_zstd_input_read_like_plain_jsonl(tmp_path: Path) -> None:
    import zstandard

    want = plain_output(tmp_path)
    # named .gz, and named .jsonl: the magic bytes decide
    for name in ("in.jsonl.gz", "in.jsonl"):
        assert compress(tmp_path, gzip.compress(JSONL), "--quiet", name=name) == 0
        assert output(tmp_path) == want
    assert compress(tmp_path, zstandard.ZstdCompressor().compress(JSONL), "--quiet") == 0
    assert output(tmp_path) == want


def test_gz_and_zst_outputs_are_compressed_and_expand_reads_them(tmp_path: Path) -> None:
    import zstandard

    want = plain_output(tmp_path)
    src = tmp_path / "in.jsonl"
    for suffix, unpack in (
        (".gz", gzip.decompress),
        (".zst", lambda b: zstandard.ZstdDecompressor().stream_reader(b).read()),
    ):
        out = tmp_path / f"out.jsonl{suffix}"
        stats = tmp_path / f"stats.jsonl{suffix}"
        args = ["compress", "--mode", "lossless", "-i", str(src), "-o", str(out), "--quiet"]
        assert main([*args, "--stats", str(stats)]) == 0
        assert untimed(unpack(out.read_bytes())) == want
        assert len(unpack(stats.read_bytes()).splitlines()) == len(RECORDS)
        if suffix == ".gz":  # no name (flag FNAME) and no time stamp in the header
            assert out.read_bytes()[3] & 0x08 == 0 and out.read_bytes()[4:8] == bytes(4)
        back = tmp_path / f"back.jsonl{suffix}"
        assert main(["expand", "-i", str(out), "-o", str(back)]) == 0
        assert unpack(back.read_bytes()) == JSONL


def test_gzip_on_stdin_is_recognised_by_its_magic_bytes(tmp_path: Path) -> None:
    want = plain_output(tmp_path)
    packed = tmp_path / "packed"
    packed.write_bytes(gzip.compress(JSONL))
    cmd = [sys.executable, "-m", "workers.cli", "compress", "--mode", "lossless", "--quiet"]
    with packed.open("rb") as stdin:  # a pipe, not a file: no size, no seek
        cat = subprocess.Popen(["cat"], stdin=stdin, stdout=subprocess.PIPE)
        done = subprocess.run(cmd, stdin=cat.stdout, capture_output=True, timeout=120)
        cat.wait()
    assert done.returncode == 0, done.stderr
    assert untimed(done.stdout) == want


def test_a_corrupt_gzip_is_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = gzip.compress(JSONL)
    assert compress(tmp_path, data[: len(data) // 2], "--quiet") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "the gzip stream is corrupt or truncated" in err[0], err


def test_json_array_input_gives_the_records_of_its_elements(tmp_path: Path) -> None:
    compact = b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in RECORDS)
    want = plain_output(tmp_path, compact)
    for data in (json.dumps(RECORDS).encode(), json.dumps(RECORDS, indent=2).encode()):
        assert compress(tmp_path, data, "--quiet", "--input-format", "json-array") == 0
        assert output(tmp_path) == want
    # lexemes are kept as written
    raw = b'[ {"id": "n", "messages": [{"role": "user", "content": "x"}], "v": 1.50,'
    raw += b' "big": 123456789012345678901234567890} ]'
    assert compress(tmp_path, raw, "--quiet", "--input-format", "json-array") == 0
    out = (tmp_path / "out.jsonl").read_bytes()
    assert b'"v":1.50,"big":123456789012345678901234567890,' in out


def test_json_array_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert compress(tmp_path, JSONL, "--quiet", "--input-format", "json-array") == 2
    assert "is not a JSON array: found" in capsys.readouterr().err
    truncated = json.dumps(RECORDS).encode()[:-300]
    assert compress(tmp_path, truncated, "--quiet", "--input-format", "json-array") == 2
    assert "the JSON array ends inside element" in capsys.readouterr().err


@pytest.mark.slow  # runs a whole command over the corpus / a large input
def test_json_array_streams_in_bounded_memory() -> None:
    """A 64 MB array (and a 16 MB element in it) goes through with a few MB of Python memory."""
    element = b'{"id": "x", "messages": [{"role": "user", "content": "' + b"a" * 1000 + b'"}]}'
    big = b'{"id": "big", "content": "' + b"b" * (16 << 20) + b'"}'

    class Endless(io.RawIOBase):
        def __init__(self) -> None:
            self.sent = 0
            self.parts = iter([b"[", big, *([b",\n  " + element] * 48_000), b"]"])

        def readable(self) -> bool:
            return True

        def read(self, n: int = -1) -> bytes:
            part = next(self.parts, b"")
            self.sent += len(part)
            return part

    src = Endless()
    stream = io.BufferedReader(ArrayToLines(src, "test"), 1 << 20)
    tracemalloc.start()
    lines = 0
    while chunk := stream.read(1 << 20):
        lines += chunk.count(b"\n")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert lines == 48_001
    assert src.sent > 64 << 20
    assert peak < 40 << 20  # the 16 MB element came in as one part: about two copies of it


def test_an_anthropic_record_without_format_compresses_and_expands_byte_for_byte(
    tmp_path: Path,
) -> None:
    listing = "\n".join(f"src/module_{i}.py" for i in range(60))
    record = anthropic_record(
        "a", "be brief", ("user", "list"), ("tool", listing), ("tool", listing)
    )
    del record["format"]
    line = json.dumps(record).encode() + b"\n"
    assert compress(tmp_path, line, "--quiet", "--stats", str(tmp_path / "stats.jsonl")) == 0
    stats = json.loads((tmp_path / "stats.jsonl").read_bytes())
    assert stats["tokens_after"] < stats["tokens_before"]  # the tool results were read (dedup)
    back = tmp_path / "back.jsonl"
    assert main(["expand", "-i", str(tmp_path / "out.jsonl"), "-o", str(back)]) == 0
    assert back.read_bytes() == line


# -- deterministic output ----------------------------------------------------------------------

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "sample.jsonl"


@pytest.mark.parametrize("mode", ["lossless", "standard"])
def test_the_same_input_gives_the_same_output_bytes(tmp_path: Path, mode: str) -> None:
    outputs = []
    for run in range(2):
        d = tmp_path / str(run)
        d.mkdir()
        args = ["compress", "--mode", mode, "-i", str(SAMPLE), "-o", str(d / "out.jsonl.gz")]
        main([*args, "--stats", str(d / "stats.jsonl"), "--offload", str(d / "stash"), "--quiet"])
        outputs.append((d / "out.jsonl.gz").read_bytes())
        stats = [json.loads(x) for x in (d / "stats.jsonl").read_bytes().splitlines()]
        assert any(s["duration_ms"] > 0 for s in stats)  # the real timings are in the stats
    assert outputs[0] == outputs[1]
    records = [json.loads(x) for x in gzip.decompress(outputs[0]).splitlines()]
    assert records and all(r["compression"]["duration_ms"] == 0 for r in records)
    assert all(e["ms"] == 0 for r in records for e in r["compression"]["engines"])


def test_timings_brings_the_timings_back(tmp_path: Path) -> None:
    args = ["compress", "--mode", "lossless", "-i", str(SAMPLE), "-o", str(tmp_path / "o.jsonl")]
    assert main([*args, "--quiet", "--timings"]) == 0
    records = [json.loads(x) for x in (tmp_path / "o.jsonl").read_bytes().splitlines()]
    assert any(r["compression"]["duration_ms"] > 0 for r in records)


def test_all_dead_letters_quote_the_first_reason_and_where_the_rest_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = b"".join(
        json.dumps({**GOOD, "id": f"t{i}", "mode": "turbo"}).encode() + b"\n" for i in range(3)
    )
    letters = tmp_path / "dlq.jsonl"
    assert compress(tmp_path, data, "--dead-letter", str(letters)) == 1
    err = last_error(capsys)
    assert (
        "no record came out of 3 line(s): every line was a dead letter, the first because "
        "line 1: unknown mode 'turbo'; valid modes: off, lossless, standard, aggressive, auto"
        in err
    )
    assert err.endswith(f"(see {letters} for each)")
    assert len(letters.read_bytes().splitlines()) == 3
    assert compress(tmp_path, data) == 1
    assert last_error(capsys).endswith("(pass --dead-letter FILE to see each)")
