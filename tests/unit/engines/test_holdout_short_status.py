"""``git status --short`` of a repository with many changes (a real run over a generated shop
repository), run through a wrapper script whose name says nothing: its lines say what it is,
so every changed, staged, renamed, deleted and untracked path stays in sight, also when
aggressive mode condenses it as an old message of the conversation."""

from __future__ import annotations

from pathlib import Path

from workers.core.settings import Settings
from workers.fidelity.facts import critical_lines
from workers.pipeline.runner import Pipeline
from workers.pipeline.visibility import lost_facts
from workers.testing import expanded_record, openai_record

DATA = Path(__file__).resolve().parents[2] / "data" / "holdout-logs"
STATUS = (DATA / "git-status-short.txt").read_text(encoding="utf-8")
COMMAND = "./scripts/st.sh"


def test_short_status_lines_are_facts_whatever_the_command() -> None:
    entries = [line for line in STATUS.splitlines() if line.strip()]
    assert len(entries) > 40
    facts = critical_lines(STATUS, "tool_result", COMMAND)
    assert {line.strip() for line in entries} <= {token for kind, token in facts}
    # prose or a listing is no status: two spaces and a word are not enough
    assert critical_lines("   notes.txt\n   todo.txt\n", "tool_result", COMMAND) == frozenset()
    listing = "README.md\ndocs/api.md\n"
    assert critical_lines(listing, "tool_result", COMMAND) == frozenset()


def test_old_status_output_keeps_every_path_in_aggressive_mode() -> None:
    data = openai_record(
        "status",
        ("user", "What is uncommitted?"),
        ("tool", STATUS),
        ("assistant", "Many files changed."),
        ("user", "Now list the docs."),
        ("tool", "README.md\n" + "\n".join(f"docs/page{i}.md" for i in range(60))),
        ("assistant", "Listed."),
        ("user", "Summarise in three bullets."),
        command=COMMAND,
    )
    data["mode"] = "aggressive"
    data["budget_tokens"] = 200
    outcome = Pipeline(Settings(mode="aggressive")).run_raw(data)
    assert lost_facts(data, outcome.record) == []
    shown = set(outcome.record["messages"][3]["content"].splitlines())
    for line in STATUS.splitlines():
        if line.strip():
            assert line in shown, line
    assert expanded_record(outcome) == data
