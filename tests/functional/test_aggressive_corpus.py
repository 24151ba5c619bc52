"""Aggressive mode on every corpus: savings with every fact visible, budgets, throughput.

Until every standard-mode engine is built, ``Settings(mode="aggressive")``
cannot be constructed (``UnknownEngine``); the tests then run the chain of
the aggressive mode with the engines that exist, in the mode's order, and
say which are missing.

"Visible" means readable in the output message without the offload store:
verbatim in the message; or, for error lines, a line of the same shape
(the gate counts lines that differ only in numbers as one fact); or in the
lossless re-encodings the model reads in place (a ``[[json-min:...]]`` or
``[[json-table:...]]`` block decodes without the store; JSON written
compactly holds the line's tokens once whitespace is ignored), or in the
message a ``[[dup:...]]`` back-reference names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.conftest import Corpus
from workers.core.catalog import AGGRESSIVE
from workers.core.settings import Settings
from workers.engines import UnknownEngine, engine_class
from workers.engines.base import Engine
from workers.fidelity.facts import critical_lines
from workers.messages import RESERVED_KEY, parse_record
from workers.pipeline import visibility as visible
from workers.pipeline.runner import Outcome, Pipeline
from workers.testing import expanded_record

OURS = ("filler", "relevance", "aging", "budget")
# per corpus; measured: generated 82.4% saved, 37 multi-turn sessions, 6 records changed after
# the cached prefix (its one-command chats end there); shared 81.1%, 54, 43
TARGET_SAVED_PCT = {"generated": 75.0, "shared": 70.0}
MULTI_TURN_SESSIONS = {"generated": 30, "shared": 50}
COMPRESSED_AFTER_PREFIX = {"generated": 3, "shared": 40}
TARGET_MB_S = 4.0
BUDGET_SHARE = 0.3


def aggressive_chain() -> tuple[Pipeline, list[str]]:
    """The aggressive pipeline, and the engines of the mode that are not built yet."""
    try:
        return Pipeline(Settings(mode="aggressive")), []
    except UnknownEngine:
        pass
    engines: list[Engine] = []
    missing: list[str] = []
    for name in AGGRESSIVE:
        try:
            engines.append(engine_class(name)())
        except UnknownEngine:
            missing.append(name)
    return Pipeline(Settings(mode="off"), engines={"aggressive": engines}), missing


def as_aggressive(line: bytes, **extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = orjson.loads(line)
    data["mode"] = "aggressive"
    data.update(extra)
    return data


def plain(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != RESERVED_KEY}


def lost_facts(data: dict[str, Any], outcome: Outcome) -> list[tuple[str, str, str]]:
    """(unit, kind, line) of every critical tool-output line that is no longer visible."""
    return visible.lost_facts(data, outcome.record)


@pytest.fixture(scope="module")
def chain() -> tuple[Pipeline, list[str]]:
    return aggressive_chain()


@pytest.fixture(scope="module")
def corpus_runs(
    chain: tuple[Pipeline, list[str]], corpus_lines: list[bytes]
) -> list[tuple[dict[str, Any], Outcome]]:
    pipeline, _ = chain
    runs = []
    for line in corpus_lines:
        data = as_aggressive(line)
        runs.append((data, pipeline.run_raw(data)))
    return runs


@pytest.mark.slow
def test_aggressive_saves_70_percent_with_every_critical_fact_visible(
    chain: tuple[Pipeline, list[str]],
    corpus_runs: list[tuple[dict[str, Any], Outcome]],
    corpus: Corpus,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, missing = chain
    before = sum(o.stats["tokens_before"] for _, o in corpus_runs)
    after = sum(o.stats["tokens_after"] for _, o in corpus_runs)
    saved = 100.0 * (before - after) / before
    facts = sum(
        len(critical_lines(u.text, "tool_result", u.command))
        for data, _ in corpus_runs
        for u in parse_record(data).units
        if u.kind == "tool_result"
    )
    lost = [(data["id"], *item) for data, o in corpus_runs for item in lost_facts(data, o)]
    ours_rejected = [r.as_dict() for _, o in corpus_runs for r in o.rejections if r.engine in OURS]
    by_engine: dict[str, int] = {}
    for _, o in corpus_runs:
        for s in o.engine_stats:
            by_engine[s.engine] = by_engine.get(s.engine, 0) + s.tokens_before - s.tokens_after
    with capsys.disabled():
        print(
            f"\naggressive on the {corpus.name} corpus ({len(corpus_runs)} records"
            f"{', missing engines: ' + ', '.join(missing) if missing else ''}): "
            f"{before} -> {after} tokens, {saved:.2f}% saved; "
            f"{facts - len(lost)}/{facts} critical facts visible; saved per engine: {by_engine}"
        )
    assert not ours_rejected, ours_rejected[:3]
    assert not lost, lost[:10]
    assert saved >= TARGET_SAVED_PCT[corpus.name]


@pytest.mark.slow
def test_aggressive_output_expands_to_the_input(
    corpus_lines: list[bytes],
) -> None:
    """Our engines are reversible: with their stash, expand gives the input back exactly.

    The chain is the aggressive engines of this issue (filler in its
    recoverable form) over the records as they come, with a 30% budget.
    """
    from workers.core.tokens import TokenCounter
    from workers.engines.aging import AgingEngine
    from workers.engines.budget import BudgetEngine
    from workers.engines.filler import FillerEngine
    from workers.engines.relevance import RelevanceEngine

    tokens = TokenCounter()
    engines: list[Engine] = [
        FillerEngine(recoverable=True),
        RelevanceEngine(),
        AgingEngine(),
        BudgetEngine(),
    ]
    pipeline = Pipeline(Settings(mode="off"), tokens=tokens, engines={"aggressive": engines})
    for line in corpus_lines:
        data = as_aggressive(line)
        total = sum(tokens.count(u.text) for u in parse_record(data).units)
        data["budget_tokens"] = int(BUDGET_SHARE * total)
        outcome = pipeline.run_raw(data)
        assert outcome.rejections == [], [r.as_dict() for r in outcome.rejections][:2]
        assert expanded_record(outcome) == data, data["id"]


def _secrets_redacted(record: Any) -> Any:
    """The record with every secret redacted in every string: the one allowance of the
    round trip (the store keeps stashed text redacted, so a secret in a stashed line comes
    back as ``[REDACTED:kind]``)."""
    from workers.core.redact import redact

    if isinstance(record, str):
        return redact(record)
    if isinstance(record, list):
        return [_secrets_redacted(v) for v in record]
    if isinstance(record, dict):
        return {k: _secrets_redacted(v) for k, v in record.items()}
    return record


@pytest.mark.slow
def test_aggressive_mode_expands_to_every_record_exactly(
    tmp_path: Path, corpus: Corpus, capsys: pytest.CaptureFixture[str]
) -> None:
    """``ctxpress compress --mode aggressive --offload DIR`` then ``ctxpress expand
    --offload DIR``: every record comes back exactly, whitespace included (no normalisation
    allowance, unlike standard mode); only a secret inside a stashed span comes back
    redacted."""
    from workers.cli import main

    out, restored, stash = (tmp_path / n for n in ("c.jsonl", "r.jsonl", "off"))
    args = ["compress", "--mode", "aggressive", "-i", str(corpus.path), "-o", str(out)]
    assert main([*args, "--offload", str(stash), "--quiet"]) == 0
    assert main(["expand", "--offload", str(stash), "-i", str(out), "-o", str(restored)]) == 0
    inputs = [orjson.loads(line) for line in corpus.lines()]
    outputs = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    back = [orjson.loads(line) for line in restored.read_bytes().splitlines()]
    assert len(back) == len(inputs) >= 50
    changed = sum(1 for o in outputs if o["compression"].get("changed"))
    exact = sum(1 for a, b in zip(inputs, back, strict=True) if a == b)
    by_secret = [
        a["id"]
        for a, b in zip(inputs, back, strict=True)
        if a != b and _secrets_redacted(a) == _secrets_redacted(b)
    ]
    with capsys.disabled():
        print(
            f"\naggressive expand on the {corpus.name} corpus: {exact}/{len(inputs)} records "
            f"exact ({changed} changed by compress), {len(by_secret)} differ only by a "
            f"redacted secret {by_secret}"
        )
    assert changed > len(inputs) // 2  # the round trip is over compressed records
    differ = [a["id"] for a, b in zip(inputs, back, strict=True) if a != b]
    assert sorted(differ) == sorted(by_secret)
    assert len(by_secret) <= 1  # public-045's Devise secret_key literal, on the shared corpus


@pytest.mark.slow
def test_budget_of_30_percent_is_met_or_the_floor_is_reported(
    chain: tuple[Pipeline, list[str]],
    corpus_lines: list[bytes],
    corpus: Corpus,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pipeline, _ = chain
    met = missed = 0
    sessions = 0
    notes: list[str] = []
    for line in corpus_lines:
        data = as_aggressive(line)
        units = parse_record(data).units
        if sum(1 for u in units if u.role in ("assistant", "tool")) < 2:
            continue  # not a multi-turn session
        sessions += 1
        total = sum(pipeline.tokens.count(u.text) for u in units)
        budget = int(BUDGET_SHARE * total)
        data["budget_tokens"] = budget
        outcome = pipeline.run_raw(data)
        stats = next(s for s in outcome.engine_stats if s.engine == "budget")
        details = stats.details
        after = outcome.stats["tokens_after"]
        assert details["budget_tokens"] == budget
        assert details["tokens_after"] == after, (data["id"], details, after)
        if after <= budget:
            assert details["budget_met"] is True
            met += 1
        else:
            assert details["budget_met"] is False, data["id"]
            assert details["missed_by"] == after - budget
            assert "protected floor" in details["floor_reason"]
            missed += 1
            notes.append(f"{data['id']}: {after}/{budget}")
        assert not lost_facts(data, outcome), data["id"]
    with capsys.disabled():
        print(
            f"\nbudget {BUDGET_SHARE:.0%} on {sessions} multi-turn sessions of the {corpus.name} "
            f"corpus: {met} met, "
            f"{missed} at the protected floor {notes[:5]}"
        )
    assert sessions >= MULTI_TURN_SESSIONS[corpus.name]


@pytest.mark.slow
def test_cached_prefix_never_changes_in_aggressive_mode(
    chain: tuple[Pipeline, list[str]], corpus_lines: list[bytes], corpus: Corpus
) -> None:
    """``cached_prefix_messages`` (OpenAI) and a ``cache_control`` breakpoint (Anthropic)."""
    pipeline, _ = chain
    prefix = 4
    compressed_after_prefix = 0
    for line in corpus_lines:
        data = as_aggressive(line)
        if len(data.get("messages", ())) < prefix:
            continue  # a single tool output
        if data.get("format") == "anthropic":
            message = data["messages"][prefix - 1]
            content = message["content"]
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            message["content"] = [{**content[0], "cache_control": {"type": "ephemeral"}}]
            message["content"] += content[1:]
        else:
            data["cached_prefix_messages"] = prefix
        outcome = pipeline.run_raw(data)
        for i in range(prefix):
            assert outcome.record["messages"][i] == data["messages"][i], (data["id"], i)
        compressed_after_prefix += outcome.record["messages"][prefix:] != data["messages"][prefix:]
    print(
        f"\n{compressed_after_prefix} records of the {corpus.name} corpus changed after the prefix"
    )
    # the rest of the records is still compressed
    assert compressed_after_prefix > COMPRESSED_AFTER_PREFIX[corpus.name]
