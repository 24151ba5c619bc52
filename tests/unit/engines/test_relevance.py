from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import pytest

from workers.core.settings import Settings
from workers.core.tokens import TokenCounter
from workers.engines.base import EngineContext
from workers.engines.relevance import RelevanceEngine
from workers.messages import parse_record
from workers.pipeline.runner import Pipeline
from workers.testing import expanded, expanded_record, openai_record

OLD_ASSISTANT = (
    "I looked at the deployment pipeline. The weather in the office was really nice today and "
    "the sun was shining through the windows all afternoon. Our team lunch was pizza and "
    "everyone enjoyed it a lot, especially the dessert that came after it. The kubernetes "
    "manifests live in deploy/k8s and the ingress uses nginx.\n"
    "We went to the park afterwards and played frisbee for a while with the whole team.\n"
    "Then we had coffee and talked about the upcoming holidays and the trips everyone has "
    "planned for the summer.\n"
    "\n"
    "The database migrations run before the kubernetes pods start.\n"
    "You must never run migrations by hand in production.\n"
    "Maybe the office plants need watering during the long summer holiday weeks as well."
)
QUERY = "How do the kubernetes ingress and nginx relate to migrations?"


def conversation(old_assistant: str = OLD_ASSISTANT, query: str = QUERY) -> dict[str, Any]:
    turns = [
        ("user", "Please review the deployment setup for the staging cluster."),
        ("assistant", old_assistant),
    ]
    for i in range(2):
        turns += [
            ("user", f"Question {i}: tell me about the logging setup please"),
            ("assistant", f"Logging goes to loki instance {i}."),
        ]
    turns.append(("user", query))
    data = openai_record("r", *turns)
    data["mode"] = "aggressive"
    return data


def run(data: dict[str, Any], engine: RelevanceEngine | None = None) -> Any:
    pipeline = Pipeline(Settings(mode="off"), engines={"aggressive": [engine or RelevanceEngine()]})
    return pipeline.run_raw(data)


def test_drops_irrelevant_sentences_keeps_relevant_and_protected_ones() -> None:
    data = conversation()
    outcome = run(data)
    assert outcome.rejections == []
    out = outcome.record["messages"][2]["content"]
    assert "The weather in the office" not in out
    assert "played frisbee" not in out
    assert "I looked at the deployment pipeline." in out  # first sentence: the topic
    assert "The kubernetes manifests live in deploy/k8s and the ingress uses nginx." in out
    assert "The database migrations run before the kubernetes pods start." in out
    assert "You must never run migrations by hand in production." in out  # constraint
    # a modal line ("Maybe ... need") is never dropped, whatever its score
    assert "Maybe the office plants need watering" in out
    assert "… 2 sentences omitted <<cx:" in out
    assert "… 2 lines omitted <<cx:" in out
    assert outcome.stats["tokens_after"] < outcome.stats["tokens_before"]


def test_line_structure_is_kept_and_expand_restores_exactly() -> None:
    data = conversation()
    outcome = run(data)
    before = data["messages"][2]["content"]
    after = outcome.record["messages"][2]["content"]
    assert after.count("\n") < before.count("\n")  # a run of lines became one marker line
    kept_lines = [line for line in after.split("\n") if "<<cx:" not in line]
    for line in kept_lines:
        assert line in before.split("\n")
    assert expanded_record(outcome) == {k: v for k, v in data.items() if k != "compression"}


def test_recent_turns_and_latest_user_message_are_untouched() -> None:
    data = conversation()
    data["messages"][-2]["content"] = OLD_ASSISTANT  # last assistant turn before the question
    outcome = run(data)
    assert outcome.record["messages"][-2]["content"] == OLD_ASSISTANT
    assert outcome.record["messages"][-1]["content"] == QUERY


def test_without_query_terms_nothing_changes() -> None:
    data = conversation(query="why?")
    outcome = run(data)
    assert outcome.record["messages"][2]["content"] == OLD_ASSISTANT
    assert outcome.stats["engines"][0]["details"] == {"skipped": "no query terms"}
    data = conversation(query="Any news on the quarterly budget?")
    outcome = run(data)
    assert outcome.record["messages"][2]["content"] == OLD_ASSISTANT
    assert outcome.stats["engines"][0]["details"] == {"skipped": "no shared terms"}


def test_custom_scorer_hook_replaces_idf() -> None:
    seen: list[int] = []

    def scorer(query: str, sentences: Sequence[str]) -> list[float]:
        seen.append(len(sentences))
        return [1.0 if "frisbee" in s else 0.0 for s in sentences]

    outcome = run(conversation(), RelevanceEngine(scorer=scorer))
    out = outcome.record["messages"][2]["content"]
    assert seen and "played frisbee" in out
    assert "The weather in the office" not in out


def test_frozen_units_are_untouched() -> None:
    data = conversation()
    data["cached_prefix_messages"] = 3
    outcome = run(data)
    assert outcome.record["messages"][2]["content"] == OLD_ASSISTANT


def test_code_paths_and_numbers_are_always_kept() -> None:
    text = (
        "I checked the setup. The nginx ingress config is unchanged since the migration. "
        "The old cron job ran at 03:15 every night on the old box. "
        "Lunch was pizza and everyone enjoyed the dessert that came after it a great deal. "
        "The coffee afterwards was strong and the conversation went on for quite a while. "
        "Run `make deploy` from /srv/app to ship it to https://example.org/deploy today.\n"
        "```bash\necho unrelated words that the query does not share at all\n```"
    )
    outcome = run(conversation(old_assistant=text))
    out = outcome.record["messages"][2]["content"]
    assert "The old cron job ran at 03:15 every night on the old box." in out
    assert "Run `make deploy` from /srv/app to ship it to https://example.org/deploy today." in out
    assert "```bash\necho unrelated words that the query does not share at all\n```" in out
    assert "Lunch was pizza" not in out


@pytest.mark.slow
def test_hostile_input_is_linear() -> None:
    tokens = TokenCounter()
    big = "\n".join(
        f"Sentence number {i} talks about weather and pizza and holidays. "
        "Another sentence talks about frisbee in the park for a long while today."
        for i in range(5000)
    )
    one_line = "Weather talk goes on and on here. " * 20000
    for text in (big, one_line):
        data = conversation(old_assistant=text)
        units = parse_record(data).units
        ctx = EngineContext(tokens=tokens, latest_user_text=QUERY)
        started = time.perf_counter()
        out = RelevanceEngine().apply(units, ctx)
        assert time.perf_counter() - started < 15
        assert expanded(out.texts[2], out.stash) == text
