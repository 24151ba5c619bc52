"""CTXPRESS_REDACT_OUTPUT: no credential in the compressed output, counted in the stats."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from workers.cli import main

KEY = "sk-proj-" + "Zq3vT9wXk2LmN8pR4sYb7cJd" * 3
RECORD = {
    "id": "r1",
    "messages": [
        {"role": "system", "content": f"use {KEY} for calls"},
        {"role": "user", "content": "connect with postgres://app:pw9x7@db/x please"},
        {"role": "assistant", "content": "self.password = password is fine"},
    ],
}


def _compress(tmp_path: Path, mode: str) -> tuple[bytes, dict[str, object]]:
    src, out, stats = tmp_path / "in.jsonl", tmp_path / "out.jsonl", tmp_path / "stats.jsonl"
    src.write_bytes(orjson.dumps(RECORD) + b"\n")
    args = ["compress", "--mode", mode, "-i", str(src), "-o", str(out), "--stats", str(stats)]
    assert main([*args, "--quiet"]) == 0
    return out.read_bytes(), orjson.loads(stats.read_bytes())


@pytest.mark.parametrize("mode", ["off", "lossless", "standard"])
def test_output_is_redacted_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    monkeypatch.setenv("CTXPRESS_REDACT_OUTPUT", "true")
    out, stats = _compress(tmp_path, mode)
    assert KEY.encode() not in out and b"pw9x7" not in out
    assert b"self.password = password" in out  # code is not a secret
    assert stats["secrets_redacted"] == 2


def test_output_is_untouched_by_default(tmp_path: Path) -> None:
    out, stats = _compress(tmp_path, "lossless")
    assert KEY.encode() in out
    assert "secrets_redacted" not in stats
