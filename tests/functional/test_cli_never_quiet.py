"""The batch CLI never fails quietly: a run that produced nothing exits non-zero and says why."""

from __future__ import annotations

import bz2
import json
from pathlib import Path

import pytest

from workers.cli import main

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
