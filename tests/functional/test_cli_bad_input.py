"""Bad input never crashes or hangs the batch CLI: each bad line is one dead letter with a reason."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from workers.cli import main


def write_lines(path: Path, lines: list[bytes]) -> None:
    path.write_bytes(b"\n".join(lines) + b"\n")


def run_compress(
    tmp_path: Path, lines: list[bytes], *extra: str
) -> tuple[list[dict[str, object]], list[dict[str, object]], int]:
    src, out, dlq = tmp_path / "in.jsonl", tmp_path / "out.jsonl", tmp_path / "dlq.jsonl"
    write_lines(src, lines)
    code = main(
        [
            "compress",
            "--mode",
            "off",
            "-i",
            str(src),
            "-o",
            str(out),
            "--dead-letter",
            str(dlq),
            "--quiet",
            *extra,
        ]
    )
    outs = [orjson.loads(x) for x in out.read_bytes().splitlines()]
    dead = [orjson.loads(x) for x in dlq.read_bytes().splitlines()]
    return outs, dead, code


def test_each_bad_line_is_one_dead_letter_with_a_reason(tmp_path: Path) -> None:
    good = json.dumps({"id": "ok", "messages": [{"role": "user", "content": "hi"}]}).encode()
    lines = [
        good,
        b'{"id": "broken", "messages": [',
        json.dumps({"id": "nomsg"}).encode(),
        json.dumps({"id": "num", "messages": [{"role": "user", "content": 42}]}).encode(),
        b"[" * 100_000 + b"]" * 100_000,
        b'"just a string"',
        good,
    ]
    outs, dead, code = run_compress(tmp_path, lines)
    assert code == 0
    assert [o["id"] for o in outs] == ["ok", "ok"]
    reasons = [d["reason"] for d in dead]
    assert len(dead) == 5
    assert "line 2: not valid JSON" in reasons[0]
    assert "line 3: record has no 'messages' list" in reasons[1] and dead[1]["record_id"] == "nomsg"
    assert (
        "line 4: message 0: 'content' must be a string" in reasons[2]
        and dead[2]["record_id"] == "num"
    )
    assert reasons[3] == "line 5: not valid JSON (JSON nested deeper than 1024 levels)"
    assert "must be a JSON object" in reasons[4]
    assert dead[0]["original_value"] == '{"id": "broken", "messages": ['


def test_a_50_mb_line_is_dead_lettered_not_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    huge = json.dumps(
        {"id": "huge", "messages": [{"role": "user", "content": "x" * (50 * 1024 * 1024)}]}
    ).encode()
    monkeypatch.setenv("CTXPRESS_MAX_RECORD_BYTES", str(16 * 1024 * 1024))
    outs, dead, _ = run_compress(tmp_path, [huge])
    assert outs == []
    assert dead[0]["reason"].startswith("line 1: record is 52,428,8")
    assert "raise CTXPRESS_MAX_RECORD_BYTES" in dead[0]["reason"]


def test_missing_input_file_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "compress",
            "--mode",
            "off",
            "-i",
            str(tmp_path / "nope.jsonl"),
            "-o",
            str(tmp_path / "o.jsonl"),
        ]
    )
    assert code == 2
    assert "does not exist; pass -i FILE" in capsys.readouterr().err


def test_blank_lines_are_passed_over_and_every_other_line_is_counted(tmp_path: Path) -> None:
    good = json.dumps({"id": "a", "kind": "tool_output", "command": "ls", "content": "x"})
    lines = [good.encode(), b"", b"   \t", b"{not json", good.replace('"a"', '"b"').encode()]
    outs, dead, code = run_compress(tmp_path, lines)
    assert code == 0
    assert [o["id"] for o in outs] == ["a", "b"]
    # the line numbers count the blank lines
    assert [d["source"] for d in dead] == [{"line": 4}]
