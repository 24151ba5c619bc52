"""Every true secret of the labelled set: never in the offload store nor in a dead letter."""

from __future__ import annotations

from pathlib import Path

import orjson

from tests.support.secrets_set import SECRETS, log_holding
from workers.cli import main


def test_no_true_secret_reaches_the_store_or_the_dead_letters(tmp_path: Path) -> None:
    lines = []
    for n, (_, text, _) in enumerate(SECRETS):
        tool = {
            "id": f"t{n}",
            "kind": "tool_output",
            "mode": "standard",
            "content": log_holding(text),
        }
        lines.append(orjson.dumps(tool))
        lines.append(b'{"id": "broken", "note": ' + orjson.dumps(text) + b", ")  # not JSON
    src, out, dlq, st = (tmp_path / n for n in ("in.jsonl", "out.jsonl", "dlq.jsonl", "st"))
    src.write_bytes(b"\n".join(lines) + b"\n")
    args = ["compress", "-i", str(src), "-o", str(out), "--dead-letter", str(dlq)]
    assert main([*args, "--offload", str(st), "--quiet"]) == 0
    stored = b"".join(p.read_bytes() for p in st.rglob("*") if p.is_file())
    assert len(stored) > 100_000  # the logs were stashed
    letters = dlq.read_bytes()
    assert letters.count(b"\n") >= len(SECRETS)
    leaked = []
    for kind, _, secret in SECRETS:
        lines = [x for x in secret.splitlines() if not x.startswith("-----")]
        # a key block's body lines: not one in the store (an engine may cut a block so
        # that a lone line is all a stash holds: the record's own text says it is a
        # secret), none in a dead letter
        pieces = [x for x in lines if len(x) >= 16] or lines
        if any(p.encode() in stored for p in pieces):
            leaked.append((kind, secret, "store"))
        if any(orjson.dumps(x)[1:-1] in letters for x in lines):
            leaked.append((kind, secret, "dead letter"))
    assert leaked == []
