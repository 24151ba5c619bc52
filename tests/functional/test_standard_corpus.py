"""Standard mode on every corpus: a floor of tokens saved per corpus, every critical fact
visible, and ``ctxpress expand --offload DIR`` restores the corpus byte for byte (up to
secrets: the store keeps stashed text redacted, so a secret in a stashed line comes back as
``[REDACTED:kind]``)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.conftest import Corpus
from workers.cli import main
from workers.pipeline.visibility import count_facts, lost_facts

# tokens saved, percent, and critical facts, per corpus; measured: generated 55.1% and 2638
# facts, shared 70.5% and 1826
FLOOR_PCT = {"generated": 48.0, "shared": 50.0}
FACTS_FLOOR = {"generated": 2300, "shared": 1500}


def _normalised(record: dict[str, object]) -> bytes:
    """The record with secrets redacted in every string (nothing else may differ)."""
    from workers.core.redact import redact

    def walk(value: object) -> object:
        if isinstance(value, str):
            return redact(value)
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        return value

    return orjson.dumps(walk(record))


@pytest.mark.slow
def test_standard_mode_on_the_corpus(tmp_path: Path, corpus: Corpus) -> None:
    out, stats, restored, stash = (tmp_path / n for n in ("c.jsonl", "s.jsonl", "r.jsonl", "off"))
    args = ["compress", "--mode", "standard", "-i", str(corpus.path), "-o", str(out)]
    assert main([*args, "--stats", str(stats), "--offload", str(stash), "--quiet"]) == 0

    inputs = [orjson.loads(line) for line in corpus.lines()]
    outputs = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert len(outputs) == len(inputs) >= 50

    rows = [orjson.loads(line) for line in stats.read_bytes().splitlines()]
    before = sum(r["tokens_before"] for r in rows)
    after = sum(r["tokens_after"] for r in rows)
    saved = 100.0 * (before - after) / before

    facts = sum(count_facts(d) for d in inputs)
    lost = [f for d, o in zip(inputs, outputs, strict=True) for f in lost_facts(d, o)]
    print(
        f"standard on the {corpus.name} corpus: {before} -> {after} tokens, {saved:.2f}% saved; "
        f"{facts - len(lost)}/{facts} critical facts visible"
    )
    assert lost == []
    assert facts > FACTS_FLOOR[corpus.name]
    assert saved >= FLOOR_PCT[corpus.name]

    assert main(["expand", "--offload", str(stash), "-i", str(out), "-o", str(restored)]) == 0
    back = [orjson.loads(line) for line in restored.read_bytes().splitlines()]
    assert [_normalised(r) for r in back] == [_normalised(r) for r in inputs]
