from __future__ import annotations

from workers.core.tokens import TokenCounter
from workers.engines.base import EngineContext
from workers.engines.dedup import DedupEngine, decode
from workers.messages import parse_record
from workers.testing import openai_record

BLOCK = "\n".join(f"    at com.example.Service.call{i}(Service.java:{10 + i})" for i in range(5))


def run(data: dict[str, object]) -> tuple[list[str], dict[str, str]]:
    units = parse_record(data).units
    out = DedupEngine().apply(units, EngineContext(tokens=TokenCounter()))
    return out.texts, {u.uid: u.text for u in units}


def test_cross_message_block_becomes_back_reference_and_decodes() -> None:
    data = openai_record(
        "r", ("user", "first"), ("tool", "head\n\n" + BLOCK), ("tool", BLOCK + "\n\ntail")
    )
    texts, originals = run(data)
    assert texts[2] == "head\n\n" + BLOCK  # first copy stays
    assert texts[3].startswith(
        f"[[dup:v1 src=m3 at=6 len={len(BLOCK)} | same 5 lines as message 3: "
    )
    assert texts[3].endswith("]]\n\ntail")
    assert decode(texts[3], originals) == BLOCK + "\n\ntail"


def test_same_message_repeat_uses_self() -> None:
    data = openai_record("r", ("tool", BLOCK + "\n\nmid\n\n" + BLOCK + "\n\n" + BLOCK))
    texts, originals = run(data)
    assert texts[1].count("[[dup:v1 src=self at=0 ") == 2
    assert decode(texts[1], originals) == BLOCK + "\n\nmid\n\n" + BLOCK + "\n\n" + BLOCK


def test_short_blocks_are_left_alone() -> None:
    data = openai_record("r", ("tool", "a\nb\nc\n\na\nb\nc"))
    texts, _ = run(data)
    assert texts[1] == "a\nb\nc\n\na\nb\nc"
