"""Aging keeps whole the function of a file read that the latest request names.

``tests/data/holdout-python/cat-ledger.txt`` is ``cat src/invtrack/ledger.py`` of a small
package written on this machine for the held-out Python set (holdout-d).  The user asks to fix
``Ledger.to_json``; the assistant reads the file and answers in the same turn.  Outline keeps
a named function whole in a longer read; aging then condensed the answered read to its head,
tail and three relevant lines, so ``def to_json(self):`` (and on a 120 KB read of
django's ``sql/query.py``, all of ``Query.add_q`` that the user asked about) went into the
stash in aggressive mode.  The function the model is working on in this turn stays visible; the
rest of the read is condensed as before.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from workers.core.settings import Settings
from workers.pipeline.runner import Pipeline
from workers.pipeline.visibility import lost_facts
from workers.testing import expanded_record

LEDGER = (
    Path(__file__).resolve().parents[2] / "data" / "holdout-python" / "cat-ledger.txt"
).read_text(encoding="utf-8")
LINES = LEDGER.splitlines()
TO_JSON = LINES[LINES.index("    def to_json(self):") : LINES.index("    def to_json(self):") + 5]


def _read_call(command: str, read: str) -> list[dict[str, Any]]:
    """The assistant's call that reads a file, and its result."""
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "bash", "arguments": json.dumps({"command": command})},
    }
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": read},
    ]


def _chat(ask: str) -> dict[str, Any]:
    return {
        "id": "read",
        "messages": [
            {"role": "user", "content": ask},
            *_read_call("cat src/invtrack/ledger.py", LEDGER),
            {"role": "assistant", "content": "The note field is missing from the dict."},
        ],
    }


def _aggressive(record: dict[str, Any]) -> str:
    outcome = Pipeline(Settings(mode="aggressive")).run_raw(record)
    assert outcome.rejections == []
    assert lost_facts(record, outcome.record) == []
    assert expanded_record(outcome) == record
    text: str = outcome.record["messages"][2]["content"]
    return text


def test_the_named_function_stays_whole_in_an_answered_read() -> None:
    assert TO_JSON[-1].strip() == "])"
    text = _aggressive(
        _chat("Fix Ledger.to_json in src/invtrack/ledger.py so the note field round-trips.")
    )
    for line in TO_JSON:
        assert line in text.splitlines()
    # the read is still condensed: a body the request does not name goes
    assert "            self.bins[src].put(sku, qty)" not in text


def test_without_a_named_function_the_read_is_condensed_as_before() -> None:
    text = _aggressive(_chat("Add type hints to the ledger module."))
    assert "    def to_json(self):" not in text.splitlines()


def _asked_later(
    ask: str, command: str = "cat src/invtrack/ledger.py", read: str = LEDGER
) -> dict[str, Any]:
    """The read is answered and the user asks about it in a new turn (set 5's shape: 18 of 25
    asked functions went into the stash, aging named symbols only in the read's own turn)."""
    return {
        "id": "later",
        "messages": [
            {"role": "user", "content": "Read the ledger module."},
            *_read_call(command, read),
            {"role": "assistant", "content": "I have the output above. What do you want to know?"},
            {"role": "user", "content": ask},
        ],
    }


def test_a_function_asked_about_in_a_later_turn_stays_whole() -> None:
    text = _aggressive(_asked_later("Walk me through to_json line by line."))
    for line in TO_JSON:
        assert line in text.splitlines()
    assert "            self.bins[src].put(sku, qty)" not in text


def test_an_older_read_names_what_its_markers_hide() -> None:
    text = _aggressive(_asked_later("Add type hints everywhere."))
    assert "class Ledger:" not in text.splitlines()
    assert "lines omitted: Ledger (line 13) <<cx:" in text  # the top level, with its file line
    assert "to_json" not in text  # a method: in the stash


def test_a_function_of_a_part_of_a_file_that_does_not_parse_is_found_by_its_shape() -> None:
    # ``sed -n`` from inside a class: tree-sitter finds no method; the shape does
    start = LINES.index("    def to_json(self):")
    part = "\n".join(LINES[start - 12 : start + 40]) + "\n"
    command = f"sed -n '{start - 11},{start + 40}p' src/invtrack/ledger.py"
    text = _aggressive(_asked_later("What does to_json return?", command, part))
    for line in TO_JSON:
        assert line in text.splitlines()


def test_what_a_later_back_reference_copies_stays_visible_in_an_older_output() -> None:
    # set 5: the re-read wrote an unchanged function as ``[[dup:v1 src=m3 ...]]`` while aging
    # had condensed m3: the function was visible nowhere
    block = "".join(
        f"    def helper_{k}(self):\n        return self.total * {k}\n" for k in range(4)
    )
    first = "\n".join(f"line {i}: nothing to see" for i in range(60)) + "\n\n" + block + "\n"
    second = "header of the second run\n\n" + block + "\ntrailer of the second run\n"

    def call(n: int) -> dict[str, Any]:
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"c{n}",
                    "type": "function",
                    "function": {
                        "name": "bash",
                        "arguments": json.dumps({"command": f"./step{n}"}),
                    },
                }
            ],
        }

    record = {
        "id": "dup",
        "messages": [
            {"role": "user", "content": "Run step one."},
            call(1),
            {"role": "tool", "tool_call_id": "c1", "content": first},
            {"role": "user", "content": "Now step two."},
            call(2),
            {"role": "tool", "tool_call_id": "c2", "content": second},
        ],
    }
    outcome = Pipeline(Settings(mode="aggressive")).run_raw(record)
    assert expanded_record(outcome) == record
    older, newer = (outcome.record["messages"][k]["content"] for k in (2, 5))
    assert "[[dup:v1 src=m2" in newer  # the block is a reference to the older output
    assert "… " in older and "lines omitted" in older  # which aging condensed
    assert all(line in older.splitlines() for line in block.splitlines())


def test_a_function_the_read_s_own_request_named_stays_whole_in_later_turns() -> None:
    # held-out set 9: the user asked about ``transfer`` and ``utilisation``, the reads
    # answered, the conversation moved on: aging kept them only while the latest message named
    # them (asked functions 1 of 6 visible in aggressive)
    record = {
        "id": "own-turn",
        "messages": [
            {"role": "user", "content": "Why does to_json drop the note field?"},
            *_read_call("cat src/invtrack/ledger.py", LEDGER),
            {"role": "assistant", "content": "The note field is missing from the dict."},
            {"role": "user", "content": "Thanks. Now add type hints to the module."},
        ],
    }
    text = _aggressive(record)
    for line in TO_JSON:
        assert line in text.splitlines()
    assert "            self.bins[src].put(sku, qty)" not in text  # still condensed


def _tool_use(call: str, command: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": call, "name": "bash", "input": {"command": command}}
        ],
    }


def test_a_reminder_beside_a_tool_result_opens_no_turn() -> None:
    # Anthropic-style: a result and a harness's reminder in one user message, then the read;
    # the request that asked for the read is still the one whose names stay whole
    reminder = {"type": "text", "text": "<system-reminder>Keep answers short.</system-reminder>"}
    record = {
        "id": "reminder",
        "messages": [
            {"role": "user", "content": "Why does to_json drop the note field?"},
            _tool_use("t0", "ls src/invtrack"),
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t0", "content": "ledger.py\n"},
                    reminder,
                ],
            },
            _tool_use("t1", "cat src/invtrack/ledger.py"),
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": LEDGER}],
            },
            {"role": "assistant", "content": "The note field is missing from the dict."},
            {"role": "user", "content": "Thanks. Now add type hints to the module."},
        ],
    }
    outcome = Pipeline(Settings(mode="aggressive")).run_raw(json.loads(json.dumps(record)))
    assert expanded_record(outcome) == record
    text = outcome.record["messages"][4]["content"][0]["content"]
    assert isinstance(text, str)
    for line in TO_JSON:
        assert line in text.splitlines()
    assert "            self.bins[src].put(sku, qty)" not in text


TRANSFER = LINES[LINES.index("    def transfer(self, sku, qty, src, dst, at=None):") :][:11]
TRANSFER_AT = LINES.index(TRANSFER[0]) + 1  # its file line


def _worked_on(after: list[dict[str, Any]]) -> dict[str, Any]:
    """The read answers a request that names no function, the agent goes on (``after``),
    and the user later asks for something else."""
    return {
        "id": "worked-on",
        "messages": [
            {"role": "user", "content": "The ledger tests fail, have a look."},
            *_read_call("cat src/invtrack/ledger.py", LEDGER),
            *after,
            {"role": "user", "content": "Thanks. Now add type hints to the module."},
        ],
    }


def _edit_result(first: int) -> list[dict[str, Any]]:
    snippet = "\n".join(f"{first + k:6}\t{line}" for k, line in enumerate(TRANSFER[:4]))
    call = {
        "id": "call_2",
        "type": "function",
        "function": {"name": "edit_file", "arguments": '{"path": "src/invtrack/ledger.py"}'},
    }
    return [
        {"role": "assistant", "content": "Fixing it.", "tool_calls": [call]},
        {
            "role": "tool",
            "tool_call_id": "call_2",
            "content": "The file src/invtrack/ledger.py has been updated. Here's the result of "
            f"running `cat -n` on a snippet of the edited file:\n{snippet}\n",
        },
    ]


def _bash(command: str, output: str, call: str = "call_3") -> list[dict[str, Any]]:
    tool_call = {
        "id": call,
        "type": "function",
        "function": {"name": "bash", "arguments": json.dumps({"command": command})},
    }
    return [
        {"role": "assistant", "content": "", "tool_calls": [tool_call]},
        {"role": "tool", "tool_call_id": call, "content": output},
    ]


def _assert_transfer_whole(record: dict[str, Any]) -> None:
    text = _aggressive(record)
    for line in TRANSFER:
        assert line in text.splitlines(), line
    assert "            self.bins[src].put(sku, qty)" in text  # (transfer's own body)
    for line in TO_JSON[1:]:  # what nothing touched is still condensed
        assert line not in text.splitlines()


def test_a_function_a_later_edit_touches_stays_whole() -> None:
    # held-out set 9: the agent read a file and edited one function (the edit tool shows the
    # edited lines numbered); the read was aged to a map and the function went to the stash
    _assert_transfer_whole(_worked_on(_edit_result(TRANSFER_AT + 2)))


def test_a_function_a_later_diff_touches_stays_whole() -> None:
    diff = (
        "diff --git a/src/invtrack/ledger.py b/src/invtrack/ledger.py\n"
        "--- a/src/invtrack/ledger.py\n+++ b/src/invtrack/ledger.py\n"
        f"@@ -{TRANSFER_AT + 3},2 +{TRANSFER_AT + 3},2 @@\n"
        f"-{TRANSFER[3]}\n+{TRANSFER[3]}  # checked\n {TRANSFER[4]}\n"
        "diff --git a/src/invtrack/other.py b/src/invtrack/other.py\n"
        "--- a/src/invtrack/other.py\n+++ b/src/invtrack/other.py\n"
        "@@ -53,2 +53,2 @@\n-x = 1\n+x = 2\n y = 3\n"
    )
    _assert_transfer_whole(_worked_on(_bash("git diff", diff)))


def test_a_function_a_later_traceback_points_into_stays_whole() -> None:
    trace = (
        "Traceback (most recent call last):\n"
        '  File "/work/app/tests/test_ledger.py", line 12, in test_move\n'
        "    ledger.transfer(sku, 3, 'A', 'B')\n"
        f'  File "/work/app/src/invtrack/ledger.py", line {TRANSFER_AT + 4}, in transfer\n'
        "    raise ValueError('short')\nValueError: short\n"
    )
    _assert_transfer_whole(_worked_on(_bash("python -m pytest -q tests", trace)))


def test_a_function_the_agent_names_after_the_read_stays_whole() -> None:
    _assert_transfer_whole(
        _worked_on([{"role": "assistant", "content": "transfer() moves stock twice."}])
    )


def test_a_python_file_read_with_cat_n_is_split_into_whole_functions() -> None:
    from workers.engines.aging import _shaped_functions

    numbered = [f"{k + 1:6}\t{line}" for k, line in enumerate(LINES)]
    found = {s.name: (s.start, s.end) for s in _shaped_functions(numbered)}
    start = LINES.index(TRANSFER[0])
    assert found["transfer"] == (start, start + len(TRANSFER) - 1)


def test_a_removed_line_that_looks_like_a_file_header_stays_in_its_hunk() -> None:
    from workers.engines.aging import _hunk_lines

    diff = (
        "--- a/db/schema.sql\n+++ b/db/schema.sql\n"
        "@@ -10,3 +10,2 @@\n create table x (id int);\n--- drop the legacy index\n"
        " create index y on x(id);\n"
        "@@ -40,2 +39,3 @@\n a\n+++b\n c\n"
        "--- a/other.sql\n+++ b/other.sql\n@@ -1,2 +1,2 @@\n-x\n+y\n z\n"
    )
    assert _hunk_lines(diff, "db/schema.sql") == {10, 11, 12, 40, 41}
    assert _hunk_lines(diff, "other.sql") == {1, 2}
    assert _hunk_lines("--- a/f.py\n+++ b/f.py\n@@ -5,0 +6,2 @@\n+a\n+b\n", "f.py") == set()


def test_a_function_a_later_failing_test_names_stays_whole() -> None:
    # stop 42: a later run's failing test names what the agent went on to fix
    report = "FAIL tests/ledger.test.js\n  Ledger\n    ✓ opens (2 ms)\n    ✕ transfer (3 ms)\n"
    _assert_transfer_whole(_worked_on(_bash("npx jest", report)))
