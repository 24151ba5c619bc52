"""Aggressive mode keeps every distinct error line that standard keeps, when the output is old.

Captured on this machine (``tests/data/aging-facts/``):

- ``pip-types-requests-conflict.txt``: ``pip install 'types-requests>=2.31.0.7,<2.32'
  'urllib3<2'`` in a fresh venv (pip 23.2): ResolutionImpossible, and under ``The conflict is
  caused by:`` one ``types-requests 2.31.0.X depends on urllib3>=2`` line per candidate;
- ``pytest-parametrized-ids.txt``: ``pytest -q --tb=line`` (``COLUMNS=120``) of a
  parametrised test module, six failures whose ids differ only in a number
  (``test_refund_per_item[7]``, ``[15]``, ``[338]``, ``[412]``); its temporary path replaced by
  ``/home/dev/shop``;
- ``http-server-orders.txt``: a small orders API on ``http.server`` hit by a client, its
  access log with a ``500`` for several ``/api/orders/<id>``;
- ``eslint-color-same-code.txt``: ``npx eslint --color`` over three files of a small Node
  project written with the same code in each (a held-out polyglot set's run, its project path
  replaced by ``/home/dev/cart``): the same error text, ``9:23  error  Expected '===' ...``,
  under each file's header;
- ``pytest9-subtests.txt``: ``python3 -m pytest -q`` (pytest 9) of a project with a
  ``unittest`` ``subTest`` loop: ``SUBFAILED(total=10, parts=6) tests/...::test_split_fair``
  per failing subtest in the short summary (the held-out polyglot set's run);
- ``mocha-numbered-failures.txt``: ``npx mocha spec/`` with three failing tests among 29,
  numbered where they run (``  1) never returns a negative total``) and again under
  ``3 failing`` with their suites and titles (trailing blanks removed: standard mode
  normalises them, and these tests expand every mode exactly);
- ``ctest-failures.txt``: ``ctest --output-on-failure`` of a small C++ project, four failing
  tests, ending ``Errors while running CTest`` (project path replaced by ``/home/dev/geo``);
- ``tsc-pretty-declared-here.txt``: ``npx tsc --noEmit --pretty`` (colour) of a small
  TypeScript project: errors whose related location stands on its own indented line
  (``  src/types.ts:1:51`` above ``'unitCents' is declared here.``);
- ``sync-worker-retries.txt``: a worker whose ledger socket refuses, logging (Python
  ``logging``) each retry: the ``ledger connect failed (attempt N/3) after X ms`` lines differ
  only in their timestamp, attempt counter and duration; each ``giving up on
  /api/orders/<id>/ledger-sync`` line names another order.

The outputs are older ones in a conversation (more tool calls and a user turn after them), so
aging summarises them.  It folded error lines one per *shape* of the gate, where lines that
differ only in numbers are one: pip's candidates and pytest's test ids went into the stash
(the held-out Python set's independent check counted 24 such pip lines missing).  Now an error
line folds only into a line of the same repeat key: the same text but for its timestamps,
pids, thread names, durations, sizes and attempt counters.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from workers.core.settings import Settings
from workers.engines.aging import AgingEngine
from workers.fidelity.facts import critical_lines, line_shape, repeat_key
from workers.markers import ansi
from workers.pipeline.runner import Pipeline
from workers.pipeline.visibility import lost_facts
from workers.testing import expanded_record, tool_output_record

DATA = Path(__file__).resolve().parents[2] / "data" / "aging-facts"
COMMANDS = {
    name: entry["command"]
    for name, entry in json.loads((DATA / "manifest.json").read_text(encoding="utf-8")).items()
}
TOOL = 2  # the captured output's message


def _text(name: str) -> str:
    return (DATA / f"{name}.txt").read_text(encoding="utf-8")


def _call(n: int, command: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{n}",
                "type": "function",
                "function": {"name": "bash", "arguments": json.dumps({"command": command})},
            }
        ],
    }


def _older(name: str) -> dict[str, Any]:
    """A conversation where the capture is an old tool output: six more tool calls and a new
    user turn follow it."""
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Run it and tell me what fails."},
        _call(1, COMMANDS[name]),
        {"role": "tool", "tool_call_id": "call_1", "content": _text(name)},
    ]
    for n in range(2, 8):
        messages.append(_call(n, f"sed -n {n},{n + 4}p setup.cfg"))
        messages.append(
            {
                "role": "tool",
                "tool_call_id": f"call_{n}",
                "content": f"[metadata]\nname = shop\nversion = 0.{n}.0\n",
            }
        )
    messages.append({"role": "user", "content": "Now add a line to the changelog."})
    messages.append({"role": "assistant", "content": "Done: CHANGELOG.md has the line."})
    return {"id": name, "messages": messages}


def _without_trailing_blanks(record: dict[str, Any]) -> dict[str, Any]:
    copied = copy.deepcopy(record)
    text = copied["messages"][TOOL]["content"]
    copied["messages"][TOOL]["content"] = "\n".join(line.rstrip(" \t") for line in text.split("\n"))
    return copied


def _compressed(record: dict[str, Any], mode: str) -> str:
    """The captured output's text after ``mode``, checked: the gate passed, every fact of the
    bench's count is visible, and expand gives the record back."""
    outcome = Pipeline(Settings(mode=mode)).run_raw(record)
    assert outcome.rejections == [], [r.as_dict() for r in outcome.rejections]
    assert lost_facts(record, outcome.record) == []
    expanded = expanded_record(outcome)
    if mode == "standard":  # its whitespace engine's trailing blanks are not restored (README)
        expanded, record = _without_trailing_blanks(expanded), _without_trailing_blanks(record)
    assert expanded == record
    text: str = outcome.record["messages"][TOOL]["content"]
    return text


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_aggressive_shows_every_distinct_critical_line_standard_shows(name: str) -> None:
    record = _older(name)
    standard = _compressed(record, "standard")
    aggressive = _compressed(record, "aggressive")
    assert len(aggressive) <= len(standard) < len(_text(name))
    critical = {  # as the ansi engine shows a coloured line: its plain text
        ansi.strip(line)[0].strip()
        for _, line in critical_lines(_text(name), "tool_result", COMMANDS[name])
    }
    shown = {line for line in critical if line in standard}
    assert shown
    assert [line for line in sorted(shown) if line not in aggressive] == []


def test_every_pip_candidate_that_conflicts_stays_visible() -> None:
    text = _text("pip-types-requests-conflict")
    causes = [line.strip() for line in text.splitlines() if " depends on urllib3>=2" in line]
    assert len(causes) == 13 and len({line_shape(c) for c in causes}) == 1
    aggressive = _compressed(_older("pip-types-requests-conflict"), "aggressive")
    for line in causes:
        assert line in aggressive
    # the 13 ``The user requested urllib3<2`` lines are one fact: a run of them is stashed
    # where it saves tokens, one stays
    assert "The user requested urllib3<2" in aggressive


def test_every_failing_parametrised_test_id_stays_visible() -> None:
    text = _text("pytest-parametrized-ids")
    failed = [line for line in text.splitlines() if line.startswith("FAILED ")]
    assert len(failed) == 6
    aggressive = _compressed(_older("pytest-parametrized-ids"), "aggressive")
    for line in failed:
        assert line in aggressive
    assert "6 failed, 7 passed in 0.96s" in aggressive


def _aged_only(name: str) -> str:
    """The capture as the aging engine alone leaves it (no standard engine folds before)."""
    record = _older(name)
    record["mode"] = "aggressive"
    pipeline = Pipeline(Settings(mode="off"), engines={"aggressive": [AgingEngine()]})
    outcome = pipeline.run_raw(record)
    assert outcome.rejections == []
    assert expanded_record(outcome) == record
    text: str = outcome.record["messages"][TOOL]["content"]
    return text


def test_aging_folds_a_retry_that_differs_in_time_attempt_and_duration_only() -> None:
    text = _text("sync-worker-retries")
    retries = [line for line in text.splitlines() if "ledger connect failed" in line]
    assert len(retries) == 9 and len({repeat_key(line) for line in retries}) == 1
    aged = _aged_only("sync-worker-retries")
    shown = [line for line in aged.splitlines() if "ledger connect failed" in line]
    assert shown == [retries[0], retries[-1]]  # where the retries started and where they ended
    for oid in (114, 338, 412):
        assert f"giving up on /api/orders/{oid}/ledger-sync after 3 attempts" in aged
    assert "done: 0 synced, 3 failed" in aged


def test_aging_alone_keeps_each_version_and_each_test_id() -> None:
    for name, marker in (
        ("pip-types-requests-conflict", " depends on urllib3>=2"),
        ("pytest-parametrized-ids", "FAILED "),
    ):
        aged = _aged_only(name)
        assert "omitted <<cx:" in aged
        for line in _text(name).splitlines():
            if marker in line:
                assert line.strip() in aged, (name, line)


def test_a_budget_keeps_every_distinct_error_line_of_an_older_output() -> None:
    record = _older("pip-types-requests-conflict")
    pipeline = Pipeline(Settings(mode="aggressive"))
    total = sum(pipeline.tokens.count(m["content"] or "") for m in record["messages"])
    record["budget_tokens"] = total // 10
    outcome = pipeline.run_raw(record)
    assert outcome.rejections == []
    assert lost_facts(record, outcome.record) == []
    assert expanded_record(outcome) == record
    tool = outcome.record["messages"][TOOL]["content"]
    for line in _text("pip-types-requests-conflict").splitlines():
        if " depends on urllib3>=2" in line:
            assert line.strip() in tool


def test_a_budget_keeps_each_conflicting_candidate_of_an_unanswered_output() -> None:
    # after the pip filter rewrote the output, its ``depends on`` lines were critical only in
    # the output as it came in, and the budget's floor took those but for error lines: a
    # budget of a fifth kept 1 of the 25 candidates (the held-out set's capture)
    path = DATA.parent / "holdout-python" / "pip-conflict.txt"
    text = path.read_text(encoding="utf-8")
    command = (
        "pip install 'urllib3<2' 'requests==2.32.3' 'botocore==1.35.0' "
        "'types-requests>=2.32.0.20240905'"
    )
    pipeline = Pipeline(Settings(mode="aggressive"))
    record = tool_output_record("pip", text, command=command)
    record["budget_tokens"] = pipeline.tokens.count(text) // 5
    outcome = pipeline.run_raw(record)
    assert outcome.rejections == []
    assert expanded_record(outcome) == record
    budget = next(e for e in outcome.stats["engines"] if e["engine"] == "budget")
    assert budget["details"]["lines_omitted"] > 0
    causes = [line.strip() for line in text.splitlines() if " depends on urllib3>=2" in line]
    assert len(causes) == 25
    for line in causes:
        assert line in outcome.record["content"]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (  # a timestamp, a logger's pid, an attempt counter and a duration
            "2026-12-06 11:05:59,523 ERROR   orders.sync [9543] ledger connect failed "
            "(attempt 1/3) after 1.81 ms: [Errno 111] Connection refused",
            "2026-12-06 11:07:02,101 ERROR   orders.sync [9611] ledger connect failed "
            "(attempt 3/3) after 0.30 ms: [Errno 111] Connection refused",
        ),
        (  # syslog's pid, a thread's name, an address
            "Dec  6 11:05:59 web1 app[812]: ERROR in pool-2-thread-3: null pointer at 0x7f3a12",
            "Dec  6 11:06:14 web1 app[907]: ERROR in pool-4-thread-1: null pointer at 0x7f3b40",
        ),
        (  # lsof's pid column repeats the pid of its /proc path
            "bioset      19         root  cwd   unknown      /proc/19/cwd (readlink: Permission denied)",
            "bioset      20         root  cwd   unknown      /proc/20/cwd (readlink: Permission denied)",
        ),
        (  # a warning folds as the gate folds it: its position in one file
            "src/app.c:12:5: warning: unused variable 'a' [-Wunused-variable]",
            "src/app.c:40:9: warning: unused variable 'b' [-Wunused-variable]",
        ),
    ],
)
def test_lines_that_differ_in_volatile_fields_only_are_one_fact(a: str, b: str) -> None:
    assert repeat_key(a) == repeat_key(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            "types-requests 2.31.0.7 depends on urllib3>=2",
            "types-requests 2.31.0.8 depends on urllib3>=2",
        ),
        (
            "FAILED tests/test_refunds.py::test_refund_per_item[7] - ZeroDivisionError: division by zero",
            "FAILED tests/test_refunds.py::test_refund_per_item[338] - ZeroDivisionError: division by zero",
        ),
        (
            "C:\\SDK\\include\\math.h  26  Error 10: Expecting ';'",
            "C:\\SDK\\include\\math.h  27  Error 10: Expecting ';'",
        ),
        (
            "C:\\SDK\\include\\math.h  26  Error 10: Expecting ';'",
            "C:\\SDK\\include\\math.h  26  Error 19: Expecting ';'",
        ),
        ("6 failed, 7 passed in 0.96s", "5 failed, 8 passed in 0.96s"),
    ],
)
def test_lines_that_differ_in_what_identifies_them_are_two_facts(a: str, b: str) -> None:
    assert line_shape(a) == line_shape(b)  # the gate reads them as one
    assert repeat_key(a) != repeat_key(b)


def test_a_repeat_key_is_finer_than_the_gates_shape() -> None:
    # one visible line of each repeat key shows each shape the gate checks
    for name, command in COMMANDS.items():
        by_key: dict[str, set[str]] = {}
        for kind, line in critical_lines(_text(name), "tool_result", command):
            if kind == "error_line":
                by_key.setdefault(repeat_key(line), set()).add(line_shape(line))
        assert all(len(shapes) == 1 for shapes in by_key.values()), name


def _sections(text: str) -> dict[str, list[str]]:
    """File header -> the error findings under it (eslint's stylish report, ANSI removed)."""
    out: dict[str, list[str]] = {}
    header = ""
    for line in re.sub(r"\x1b\[[0-9;]*m", "", text).split("\n"):
        if line.startswith("/"):
            header = line
            out[header] = []
        elif header and re.match(r"^\s+\d+:\d+\s+error\s", line):
            out[header].append(line.strip())
    return out


def test_the_same_error_under_another_file_is_its_own_fact() -> None:
    # The held-out polyglot set's eslint runs: aggressive (the output answered) kept
    # ``9:23  error  Expected '===' ...  eqeqeq`` under lib/auth.js and stashed the same
    # line under the next files, one copy of each critical line being all the gate asks;
    # 99 of the set's 163 aggressive misses.  Now every file shows its own errors.
    name = "eslint-color-same-code"
    wanted = _sections(_text(name))
    assert len(wanted) == 3 and all(wanted.values())
    repeated = set(wanted["/home/dev/cart/lib/auth.js"]) & set(
        wanted["/home/dev/cart/lib/pricing.js"]
    )
    assert repeated  # the case: one error text under two files
    for mode in ("standard", "aggressive"):
        shown = _sections(_compressed(_older(name), mode))
        for header, errors in wanted.items():
            assert [e for e in errors if e not in shown.get(header, [])] == [], (mode, header)


def _critical_and_kept(name: str, lines: list[str]) -> set[str]:
    """Check ``lines`` are critical lines of the capture and visible in aggressive when the
    output is an older one; returns the capture's critical lines."""
    critical = {line for _, line in critical_lines(_text(name), "tool_result", COMMANDS[name])}
    assert [line for line in lines if line not in critical] == []
    aggressive = _compressed(_older(name), "aggressive")
    assert [line for line in lines if line not in aggressive] == []
    return critical


def test_every_failing_subtest_of_pytest_9_stays_visible() -> None:
    # pytest 9 writes a failing subtest as ``SUBFAILED(total=10, parts=6) path::test``: no
    # error word the facts knew (``SUBFAILED`` holds no word boundary before ``FAILED``), so
    # aging stashed all four from an answered output (14 misses of the held-out set)
    name = "pytest9-subtests"
    subfailed = [line for line in _text(name).splitlines() if line.startswith("SUBFAILED(")]
    assert len(subfailed) == 4
    _critical_and_kept(name, subfailed)


def test_mocha_failing_test_titles_are_facts_and_stay() -> None:
    # mocha's ``  1) never returns a negative total`` (where the test ran) and its title line
    # under the ``3 failing`` summary were no facts: aging stashed them from an older output
    name = "mocha-numbered-failures"
    titles = {
        "1) never returns a negative total",
        "2) has a rate for Belgium",
        "3) throws on garbage",
        "never returns a negative total:",
        "has a rate for Belgium:",
        "throws on garbage:",
    }
    critical = _critical_and_kept(name, sorted(titles))
    assert "✔ rounds percentage discounts" not in critical


def test_ctest_closing_error_line_stays() -> None:
    # ``Errors while running CTest`` held no error word the facts knew (``Errors``)
    failed = [line for line in _text("ctest-failures").splitlines() if "***" in line]
    assert len(failed) == 4  # ``2/7 Test #2: area_circle ....***Failed`` and the aborted ones
    _critical_and_kept("ctest-failures", ["Errors while running CTest", *failed])


def test_tsc_related_locations_are_findings_and_stay() -> None:
    # tsc --pretty writes where an error's type or parameter is declared on a line of its
    # own; no fact, aging stashed it from an older output (4 misses of the held-out set)
    name = "tsc-pretty-declared-here"
    plain = {
        ansi.strip(line)[0].strip(): kind
        for kind, line in critical_lines(_text(name), "tool_result", COMMANDS[name])
    }
    related = ["src/types.ts:1:51", "src/format.ts:3:44"]
    assert [plain.get(line) for line in related] == ["finding", "finding"]
    aggressive = _compressed(_older(name), "aggressive").split("\n")
    assert [line for line in related if f"  {line}" not in aggressive] == []


def test_valgrind_heap_left_at_exit_stays() -> None:
    # valgrind's heap summary said how much memory was left; aging stashed it from an older
    # output (held-out set 4); ``in use at exit: 0 bytes`` is no finding
    _critical_and_kept(
        "valgrind-heap-summary", ["==6352==     in use at exit: 61 bytes in 5 blocks"]
    )
    clean = "==7== HEAP SUMMARY:\n==7==     in use at exit: 0 bytes in 0 blocks\n"
    assert critical_lines(clean, "tool_result") == frozenset()


def test_notes_in_project_files_are_one_fact_per_place() -> None:
    # clang under two errors: each note points at another declaration in the project
    first = "/work/proj/include/image.h:21:5: note: 'filter_apply' declared here"
    second = "/work/proj/include/image.h:26:5: note: 'ppm_write' declared here"
    assert repeat_key(first) != repeat_key(second)
    # in the system's headers a note is help text: one shape, one key
    lib = "/usr/include/c++/12/bits/stl_pair.h:{}:5: note: candidate template ignored: '{}'"
    assert repeat_key(lib.format(663, "pair")) == repeat_key(lib.format(451, "iterator"))


def test_an_older_retry_loop_keeps_its_first_and_last_attempt() -> None:
    # a retry loop that gave up: where it started and where it ended are both facts to read
    rows = ["2026-12-06 14:20:10,001 INFO [sync] starting sync of 3 regions"]
    rows += [
        f"2026-12-06 14:20:{10 + k // 3:02d},{k * 37 % 1000:03d} WARNING [sync] sync to "
        f"us-east failed (attempt {k}/30): [Errno 111] Connection refused; retrying in 50ms"
        for k in range(1, 31)
    ]
    rows += ["2026-12-06 14:20:21,000 ERROR [sync] us-east gave up after 30 attempts"]
    record = _older("sync-worker-retries")
    record["messages"][1] = _call(1, "python3 sync_client.py")
    record["messages"][2]["content"] = "\n".join(rows) + "\n"
    outcome = Pipeline(Settings(mode="aggressive")).run_raw(record)
    assert outcome.rejections == []
    assert expanded_record(outcome) == record
    shown = outcome.record["messages"][TOOL]["content"]
    assert "(attempt 1/30)" in shown and "(attempt 30/30)" in shown
    assert "(attempt 15/30)" not in shown
    assert "gave up after 30 attempts" in shown
