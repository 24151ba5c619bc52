"""An answered search (``grep -rn``) ages as standard mode reads it: every match, ``path:line:
text``, is a place the model may come back to (standard's tool filter keeps each one), so aging
keeps them all and condenses only what is no match (held-out set 9: aggressive kept one match
per file of a 300-match ``grep -rn``, 234 places hidden)."""

from __future__ import annotations

import json

from workers.core.settings import Settings
from workers.pipeline.runner import Pipeline
from workers.testing import expanded_record, openai_record


def _matches() -> list[str]:
    return [
        f"src/lib/module_{k % 12}.py:{40 + 7 * k}:        raise NotImplementedError()"
        for k in range(120)
    ]


def test_an_answered_grep_keeps_every_match_in_aggressive_mode() -> None:
    matches = _matches()
    output = "\n".join(matches) + "\n"
    data = openai_record(
        "grep-1",
        ("user", "Where do we raise NotImplementedError?"),
        ("tool", output),
        ("assistant", "In twelve modules, mostly in their abstract base classes."),
        ("user", "Which module has the most stubs?"),
        command="grep -rn 'raise NotImplementedError' src/lib",
    )
    outcome = Pipeline(Settings(mode="aggressive")).run_raw(json.loads(json.dumps(data)))
    visible = outcome.record["messages"][3]["content"]
    for line in matches:
        assert line in visible
    assert expanded_record(outcome) == data


def test_an_answered_log_still_ages() -> None:
    rows = [
        f"2026-12-06 10:00:{k % 60:02d} INFO worker {k % 5} synced batch {k}" for k in range(120)
    ]
    data = openai_record(
        "log-1",
        ("user", "Did the sync finish?"),
        ("tool", "\n".join(rows) + "\n"),
        ("assistant", "Yes, all batches synced."),
        ("user", "Thanks, now summarise the deploy."),
        command="tail -n 120 logs/sync.log",
    )
    outcome = Pipeline(Settings(mode="aggressive")).run_raw(json.loads(json.dumps(data)))
    assert len(outcome.record["messages"][3]["content"]) < len(data["messages"][3]["content"]) / 3
