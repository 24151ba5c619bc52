"""Critical facts of every output family: found by the rules, visible in standard and aggressive mode.

Each sample of :mod:`tests.support.family_samples` is a real-looking output of one
toolchain or report family.  The rules must find its facts, and a pipeline run
where the output is an *old* message of a conversation (so aging condenses it)
with a tight token budget (so budget stashes around it) must leave each fact
readable in the message.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.family_samples import ACCESS_LOG, GO_TEST, SAMPLES, TSC_PRETTY, Sample
from workers.core.settings import Settings
from workers.fidelity.facts import critical_lines, line_shape
from workers.markers import ansi
from workers.pipeline.runner import Outcome, Pipeline
from workers.testing import expanded_record, openai_record

PIPELINE = Pipeline(Settings(mode="standard"))
BUDGET = 200  # far below what the conversation needs: budget stashes all it may


def conversation(sample: Sample, mode: str) -> dict[str, Any]:
    """The sample as the first tool output of a session that moved on to other work."""
    data = openai_record(
        f"family-{sample.name}",
        ("user", "Build and test the project, then tell me what broke."),
        ("tool", sample.output),
        ("assistant", "I ran it; the output is above. Next I will look at the docs."),
        ("user", "Thanks. Now list the docs so we can write the release notes."),
        ("tool", "README.md\nCHANGES.md\n" + "\n".join(f"docs/page{i}.md" for i in range(60))),
        ("assistant", "Listed the docs."),
        ("user", "Summarise the release notes in three bullet points please."),
        command=sample.command,
    )
    data["mode"] = mode
    if mode == "aggressive":
        data["budget_tokens"] = BUDGET
    return data


def run(data: dict[str, Any]) -> Outcome:
    outcome = PIPELINE.run_raw(data)
    assert outcome.rejections == [], [r.as_dict() for r in outcome.rejections]
    if data["mode"] == "standard":  # reversible (aggressive's filler drops words for good)
        assert _trimmed(expanded_record(outcome)) == _trimmed(data)
    return outcome


def _trimmed(data: dict[str, Any]) -> list[str]:
    """Message texts without trailing blanks (the documented whitespace normalisation)."""
    return [
        "\n".join(line.rstrip() for line in str(m.get("content") or "").split("\n"))
        for m in data["messages"]
    ]


def engine_status(outcome: Outcome) -> dict[str, str]:
    return {e["engine"]: e["status"] for e in outcome.stats["engines"]}


IDS = [s.name for s in SAMPLES]


@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_the_rules_find_every_fact_of_the_family(sample: Sample) -> None:
    found = {line for _, line in critical_lines(sample.output, "tool_result", sample.command)}
    assert [fact for fact in sample.facts if fact not in found] == []


@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_every_fact_stays_visible_in_an_old_message(sample: Sample, mode: str) -> None:
    data = conversation(sample, mode)
    outcome = run(data)
    text = outcome.record["messages"][3]["content"]
    # a coloured fact is visible as its plain text (the ansi engine takes the colour out)
    assert [f for f in sample.facts if f not in text and ansi.strip(f)[0] not in text] == []
    if mode == "aggressive":
        status = engine_status(outcome)
        assert status["budget"] in ("applied", "unchanged")
        budget = next(e for e in outcome.stats["engines"] if e["engine"] == "budget")
        assert budget["details"]["budget_tokens"] == BUDGET
        if sample.output.count("\n") > 20:
            # The old output was condensed around its facts, not left whole.
            assert len(text) < len(sample.output) * 0.8


def test_aggressive_condenses_the_old_outputs() -> None:
    """Keeping facts must not mean keeping everything: the session still shrinks a lot."""
    before = after = 0
    for sample in SAMPLES:
        outcome = run(conversation(sample, "aggressive"))
        before += outcome.stats["tokens_before"]
        after += outcome.stats["tokens_after"]
    assert after < before * 0.45, (before, after)


def test_requests_to_different_paths_are_different_facts() -> None:
    lines = [fact for fact in ACCESS_LOG.facts]
    assert len({line_shape(line) for line in lines}) == len(lines)
    # The same request again, at another time, from another client, is a repeat.
    repeat = ACCESS_LOG.output.splitlines()[-1]
    assert "/api/orders/338" in repeat and repeat not in lines
    assert line_shape(repeat) == line_shape(lines[0])


def test_go_subtests_and_their_lines_are_distinct_facts() -> None:
    critical = critical_lines(GO_TEST.output, "tool_result", GO_TEST.command)
    failures = sorted(line for kind, line in critical if kind == "test_failure")
    assert failures == [
        "--- FAIL: TestDiscount (0.01s)",
        "--- FAIL: TestDiscount/case_17 (0.00s)",
        "--- FAIL: TestDiscount/case_5 (0.00s)",
    ]
    assert ("finding", "discount_test.go:18: Discount(50) = 45, want 50") in critical


def test_ansi_colours_are_stripped_for_matching_and_kept_in_the_fact() -> None:
    critical = critical_lines(TSC_PRETTY.output, "tool_result", TSC_PRETTY.command)
    findings = [line for kind, line in critical if kind == "finding"]
    assert len(findings) == 3
    assert all("\x1b[96m" in line and "TS2322" in line for line in findings)


@pytest.mark.parametrize(
    ("first", "second", "same"),
    [
        # what identifies a thing differs: two facts
        ("ERROR GET /api/orders/338 failed", "ERROR GET /api/orders/412 failed", False),
        ("src/a.rs:10:5: error: x", "src/a.rs:11:5: error: x", False),
        ("ERROR timeout on host-1", "ERROR timeout on host-2", False),
        ("ERROR order_id=338 rejected", "ERROR order_id=412 rejected", False),
        ('"GET /x HTTP/1.1" 500 12', '"GET /x HTTP/1.1" 502 12', False),
        ("error[E0308]: mismatched types", "error[E0425]: mismatched types", False),
        # only volatile fields differ: one fact
        (
            "2024-05-01 10:00:01 ERROR timeout after 3s (attempt 1)",
            "2024-05-02 11:30:59.120 ERROR timeout after 12s (attempt 4)",
            True,
        ),
        (
            '10.0.0.1 - - [12/Mar/2025:10:00:01 +0000] "GET /a/7 HTTP/1.1" 500 120',
            '10.0.0.9 - - [13/Mar/2025:11:20:41 +0000] "GET /a/7 HTTP/1.1" 500 987',
            True,
        ),
        ("==4242== ERROR SUMMARY: 1 errors", "==77== ERROR SUMMARY: 3 errors", True),
        ("panic at 0x7ffd2c1e0a40 in worker", "panic at 0x55d4c3a1b2c4 in worker", True),
        ("lsof: /proc/781/task/812/cwd denied", "lsof: /proc/90/task/91/cwd denied", True),
        # a warning of one kind in one file at several positions: one fact
        ("src/a.c:12:5: warning: unused x", "src/a.c:40:9: warning: unused x", True),
        ("src/a.c:12:5: warning: unused x", "src/b.c:12:5: warning: unused x", False),
        # a compiler's note folds as its warning does: places and quoted names
        (
            "mod1.c:3:61: note: ‘sprintf’ output between 2 and 12 bytes",
            "mod1.c:4:61: note: ‘sprintf’ output between 2 and 12 bytes",
            True,
        ),
        (
            "mod1.c:3:23: note: ‘y’ was declared here",
            "mod1.c:9:23: note: ‘z’ was declared here",
            True,
        ),
        (
            "mod1.c:3:23: note: ‘y’ was declared here",
            "mod2.c:3:23: note: ‘y’ was declared here",
            False,
        ),
    ],
)
def test_line_shapes_fold_volatile_fields_only(first: str, second: str, same: bool) -> None:
    assert (line_shape(first) == line_shape(second)) is same
