"""Aggressive and standard mode are exactly reversible: every engine of their chains stashes
what it drops.

Generated conversations that give each aggressive engine work (filler-heavy prose lines,
old turns the query does not touch, aged tool outputs, a token budget) and carry the
whitespace standard mode normalises (trailing blanks, blank-line runs, CRLF): with the
record's own stash, ``expand`` gives every record back exactly.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from workers.core.settings import Settings
from workers.core.tokens import TokenCounter
from workers.engines.filler import FillerEngine
from workers.messages import parse_record
from workers.pipeline.runner import Pipeline
from workers.testing import expanded_record, openai_record

FILLER_LINE = (
    "Sure! Basically, as you can see, the thing is that the retry loop was essentially, "
    "honestly and frankly spinning on the old lock in order to wait for the other worker, "
    "and I think that it basically just kept spinning in order to keep the queue alive. "
    "I hope this helps!"
)
PROSE = [
    "The deploy pipeline builds the image, pushes it and then rolls the pods one at a time.",
    "We talked about the cache layer and how the eviction policy interacts with the TTL.",
    "The dashboard shows the latency of the checkout service per region and per day.",
    "Our team moved the nightly report to a separate cron job on the batch cluster.",
    "The billing export runs after midnight and writes one parquet file per tenant.",
]
TOOL_LINES = [
    "Proto Recv-Q Send-Q Local Address           Foreign Address         State       ",
    "tcp        0      0 localhost:smtp          0.0.0.0:*               LISTEN      ",
    "tcp6       0      0 [::]:ssh                [::]:*                  LISTEN      ",
    "udp        0      0 0.0.0.0:bootpc          0.0.0.0:*                           ",
]


def _prose(rng: random.Random) -> str:
    lines = [rng.choice([FILLER_LINE, *PROSE]) for _ in range(rng.randint(2, 8))]
    for k in range(len(lines)):
        if rng.random() < 0.3:
            lines[k] += " " * rng.randint(1, 4)  # trailing blanks
        if rng.random() < 0.2:
            lines[k] += "\n\n\n"  # a blank-line run
    text = "\n".join(lines)
    return text.replace("\n", "\r\n") if rng.random() < 0.1 else text


def _tool(rng: random.Random) -> str:
    rows = [rng.choice(TOOL_LINES[1:]) for _ in range(rng.randint(5, 40))]
    return "\n".join([TOOL_LINES[0], *rows, "", "", "", ""])


def generated_records(count: int, seed: int = 11) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    records = []
    for n in range(count):
        turns: list[tuple[str, str]] = []
        for _ in range(rng.randint(3, 7)):
            turns.append(("user", _prose(rng)))
            if rng.random() < 0.5:
                turns.append(("tool", _tool(rng)))
            turns.append(("assistant", _prose(rng)))
        turns.append(("user", "Why does the retry loop spin on the old lock?"))
        data = openai_record(f"exact-{n}", *turns, command="netstat -tulpen")
        data["mode"] = "aggressive"
        records.append(data)
    return records


@pytest.fixture(scope="module")
def pipeline() -> Pipeline:
    return Pipeline(Settings(mode="aggressive"))


def test_aggressive_filler_stashes_what_it_removes() -> None:
    """The filler engine of the aggressive chain is the recoverable one."""
    engine = Pipeline(Settings(mode="aggressive")).engines_for("aggressive")
    filler = next(e for e in engine if e.name == "filler")
    assert isinstance(filler, FillerEngine) and filler.recoverable
    assert "whitespace" not in [e.name for e in engine]  # its normalisation is not stashed


def test_standard_mode_expands_generated_conversations_exactly() -> None:
    # trailing blanks, blank-line runs and CRLF come back too (the whitespace engine, whose
    # normalisation was not stashed, is in no mode's chain)
    pipeline = Pipeline(Settings(mode="standard"))
    assert "whitespace" not in [e.name for e in pipeline.engines_for("standard")]
    changed = 0
    for data in generated_records(40, seed=5):
        data["mode"] = "standard"
        outcome = pipeline.run_raw(data)
        changed += outcome.record["messages"] != data["messages"]
        assert expanded_record(outcome) == data, data["id"]
    assert changed > 0


@pytest.mark.parametrize("budget_share", [None, 0.3])
def test_aggressive_mode_expands_generated_conversations_exactly(
    pipeline: Pipeline, budget_share: float | None
) -> None:
    tokens = TokenCounter()
    applied: dict[str, int] = {}
    records = generated_records(40)
    for data in records:
        if budget_share is not None:
            total = sum(tokens.count(u.text) for u in parse_record(data).units)
            data["budget_tokens"] = int(budget_share * total)
        outcome = pipeline.run_raw(data)
        for name in outcome.record["compression"]["engines_applied"]:
            applied[name] = applied.get(name, 0) + 1
        assert expanded_record(outcome) == data, data["id"]
    # every engine that drops text did so on some record
    for name in ("filler", "relevance", "aging", *(("budget",) if budget_share else ())):
        assert applied.get(name, 0) > 0, (name, applied)
