from __future__ import annotations

import time
from typing import Any

import pytest

from workers.core.settings import Settings
from workers.core.tokens import TokenCounter
from workers.engines.base import EngineContext
from workers.engines.budget import BudgetEngine
from workers.fidelity.facts import critical_lines
from workers.messages import parse_record
from workers.pipeline.runner import Pipeline
from workers.testing import expanded, expanded_record, openai_record

LOG = "\n".join(
    [
        f"[{i:04d}] compiling module_{i}.c with -O2 -Wall into build/obj/module_{i}.o"
        for i in range(300)
    ]
    + [
        "src/net.c:88:5: error: implicit declaration of function 'conect'",
        "make: *** [Makefile:12: all] Error 1",
    ]
)
NOTES = "\n".join(
    f"Note {i}: the build farm node {i} was rebooted during the maintenance window."
    for i in range(40)
)
CONSTRAINT = "You must never push directly to the release branch."


def session(budget: int | None = None) -> dict[str, Any]:
    data = openai_record(
        "r",
        ("user", "Build the project.\n" + CONSTRAINT),
        ("tool", LOG),
        ("assistant", NOTES),
        ("tool", LOG.replace("conect", "connnect")),
        ("assistant", "Two builds failed."),
        ("user", "Why did the build fail?"),
        command="make",
    )
    data["mode"] = "aggressive"
    if budget is not None:
        data["budget_tokens"] = budget
    return data


def run(data: dict[str, Any]) -> Any:
    outcome = Pipeline(Settings(mode="off"), engines={"aggressive": [BudgetEngine()]}).run_raw(data)
    assert outcome.rejections == [], [r.as_dict() for r in outcome.rejections]
    return outcome


def details(outcome: Any) -> dict[str, Any]:
    stats = outcome.stats["engines"][0]
    assert stats["engine"] == "budget"
    result: dict[str, Any] = stats["details"]
    return result


def test_without_a_budget_nothing_happens() -> None:
    outcome = run(session())
    assert outcome.stats["tokens_after"] == outcome.stats["tokens_before"]
    assert details(outcome) == {}


def test_budget_already_met_is_reported() -> None:
    outcome = run(session(budget=10**6))
    d = details(outcome)
    assert d["budget_met"] is True and d["missed_by"] == 0
    assert outcome.stats["tokens_after"] == outcome.stats["tokens_before"]


def test_budget_is_met_oldest_tool_output_first() -> None:
    data = session()
    before = run(data).stats["tokens_before"]
    budget = before - 1000
    outcome = run(session(budget))
    d = details(outcome)
    assert d["budget_met"] is True, d
    assert outcome.stats["tokens_after"] <= budget
    assert d["tokens_after"] == outcome.stats["tokens_after"]
    messages = outcome.record["messages"]
    first_tool, second_tool = (m["content"] for m in messages if m["role"] == "tool")
    assert "<<cx:" in first_tool  # oldest goes first
    assert second_tool == LOG.replace("conect", "connnect")  # not needed: untouched
    # not much more than needed was dropped
    assert outcome.stats["tokens_after"] > budget * 0.9
    assert expanded_record(outcome) == {k: v for k, v in session(budget).items()}


def test_unreachable_budget_stops_at_the_protected_floor_and_says_why() -> None:
    outcome = run(session(budget=50))
    d = details(outcome)
    assert d["budget_met"] is False
    assert d["missed_by"] == outcome.stats["tokens_after"] - 50 > 0
    assert "protected floor" in d["floor_reason"]
    messages = outcome.record["messages"]
    for message, original in zip(messages, session(50)["messages"], strict=True):
        text = message.get("content")
        if not isinstance(text, str):
            continue
        kind = "tool_result" if message["role"] == "tool" else "text"
        for _, line in critical_lines(original["content"], kind):
            assert line in text
    assert CONSTRAINT in messages[1]["content"]
    assert messages[0]["content"] == "You are helpful."  # system: frozen
    assert messages[-1]["content"] == "Why did the build fail?"  # latest user message
    assert expanded_record(outcome) == {k: v for k, v in session(50).items()}


def test_last_run_is_cut_to_what_is_needed() -> None:
    tokens = TokenCounter()
    units = parse_record(session()).units
    total = sum(tokens.count(u.text) for u in units)
    out = BudgetEngine().apply(
        units, EngineContext(tokens=tokens, budget_tokens=total - 300, latest_user_text="x")
    )
    after = sum(tokens.count(t) for t in out.texts)
    assert total - 300 - 60 <= after <= total - 300
    tool = next(i for i, u in enumerate(units) if u.kind == "tool_result")
    assert out.texts[tool].startswith("[0000] compiling module_0.c")  # head of the run stays
    assert expanded(out.texts[tool], out.stash) == units[tool].text


def test_record_budget_wins_over_the_constructor_budget() -> None:
    tokens = TokenCounter()
    units = parse_record(session()).units
    out = BudgetEngine(budget_tokens=200).apply(units, EngineContext(tokens=tokens))
    assert out.details["budget_tokens"] == 200
    ctx = EngineContext(tokens=tokens, budget_tokens=300)
    assert BudgetEngine(budget_tokens=200).apply(units, ctx).details["budget_tokens"] == 300
    assert "budget_tokens" not in BudgetEngine().apply(units, EngineContext(tokens=tokens)).details


@pytest.mark.slow
def test_hostile_input_is_linear() -> None:
    tokens = TokenCounter()
    huge = "\n".join(f"row {i} value {i * 7}" for i in range(200_000))
    data = openai_record("r", ("user", "go"), ("tool", huge), ("assistant", "ok"), ("user", "q"))
    units = parse_record(data).units
    started = time.perf_counter()
    out = BudgetEngine().apply(units, EngineContext(tokens=tokens, budget_tokens=1000))
    assert time.perf_counter() - started < 20
    assert out.details["budget_met"] is True
