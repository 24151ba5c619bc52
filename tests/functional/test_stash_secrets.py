"""The offload store holds no secret, and a stash file's name is not a hash of the unredacted text."""

from __future__ import annotations

import hashlib
from pathlib import Path

import orjson

from workers.cli import main
from workers.core.offload import KEY_HEX, stash_key
from workers.core.redact import redact


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:KEY_HEX]


def test_the_key_is_the_hash_of_what_is_stored() -> None:
    text = "connecting\npassword=hunter2x\ndone"
    assert stash_key(text) == _sha(redact(text))
    assert stash_key(text) != _sha(text)  # no oracle: guessing hunter2x does not give the key
    plain = "no secret here\n" * 3
    assert stash_key(plain) == _sha(plain)


def test_store_files_are_named_by_their_content_and_expand_restores(tmp_path: Path) -> None:
    log = "\n".join(
        f"2025-01-01 12:00:{i % 60:02d} INFO request {i} handled in {i * 7 % 900} ms "
        f"password=hunter{i}x"
        for i in range(300)
    )
    record = {"id": "r1", "kind": "tool_output", "mode": "standard", "content": log + "\n"}
    src, out, st = tmp_path / "in.jsonl", tmp_path / "out.jsonl", tmp_path / "st"
    src.write_bytes(orjson.dumps(record) + b"\n")
    assert main(["compress", "-i", str(src), "-o", str(out), "--offload", str(st), "--quiet"]) == 0
    files = [p for p in st.rglob("*") if p.is_file()]
    assert files
    for path in files:
        body = path.read_text()
        assert path.name == _sha(body)
        assert "hunter" not in body
    expanded = tmp_path / "exp.jsonl"
    assert main(["expand", "--offload", str(st), "-i", str(out), "-o", str(expanded)]) == 0
    content = orjson.loads(expanded.read_bytes())["content"]
    # every line is back, its secret redacted (the store never had it)
    assert content.count("\n") == log.count("\n") + 1
    assert content.count("password=[REDACTED:kv_secret]") >= 290
