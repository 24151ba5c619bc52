"""Negation and modality: no aggressive engine may change a sentence's polarity.

Each sentence is embedded in the older turns of a conversation (in a user
message and an assistant message, between lines of chatter that the latest
request is about), then run through every aggressive engine on its own and
through the four together with a tight budget.  A sentence must come out
verbatim and visible in every message that had it, or the message must be
left exactly as it was.
"""

from __future__ import annotations

from typing import Any

import pytest

from workers.core.settings import Settings
from workers.core.tokens import TokenCounter
from workers.engines._prose import language_pack
from workers.engines.aging import AgingEngine
from workers.engines.base import Engine
from workers.engines.budget import BudgetEngine
from workers.engines.filler import FillerEngine, filler_text
from workers.engines.relevance import RelevanceEngine
from workers.messages import parse_record
from workers.pipeline.runner import Pipeline
from workers.testing import openai_record

SENTENCES = [
    "We must never deploy on Friday.",
    "Do not delete the production database.",
    "The cache is not thread-safe.",
    "No migrations run on startup.",
    "You should pin the numpy version.",
    "It might be a race in the scheduler.",
    "Restart the worker unless the queue is empty.",
    "All tests pass except the flaky network test.",
    "The API should not return null for empty lists.",
    "This probably fails on Windows.",
    "Never commit secrets to the repository.",
    "The fix may break older clients.",
    "We cannot upgrade until the vendor ships a patch.",
    "The service won't start without the config file.",
    "Nobody has reviewed the migration yet.",
    "None of the retries succeeded.",
    "Nothing in the logs explains the crash.",
    "Neither the staging nor the production cluster is affected.",
    "The build doesn't use the lockfile.",
    "I wasn't able to reproduce the bug.",
    "They didn't run the integration suite.",
    "It isn't safe to run this twice.",
    "Users shouldn't see the admin page.",
    "The job couldn't acquire the lock.",
    "You mustn't rotate the keys during a deploy.",
    "The flag hasn't been removed.",
    "We haven't decided on the schema.",
    "The old endpoint could still be in use.",
    "It would be better to batch the writes.",
    "Perhaps the timeout is too short.",
    "Maybe the DNS entry is stale.",
    "The index is likely corrupted.",
    "It is unlikely that the disk is full.",
    "Always run the linter before pushing.",
    "Only admins can delete projects.",
    "The token is required for every request.",
    "Skip the cache if the request is authenticated.",
    "Retry the upload only when the checksum matches.",
    "Keep the old endpoint until the clients migrate.",
    "The queue can hold at most ten thousand messages.",
    "Backups will not run on weekends.",
    "The importer ignores rows without an id.",
    "Do not retry on HTTP 4xx responses.",
    "The release shall include the changelog.",
    "Requests ought to be idempotent.",
    "Basically, we must not ship this build.",
    "Actually, the cache should be cleared first.",
    "I think that the lock is never released.",
    "As you can see, the test does not fail anymore.",
    "Honestly, it might not be worth the effort.",
    "The patch applies to all branches except main.",
    "Logs are kept for thirty days unless legal asks otherwise.",
    "The script fails if the directory does not exist.",
    "Under no circumstances should the key leave the vault.",
    "The server is not unreachable, just slow.",
    "It seems the proxy strips the header.",
    "You need to restart the daemon after the change.",
    "We have to keep the legacy format for now.",
    "There is hardly any free memory left.",
    "The daemon rarely restarts on its own.",
    "Sure! You must rebase before merging.",
    "In order to ship, we must not skip the review.",
]

CHATTER_BEFORE = (
    "The weather at the office was lovely and the lunch plans for the team went well.\n"
    "Everyone talked about the office lunch, the weather and the weekend plans at length.\n"
)
CHATTER_AFTER = (
    "\nAfter lunch the weather turned and the office got quiet for the rest of the day.\n"
    "The lunch place near the office was busy because of the nice weather outside."
)
QUERY = "Summarise the weather and the office lunch chatter for me."


def conversation(sentence: str) -> dict[str, Any]:
    body = CHATTER_BEFORE + sentence + CHATTER_AFTER
    turns: list[tuple[str, str]] = [("user", body), ("assistant", body)]
    for i in range(5):
        turns += [("user", f"Quick question {i} about lunch?"), ("assistant", f"Noted {i}.")]
    turns.append(("user", QUERY))
    data = openai_record("p", *turns)
    data["mode"] = "aggressive"
    return data


def budget_for(data: dict[str, Any]) -> int:
    tokens = TokenCounter()
    return int(0.3 * sum(tokens.count(u.text) for u in parse_record(data).units))


CHAINS: dict[str, list[type[Engine]]] = {
    "filler": [FillerEngine],
    "relevance": [RelevanceEngine],
    "aging": [AgingEngine],
    "budget": [BudgetEngine],
    "all": [FillerEngine, RelevanceEngine, AgingEngine, BudgetEngine],
}


def test_the_set_is_large_and_covers_every_kind() -> None:
    assert len(SENTENCES) >= 50
    assert len(set(SENTENCES)) == len(SENTENCES)
    joined = " ".join(SENTENCES).lower()
    for word in (
        "never",
        "not",
        "no ",
        "must not",
        "should",
        "might",
        "unless",
        "except",
        "probably",
        "may",
        "could",
        "would",
        "can",
        "n't",
    ):
        assert word in joined, word


@pytest.mark.parametrize("chain", list(CHAINS))
@pytest.mark.parametrize("sentence", SENTENCES)
def test_no_engine_changes_polarity(chain: str, sentence: str) -> None:
    data = conversation(sentence)
    data["budget_tokens"] = budget_for(data)
    engines = [cls() for cls in CHAINS[chain]]
    outcome = Pipeline(Settings(mode="off"), engines={"aggressive": engines}).run_raw(data)
    assert outcome.rejections == [], [r.as_dict() for r in outcome.rejections]
    for before, after in zip(data["messages"], outcome.record["messages"], strict=True):
        original = before.get("content")
        if not isinstance(original, str) or sentence not in original:
            continue
        text = after["content"]
        assert text == original or sentence in text.split("\n"), (chain, sentence, text)


def test_the_engines_had_work_to_do() -> None:
    """The chatter around the sentences does get compressed (the test is not vacuous)."""
    data = conversation(SENTENCES[0])
    data["budget_tokens"] = budget_for(data)
    engines = [cls() for cls in CHAINS["all"]]
    outcome = Pipeline(Settings(mode="off"), engines={"aggressive": engines}).run_raw(data)
    assert outcome.stats["tokens_after"] < outcome.stats["tokens_before"]
    assert "<<cx:" in outcome.record["messages"][1]["content"]


@pytest.mark.parametrize("sentence", SENTENCES)
def test_filler_leaves_every_sentence_alone_even_in_recent_turns(sentence: str) -> None:
    pack = language_pack("en")
    assert pack.has_polarity(sentence)
    assert filler_text(sentence, pack) == sentence
    assert filler_text(f"Sure! Basically, {sentence}", pack).endswith(sentence)
