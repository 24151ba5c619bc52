"""Hostile input through every mode: no crash, no hang, output within the never-worse rule.

Each case is a valid record whose *content* is adversarial (huge lines, many lines,
deep JSON text, marker look-alikes, odd unicode).  Each must finish in bounded time
and come back as one output record; lossless output must expand to the input exactly.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from workers.core.offload import MemoryStore
from workers.core.settings import Settings
from workers.pipeline.expand import expand_record
from workers.pipeline.runner import Pipeline
from workers.testing import openai_record

PIPELINES = {mode: Pipeline(Settings(mode=mode)) for mode in ("lossless", "standard", "aggressive")}


def _cases() -> dict[str, str]:
    deep = "[" * 50_000 + "]" * 50_000
    return {
        "one_5mb_line": "x" * 5_000_000,
        "one_2mb_json_line": json.dumps([{"id": i, "v": "a" * 20} for i in range(40_000)]),
        "200k_short_lines": "\n".join(f"ok {i}" for i in range(200_000)),
        "deep_json_text": deep,
        "deep_json_in_fence": "```json\n" + deep + "\n```",
        "marker_lookalikes": "\n".join(
            [
                '[[json-table:v1 columns=["a"] rows=1]]',
                "[1]",
                "[[/json-table]]",
                "<<cx:0123456789abcdef>>",
                "[[dup:v1 src=m1 at=0 len=5]]",
                "[[json-min:v1]]{}[[/json-min]]",
            ]
            * 200
        ),
        "unicode_mix": "\n".join(
            ["\u202e\u200b\ufeff é 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \u2028 \x00 \x1b[31mred\x1b[0m"] * 5000
        ),
        "many_fences": "```\n" * 20_000,
        "long_error_lines": "\n".join(f"ERROR {i}: " + "y" * 5000 for i in range(300)),
        "blank_flood": "\n" * 300_000 + "end",
        # tiktoken's regex overflows its stack on this one (a Rust panic)
        "whitespace_run_1m": "before" + " " * 1_000_000 + "after\nnext line",
    }


CASES = _cases()


@pytest.mark.parametrize("mode", ["lossless", "standard", "aggressive"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_tool_output(mode: str, case: str) -> None:
    text = CASES[case]
    record = openai_record(
        f"hostile-{case}", ("user", "what happened?"), ("tool", text), command="cat log.txt"
    )
    record["mode"] = mode
    started = time.perf_counter()
    outcome = PIPELINES[mode].run_raw(record)
    elapsed = time.perf_counter() - started
    assert elapsed < 60, f"{case} in {mode} took {elapsed:.1f}s"
    stats = outcome.stats
    assert stats["tokens_after"] <= stats["tokens_before"]
    store = MemoryStore()
    store.put_many(outcome.stash)
    wire: dict[str, Any] = json.loads(json.dumps(outcome.record))
    restored = expand_record(wire, store)
    if mode == "lossless":
        assert restored == record
    else:
        # lossy modes: everything comes back but the documented whitespace normalisation
        got = restored["messages"][3]["content"]
        assert [line.rstrip() for line in got.split("\n") if line.strip()] == [
            line.rstrip() for line in text.split("\n") if line.strip()
        ] or got == text


def test_a_tokenizer_panic_input_runs_with_the_tiktoken_backend_too() -> None:
    text = CASES["whitespace_run_1m"]
    record = openai_record("panic", ("user", "?"), ("tool", text), command="cat log.txt")
    outcome = Pipeline(Settings(mode="standard", token_backend="tiktoken")).run_raw(record)
    assert (
        outcome.stats["tokens_before"]
        == Pipeline(Settings(mode="off")).run_raw(record).stats["tokens_before"]
    )
    assert outcome.stats["tokens_after"] <= outcome.stats["tokens_before"]
    assert outcome.record["messages"][-1]["content"].endswith("next line")
