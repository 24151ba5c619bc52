from __future__ import annotations

import pytest

from workers.core.offload import stash_key
from workers.fidelity.facts import command_family
from workers.fidelity.lossy import check_lossy
from workers.markers.stash import offload_marker

LOG = "start\nwarning: deprecated flag --fast\nline 3 value 42\nFAILED tests/test_x.py::test_y - assert 1 == 2\nend"


def test_accepts_dropping_recoverable_lines_into_a_referenced_stash() -> None:
    dropped = "line 3 value 42"
    key = stash_key(dropped)
    after = LOG.replace(dropped, offload_marker("1 line omitted", key))
    assert check_lossy(LOG, after, "tool_result", {key: dropped}) == []


def test_rejects_a_number_that_is_neither_visible_nor_stashed() -> None:
    after = LOG.replace("line 3 value 42", "line 3 value")
    violations = check_lossy(LOG, after, "tool_result", {})
    assert [(v.kind, v.token) for v in violations] == [("number", "42")]


def test_critical_lines_must_stay_visible_even_if_stashed() -> None:
    dropped = "FAILED tests/test_x.py::test_y - assert 1 == 2"
    key = stash_key(dropped)
    after = LOG.replace(dropped, offload_marker("1 line omitted", key))
    kinds = {v.kind for v in check_lossy(LOG, after, "tool_result", {key: dropped})}
    assert kinds == {"error_line"}


def test_negations_and_constraints_in_prose() -> None:
    before = "Deploy the service.\nWe must never deploy on Friday.\nThis is not a drill."
    after = "Deploy the service.\nWe must deploy on Friday.\nThis is a drill."
    violations = check_lossy(before, after, "text", {})
    assert {(v.kind, v.token) for v in violations} == {
        ("constraint", "We must never deploy on Friday."),
        ("negation", "This is not a drill."),
    }


def test_diff_headers_and_findings() -> None:
    before = "diff --git a/x.py b/x.py\n@@ -1,3 +1,4 @@ def f():\nsrc/x.py:12:5: F821 undefined name 'y'\n"
    violations = check_lossy(before, "", "tool_result", {})
    assert {v.kind for v in violations} >= {"diff_header", "finding"}


def test_a_linters_warning_is_one_fact_per_code_and_file() -> None:
    # flake8's E501 at two places of one file: one shape, as a compiler's warning (the tool
    # filter's note lists every place); an error code (F821) stays a finding of its own
    lines = [f"src/x.py:{n}:80: E501 line too long ({n + 80} > 79 characters)" for n in (3, 9)]
    before = "\n".join([*lines, "src/x.py:4:1: F821 undefined name 'y'"]) + "\n"
    marker = "… warning E501 1 more time at 9:80 <<cx:0123456789abcdef>>"
    stash = {"0123456789abcdef": lines[1]}
    after = "\n".join([lines[0], marker, "src/x.py:4:1: F821 undefined name 'y'"]) + "\n"
    assert check_lossy(before, after, "tool_result", stash) == []
    without_error = "\n".join([lines[0], marker]) + "\n"
    assert {v.kind for v in check_lossy(before, without_error, "tool_result", stash)} == {"finding"}


def test_error_lines_differing_only_in_numbers_are_one_distinct_line() -> None:
    before = "\n".join(
        f"proc {pid}: open /proc/{pid}/fd (Permission denied)" for pid in range(100, 140)
    )
    after = "proc 100: open /proc/100/fd (Permission denied)\n… 39 similar lines omitted <<cx:0123456789abcdef>>"
    stash = {"0123456789abcdef": before.split("\n", 1)[1]}
    assert check_lossy(before, after, "tool_result", stash) == []
    # a distinct error (another shape) must still be visible
    before2 = before + "\nproc 7: segfault at 0x0 (core dumped) error"
    assert {v.kind for v in check_lossy(before2, after, "tool_result", stash)} == {"error_line"}


def test_coloured_diff_headers_are_protected() -> None:
    before = "\x1b[1mdiff --git a/x.py b/x.py\x1b[m\n\x1b[36m@@ -1,3 +1,4 @@\x1b[m\n+added line\n"
    violations = check_lossy(before, "+added line\n", "tool_result", {})
    headers = [v.token for v in violations if v.kind == "diff_header"]
    assert headers == ["\x1b[1mdiff --git a/x.py b/x.py\x1b[m", "\x1b[36m@@ -1,3 +1,4 @@\x1b[m"]


def test_hunk_bodies_are_not_error_lines() -> None:
    before = "diff --git a/x.py b/x.py\n@@ -1,2 +1,2 @@\n-    raise ValueError('x')\n+    raise TypeError('x')\n"
    after = "diff --git a/x.py b/x.py\n@@ -1,2 +1,2 @@\n… 2 lines omitted <<cx:0123456789abcdef>>\n"
    stash = {"0123456789abcdef": "-    raise ValueError('x')\n+    raise TypeError('x')"}
    assert check_lossy(before, after, "tool_result", stash) == []


def test_grep_needs_each_matched_file_not_each_match() -> None:
    before = "src/a.py:10:import os\nsrc/a.py:20:import os.path\nsrc/b.py:3:import os\n"
    after = "src/a.py:10:import os\n… 1 more match <<cx:0123456789abcdef>>\nsrc/b.py:3:import os\n"
    stash = {"0123456789abcdef": "src/a.py:20:import os.path"}
    assert (
        check_lossy(before, after, "tool_result", stash, command="grep -rn 'import os' src") == []
    )
    # without knowing it is grep, every match line is a finding
    assert check_lossy(before, after, "tool_result", stash) != []
    # a dropped file is a violation
    assert [
        v.kind
        for v in check_lossy(
            before,
            "src/a.py:10:import os\n… <<cx:0123456789abcdef>>",
            "tool_result",
            {"0123456789abcdef": "src/a.py:20:import os.path\nsrc/b.py:3:import os"},
            command="rg -n os",
        )
    ] == ["grep_file"]


def test_short_git_status_and_jest_failures() -> None:
    status = " M src/app.py\n?? notes.txt\n"
    kinds = {
        v.kind for v in check_lossy(status, "", "tool_result", {}, command="git status --short")
    }
    assert "git_status_path" in kinds
    jest = "  ✕ renders the header (12 ms)\n  ✓ renders the footer (3 ms)\n"
    violations = check_lossy(jest, "  ✓ renders the footer (3 ms)\n", "tool_result", {})
    failures = [v.token for v in violations if v.kind == "test_failure"]
    assert failures == ["✕ renders the header (12 ms)"]


def test_whitespace_fast_path_accepts_blank_edits_and_still_checks_the_rest() -> None:
    padded = LOG.replace("\n", "   \n\n\n\n", 2)
    assert check_lossy(padded, LOG, "tool_result", {}, whitespace_edits=True) == []
    hidden = LOG.replace("FAILED tests/test_x.py::test_y - assert 1 == 2\n", "")
    violations = check_lossy(padded, hidden, "tool_result", {}, whitespace_edits=True)
    assert ("error_line", "FAILED tests/test_x.py::test_y - assert 1 == 2") in [
        (v.kind, v.token) for v in violations
    ]


@pytest.mark.parametrize(
    ("command", "family"),
    [
        ("grep -n 'a|b' src/x.py", "grep"),  # a quoted | is not a pipe
        ("cd repo\nrg TODO", "grep"),  # a newline separates commands
        ("sudo -u me git -C repo status --short", "git-status"),
        ("FOO=1 /usr/bin/git --no-pager grep -n foo", "grep"),
        ("echo 'grep' | wc -l", None),
        ("python -m pytest", None),
        ("", None),
    ],
)
def test_command_family_reads_commands_with_the_one_shell_parser(
    command: str, family: str | None
) -> None:
    assert command_family(command) == family
