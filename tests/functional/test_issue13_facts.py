"""Issue 13's facts audit: every fact the issue lists as dropped stays visible.

The outputs are real (``python -m tests.support.issue13_samples`` ran cargo,
go test -race, gcc -fsanitize=address, valgrind, cmake, find, python
services and node on this machine; rspec and phpunit are written from their
documented formats).  Each runs as a tool output of its own in standard and
aggressive mode, and as an old message of a conversation under a tight token
budget in aggressive mode (aging and budget condense it): each identifying
part (a request path, a test id, a ``file:line``, a headline) must be
readable in the output itself, not only in the stash.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support import runner_samples
from tests.support.issue13_samples import FACTS, load
from workers.core.settings import Settings
from workers.engines.listing import tree_paths
from workers.fidelity.facts import critical_lines, line_shape
from workers.markers.structured_view import HEADER_LINE
from workers.pipeline.runner import Pipeline
from workers.testing import expanded_record, openai_record

SAMPLES = load()
NAMES = sorted(SAMPLES)
PIPELINES = {m: Pipeline(Settings(mode=m)) for m in ("standard", "aggressive")}
BUDGET = 200  # far below what the conversation needs: budget stashes all it may


def _trimmed(text: str) -> str:
    """The text without trailing blanks (the whitespace engine's documented normalisation)."""
    return "\n".join(line.rstrip() for line in text.split("\n")).rstrip("\n")


def _path_listed(path: str, text: str) -> bool:
    """A listed path is readable as written, or in the directory tree of a paths view.

    The grouped listing form (``./cvec/: README.md LICENSE`` then ``  src/: vec.c``)
    keeps every name visible under its directory's line; the tree's reader
    (:func:`workers.engines.listing.tree_paths`) gives the full paths back, so a
    name under another directory of the same name does not count.
    """
    return path in text or path in tree_paths(text.split(HEADER_LINE)[0])


def test_a_name_counts_only_under_its_own_directory() -> None:
    view = "./a/: x.c\n  src/: f.c\n./b/: y.c"
    assert _path_listed("./a/src/f.c", view)
    assert not _path_listed("./b/src/f.c", view)  # b has no src/ in the view


def _missing(name: str, text: str) -> list[str]:
    facts = SAMPLES[name]["facts"]
    if name == "find-listing":
        return [fact for fact in facts if not _path_listed(fact, text)]
    return [fact for fact in facts if fact not in text]


def _conversation(name: str) -> dict[str, Any]:
    sample = SAMPLES[name]
    data = openai_record(
        f"issue13-{name}",
        ("user", "Run it and tell me what broke."),
        ("tool", sample["output"]),
        ("assistant", "I ran it; the output is above. Next I will look at the docs."),
        ("user", "Thanks. Now list the docs so we can write the release notes."),
        ("tool", "README.md\nCHANGES.md\n" + "\n".join(f"docs/page{i}.md" for i in range(60))),
        ("assistant", "Listed the docs."),
        ("user", "Summarise the release notes in three bullet points please."),
        command=sample["command"],
    )
    data["mode"] = "aggressive"
    data["budget_tokens"] = BUDGET
    return data


def test_every_item_of_the_issue_has_a_sample_with_facts() -> None:
    assert set(SAMPLES) == set(FACTS)
    for name in NAMES:
        assert SAMPLES[name]["facts"], name
        assert all(f in SAMPLES[name]["output"] for f in SAMPLES[name]["facts"]), name


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_facts_stay_visible_in_a_tool_output(name: str, mode: str) -> None:
    sample = SAMPLES[name]
    record = {
        "id": name,
        "kind": "tool_output",
        "content": sample["output"],
        "command": sample["command"],
    }
    out = PIPELINES[mode].run_raw(record)
    assert out.rejections == []
    assert _missing(name, out.record["content"]) == []
    if mode == "standard":
        assert _trimmed(expanded_record(out)["content"]) == _trimmed(sample["output"])


# A listing's paths are not critical facts of the gate: standard mode shows
# every name (grouped by directory), aging summarises an old listing.
OLD_MESSAGE = [n for n in NAMES if n != "find-listing"]


@pytest.mark.parametrize("name", OLD_MESSAGE)
def test_facts_stay_visible_in_an_old_message_under_a_budget(name: str) -> None:
    data = _conversation(name)
    out = PIPELINES["aggressive"].run_raw(data)
    assert out.rejections == []
    text = out.record["messages"][3]["content"]
    assert _missing(name, text) == []


REPORTS = [s for s in runner_samples.load() if s["family"] == "report"]


@pytest.mark.parametrize("sample", REPORTS, ids=[s["name"] for s in REPORTS])
def test_reports_keep_failing_ids_assertions_and_summaries_in_an_old_message(
    sample: dict[str, Any],
) -> None:
    """Every runner's report (real output of runner_samples) as an old message under a budget.

    The test file's own frame above the innermost one (unittest) is context, not
    the innermost frame in user code, which stays.
    """
    data = _conversation("rspec")
    data["messages"][3]["content"] = sample["output"]
    out = PIPELINES["aggressive"].run_raw(data)
    assert out.rejections == []
    text = out.record["messages"][3]["content"]
    must = [
        f
        for f in sample["facts"]
        if not (sample["name"] == "unittest" and "test_" in f and f.startswith("File "))
    ]
    assert [f for f in must if f not in text] == []
    assert len(text) < len(sample["output"]) * 0.7


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("KeyError: 12", "KeyError: 5"),  # the missing key
        (
            "==1== 135 bytes in 15 blocks are definitely lost in loss record 1 of 2",
            "==1== 256 bytes in 1 blocks are definitely lost in loss record 2 of 2",
        ),
        ("ERROR order 12 rejected", "ERROR order 31 rejected"),
        ("ERROR batch 41 failed; retried later", "ERROR batch 138 failed; retried later"),
        ("ImportFailed: row 120 is not JSON", "ImportFailed: row 7 is not JSON"),
        ("AssertionError: 53.0 != 53.97", "AssertionError: 53.0 != 54.0"),
        (
            "java.lang.AssertionError: expected:<0> but was:<1>",
            "java.lang.AssertionError: expected:<0> but was:<2>",
        ),
    ],
)
def test_error_lines_that_differ_in_what_identifies_them_are_two_facts(
    first: str, second: str
) -> None:
    assert line_shape(first) != line_shape(second)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (
            "[2026-12-01 14:43:53,122] WARNING in app: retrying payment sync (attempt 1 of 5)",
            "[2026-12-01 14:44:10,907] WARNING in app: retrying payment sync (attempt 4 of 5)",
        ),
        (  # a warning repeated per batch is one fact: the batch and latency are counters
            "09:29:24,720 WARNING sync [4362] batch 3 of 900: upstream slow (latency 361 ms)",
            "09:29:25,002 WARNING sync [4362] batch 6 of 900: upstream slow (latency 472 ms)",
        ),
        (
            "2026-12-01T14:10:00Z ERROR assert failed in check",
            "2026-12-02T09:11:41Z ERROR assert failed in check",
        ),
    ],
)
def test_error_lines_that_differ_in_a_timestamp_or_counter_are_one_fact(
    first: str, second: str
) -> None:
    assert line_shape(first) == line_shape(second)


def test_a_traceback_ends_in_its_exception_whatever_its_name() -> None:
    text = SAMPLES["python-exception"]["output"]
    critical = critical_lines(text, "tool_result")
    assert ("error_line", "ImportFailed: row 120 of customers.jsonl is not JSON") in critical
    # the innermost frame in user code, below which only the standard library ran
    frame = 'File "/home/dev/proj/py/import_job.py", line 14, in parse_row'
    assert ("stack_frame", frame) in critical
    # without the Traceback header (an engine stashed it), the frames still say it
    cut = text[text.index('  File "/home/dev/proj/py/import_job.py", line 23') :]
    assert ("error_line", "ImportFailed: row 120 of customers.jsonl is not JSON") in critical_lines(
        cut, "tool_result"
    )


def test_numbered_failures_count_only_under_a_failures_header() -> None:
    critical = critical_lines(SAMPLES["rspec"]["output"], "tool_result")
    failing = sorted(line for kind, line in critical if kind == "test_failure")
    assert "1) Cart#total applies the coupon before tax" in failing
    assert "rspec ./spec/cart_spec.rb:74 # Cart#checkout refuses an expired card" in failing
    assert ("test_summary", "31 examples, 2 failures") in critical
    plain = "Steps:\n  1) build the image\n  2) push it\nexpected: a list"
    assert critical_lines(plain, "tool_result") == frozenset()
