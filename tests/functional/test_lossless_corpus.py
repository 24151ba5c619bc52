"""Lossless mode on the public corpus: byte-exact round trip and at least 15% saved."""

from __future__ import annotations

from pathlib import Path

import orjson

from tests.conftest import CORPUS
from workers.cli import main


def test_compress_then_expand_reproduces_the_corpus_byte_for_byte(tmp_path: Path) -> None:
    out, stats, restored = tmp_path / "c.jsonl", tmp_path / "s.jsonl", tmp_path / "r.jsonl"
    assert (
        main(
            [
                "compress",
                "--mode",
                "lossless",
                "-i",
                str(CORPUS),
                "-o",
                str(out),
                "--stats",
                str(stats),
                "--quiet",
            ]
        )
        == 0
    )
    assert main(["expand", "-i", str(out), "-o", str(restored)]) == 0
    assert restored.read_bytes() == CORPUS.read_bytes()

    rows = [orjson.loads(line) for line in stats.read_bytes().splitlines()]
    before = sum(r["tokens_before"] for r in rows)
    after = sum(r["tokens_after"] for r in rows)
    saved = 100.0 * (before - after) / before
    print(f"lossless on the corpus: {before} -> {after} tokens, {saved:.2f}% saved")
    assert len(rows) == 54
    assert saved >= 15.0
