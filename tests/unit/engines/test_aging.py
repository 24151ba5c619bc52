from __future__ import annotations

import time
from typing import Any

import pytest

from workers.core.settings import Settings
from workers.core.tokens import TokenCounter
from workers.engines._prose import layout
from workers.engines.aging import AgingEngine, AgingPolicy
from workers.engines.base import EngineContext
from workers.fidelity.facts import critical_lines
from workers.messages import parse_record
from workers.pipeline.runner import Pipeline
from workers.testing import anthropic_record, expanded, expanded_record, openai_record

PYTEST_LOG = "\n".join(
    [
        "============================= test session starts ==============================",
        "platform linux -- Python 3.11.9, pytest-8.3.2, pluggy-1.5.0",
        "rootdir: /work/app",
        "collected 120 items",
        "",
        *[f"tests/test_mod{i}.py::test_case_{i} PASSED" for i in range(60)],
        "tests/test_parser.py::test_empty_input FAILED",
        *[f"tests/test_more{i}.py::test_other_{i} PASSED" for i in range(58)],
        "",
        "=================================== FAILURES ===================================",
        "___________________________ test_empty_input ___________________________",
        '  File "/work/app/parser.py", line 42, in parse',
        "    return tokens[0]",
        "IndexError: list index out of range",
        "=========================== short test summary info ============================",
        "FAILED tests/test_parser.py::test_empty_input - IndexError: list index out of range",
        "======================== 1 failed, 119 passed in 3.21s =========================",
    ]
)
REPEATED_ERRORS = "\n".join(
    [f"2024-05-01 10:00:{i:02d} INFO worker {i} heartbeat ok" for i in range(50)]
    + [
        f"2024-05-01 10:01:{i:02d} ERROR timeout after {i}s on host-7 (attempt {i})"
        for i in range(30)
    ]
)
OLD_USER = (
    "Please refactor the config loader so it reads TOML.\n"
    "Some background: the loader grew over the years and has lots of special cases.\n"
    "It was written by a contractor years ago and it is quite old now.\n"
    "We talked about it at the offsite and everyone agreed it was time for a cleanup.\n"
    "You must keep the old YAML path working for one release.\n"
    "The team would love to see this done before the summer holidays start next month."
)
OLD_ASSISTANT = (
    "I read the loader and its tests carefully before changing anything in it.\n"
    "It was a long read with many branches and a lot of history in the comments.\n"
    "I decided to add a TomlSource class next to the YamlSource.\n"
    "The new code lives in config/sources/toml.py and is wired in config/loader.py.\n"
    "There were also some interesting comments from the original authors in there.\n"
    "Some of them were funny and some of them were quite outdated by now.\n"
    "```python\nclass TomlSource:\n    pass\n```\n"
    "```bash\npytest tests/config -q\n```"
)


def agent_session(tool_outputs: list[str], final: str | None = "Done.") -> dict[str, Any]:
    turns: list[tuple[str, str]] = [
        ("user", OLD_USER),
        ("assistant", OLD_ASSISTANT),
    ]
    for i in range(4):
        turns += [("user", f"Follow-up question {i} about logging"), ("assistant", f"Answer {i}.")]
    turns.append(("user", "Now run the test suite and fix the parser failure."))
    for out in tool_outputs:
        turns.append(("tool", out))
        turns.append(("assistant", "Looking at the output."))
    if final is None:
        turns.pop()
    data = openai_record("r", *turns, command="pytest -q")
    data["mode"] = "aggressive"
    return data


def run(data: dict[str, Any], engine: AgingEngine | None = None) -> Any:
    pipeline = Pipeline(Settings(mode="off"), engines={"aggressive": [engine or AgingEngine()]})
    outcome = pipeline.run_raw(data)
    assert outcome.rejections == [], [r.as_dict() for r in outcome.rejections]
    return outcome


def tool_texts(record: dict[str, Any]) -> list[str]:
    return [m["content"] for m in record["messages"] if m["role"] == "tool"]


def test_old_tool_output_keeps_every_critical_line_and_expands_exactly() -> None:
    data = agent_session([PYTEST_LOG, "second step output\n" * 3, "third\n" * 3, "fourth"])
    outcome = run(data)
    aged = tool_texts(outcome.record)[0]
    for _, line in critical_lines(PYTEST_LOG, "tool_result"):
        assert line in aged
    assert "tests/test_mod7.py::test_case_7 PASSED" not in aged
    assert "lines omitted <<cx:" in aged
    assert len(aged) < len(PYTEST_LOG) / 3
    assert expanded_record(outcome) == data


def test_unanswered_long_report_keeps_every_fact_and_stashes_its_noise() -> None:
    # the model has not read it yet: its facts stay (every one, not one per shape),
    # its head and tail too, and the passing lines go into the stash
    data = agent_session(["first output\n" * 40, PYTEST_LOG], final=None)
    outcome = run(data)
    fresh = tool_texts(outcome.record)[-1]
    for _, line in critical_lines(PYTEST_LOG, "tool_result"):
        assert line in fresh
    assert "tests/test_mod0.py::test_case_0 PASSED" in fresh  # head
    assert "tests/test_mod30.py::test_case_30 PASSED" not in fresh
    assert "lines omitted <<cx:" in fresh
    assert len(fresh) < len(PYTEST_LOG) / 2
    aging = next(e for e in outcome.stats["engines"] if e["engine"] == "aging")
    assert aging["details"]["units_fresh"] == 1
    assert expanded_record(outcome) == data


def test_unanswered_fresh_output_keeps_every_error_line_of_one_shape() -> None:
    # an old output keeps one error line per shape; a fresh one keeps them all
    log = "\n".join(
        [f"2024-05-01 10:00:{i:02d} INFO worker {i} heartbeat ok" for i in range(50)]
        + [f"2024-05-01 10:01:{i:02d} ERROR timeout after {i}s (attempt {i})" for i in range(20)]
    )
    data = agent_session([log], final=None)
    fresh = tool_texts(run(data).record)[-1]
    assert fresh.count("ERROR timeout") == 20
    assert "INFO worker 25 heartbeat ok" not in fresh


@pytest.mark.parametrize(
    ("command", "output"),
    [
        (
            "ls -la src",
            "total 328\n"
            + "\n".join(
                f"-rw-r--r-- 1 dev dev {1000 + i} Mar  3 10:00 module_{i:03d}.py" for i in range(60)
            ),
        ),
        (
            "cat src/app.py",
            "\n".join(f"def handler_{i}(x):\n    return x + {i}\n" for i in range(30)),
        ),
        (
            "git diff",
            "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,60 +1,60 @@\n"
            + "\n".join(f"-old_{i} = {i}\n+new_{i} = {i}" for i in range(30)),
        ),
        ("./report.sh", "\n".join(f"/srv/data/part-{i:04d}.csv" for i in range(60))),
    ],
    ids=["ls", "file-read", "diff", "find-like-paths"],
)
def test_unanswered_output_whose_lines_are_the_answer_stays_verbatim(
    command: str, output: str
) -> None:
    data = agent_session([output], final=None)
    data["messages"][-2]["tool_calls"][0]["function"]["arguments"] = (
        '{"command": "' + command + '"}'
    )
    assert tool_texts(run(data).record)[-1] == output


def test_unanswered_short_output_is_verbatim() -> None:
    short = "\n".join(PYTEST_LOG.split("\n")[:30])
    data = agent_session(["first output\n" * 40, short], final=None)
    assert tool_texts(run(data).record)[-1] == short


def test_fresh_tier_can_be_turned_off() -> None:
    data = agent_session(["first output\n" * 40, PYTEST_LOG], final=None)
    outcome = run(data, AgingEngine(policy=AgingPolicy(fresh_min_lines=0)))
    assert tool_texts(outcome.record)[-1] == PYTEST_LOG


def test_recent_tool_output_keeps_head_and_tail_old_one_only_facts() -> None:
    data = agent_session([PYTEST_LOG, PYTEST_LOG.replace("3.21s", "3.22s")])
    outcome = run(data, AgingEngine(policy=AgingPolicy(tool_recent_steps=2)))
    old, recent = tool_texts(outcome.record)
    assert "platform linux -- Python 3.11.9, pytest-8.3.2, pluggy-1.5.0" in recent  # head
    assert "rootdir: /work/app" in recent
    assert "platform linux" not in old  # only the first line and the facts
    assert old.startswith("============================= test session starts")


def test_repeated_error_lines_keep_one_per_shape() -> None:
    data = agent_session([REPEATED_ERRORS, "x\n" * 3, "y\n" * 3, "z"])
    outcome = run(data)
    aged = tool_texts(outcome.record)[0]
    assert aged.count("ERROR timeout") == 2  # the first and the last of the shape
    assert "2024-05-01 10:01:00 ERROR timeout after 0s on host-7 (attempt 0)" in aged
    assert "2024-05-01 10:01:29 ERROR timeout after 29s on host-7 (attempt 29)" in aged
    assert expanded_record(outcome) == data


def test_error_lines_that_differ_in_what_they_name_all_stay() -> None:
    # Only a timestamp, a duration and an attempt counter differ: one shape.
    # The host and the request path identify things: each line is a fact.
    log = "\n".join(
        [f"2024-05-01 10:00:{i:02d} INFO worker {i} heartbeat ok" for i in range(50)]
        + [f"2024-05-01 10:01:{i:02d} ERROR timeout after {i}s on host-{i % 3}" for i in range(30)]
        + [f"2024-05-01 10:02:{i:02d} ERROR POST /api/orders/{330 + i} failed" for i in range(4)]
    )
    data = agent_session([log, "x\n" * 3, "y\n" * 3, "z"])
    outcome = run(data)
    aged = tool_texts(outcome.record)[0]
    assert aged.count("ERROR timeout") == 3  # one per host (no retry: the last adds nothing)
    for host in ("host-0", "host-1", "host-2"):
        assert f"on {host}" in aged
    for order in range(330, 334):
        assert f"POST /api/orders/{order} failed" in aged
    assert "heartbeat" not in aged.split("\n", 1)[1]
    assert expanded_record(outcome) == data


def test_old_prose_is_condensed_or_summarised_constraints_stay() -> None:
    data = agent_session(["out\n" * 3])
    outcome = run(data)
    user = outcome.record["messages"][1]["content"]
    assistant = outcome.record["messages"][2]["content"]
    # summarised (5 turns ago): constraints visible, the rest behind a gist marker
    assert "You must keep the old YAML path working for one release." in user
    assert "The team would love to see this done" in user  # modal "would": kept
    assert "offsite" not in user
    assert "earlier user message" in user and "<<cx:" in user
    # summarised too: the sentence is behind the gist marker, not visible
    assert "I decided to add a TomlSource class" not in assistant
    assert "earlier assistant message" in assistant and "<<cx:" in assistant
    assert expanded_record(outcome) == data


def test_condensed_assistant_keeps_decisions_paths_and_commands() -> None:
    data = agent_session(["out\n" * 3])
    engine = AgingEngine(policy=AgingPolicy(prose_summary_turns=99))
    outcome = run(data, engine)
    assistant = outcome.record["messages"][2]["content"]
    assert "I decided to add a TomlSource class next to the YamlSource." in assistant
    assert "config/sources/toml.py" in assistant
    assert "```bash\npytest tests/config -q\n```" in assistant  # a command: kept
    assert "class TomlSource:" not in assistant  # other code: stashed whole
    assert "funny" not in assistant
    user = outcome.record["messages"][1]["content"]
    assert user.startswith("Please refactor the config loader so it reads TOML.")  # request
    assert "You must keep the old YAML path working for one release." in user
    assert expanded_record(outcome) == data


def test_system_frozen_and_latest_user_messages_are_never_aged() -> None:
    data = agent_session(["out\n" * 3])
    data["messages"].insert(3, {"role": "system", "content": OLD_USER})
    long_request = OLD_USER + "\nNow run the test suite and fix the parser failure."
    for message in reversed(data["messages"]):
        if message["role"] == "user":
            message["content"] = long_request
            break
    outcome = run(data)
    assert outcome.record["messages"][3]["content"] == OLD_USER
    assert long_request in [m["content"] for m in outcome.record["messages"]]
    data["cached_prefix_messages"] = 4
    outcome = run(data)
    for i in range(4):
        assert outcome.record["messages"][i] == data["messages"][i]


def test_anthropic_cache_control_prefix_is_never_changed() -> None:
    turns: list[tuple[str, str]] = [("user", OLD_USER), ("assistant", OLD_ASSISTANT)]
    turns += [("tool", PYTEST_LOG), ("assistant", "Noted.")]
    for i in range(5):
        turns += [("user", f"Question {i} about logging"), ("assistant", f"Answer {i}.")]
    turns += [("tool", PYTEST_LOG), ("assistant", "Noted again.")]
    turns += [("user", "What failed?")]
    data = anthropic_record("a", "You are terse.", *turns, command="pytest -q")
    data["mode"] = "aggressive"
    # cache breakpoint on the message that carries the first tool result
    breakpoint_index = next(
        i
        for i, m in enumerate(data["messages"])
        if any(block.get("type") == "tool_result" for block in m["content"])
    )
    data["messages"][breakpoint_index]["content"][0]["cache_control"] = {"type": "ephemeral"}
    outcome = run(data)
    for i in range(breakpoint_index + 1):
        assert outcome.record["messages"][i] == data["messages"][i]
    later = outcome.record["messages"][-3]["content"][0]["content"]
    assert later != PYTEST_LOG and "1 failed, 119 passed" in later  # aged after the breakpoint


def test_fenced_blocks_are_stashed_whole() -> None:
    fenced = "intro line\n```\n" + "\n".join(f"row {i}" for i in range(120)) + "\n```\noutro"
    data = agent_session([fenced, "a\n" * 3, "b\n" * 3, "c"])
    outcome = run(data)
    aged = tool_texts(outcome.record)[0]
    assert "row 5" not in aged and "```" not in aged
    assert expanded_record(outcome) == data


def test_layout_counts_turns_and_steps() -> None:
    data = openai_record(
        "r",
        ("user", "q1"),
        ("assistant", "a1"),
        ("tool", "t1"),
        ("tool", "t2"),
        ("user", "q2"),
        ("tool", "t3"),
    )
    units = parse_record(data).units
    positions = {u.text: p for u, p in zip(units, layout(units), strict=True)}
    assert positions["t3"].step_age == 0  # the tool result after q2: not answered yet
    assert positions["q2"].latest_user and positions["q2"].turn_age == 0
    assert positions["q1"].turn_age == 1 and not positions["q1"].latest_user
    assert positions["t1"].turn_age == 1
    assert positions["t1"].step_age > positions["t2"].step_age > positions["t3"].step_age
    # parallel tool results (consecutive tool messages) share one step
    data["messages"].insert(5, {"role": "tool", "tool_call_id": "x", "content": "t1b"})
    units = parse_record(data).units
    positions = {u.text: p for u, p in zip(units, layout(units), strict=True)}
    assert positions["t1"].step_age == positions["t1b"].step_age


@pytest.mark.slow
def test_hostile_input_is_linear() -> None:
    tokens = TokenCounter()
    huge = "\n".join(f"line {i} ok" if i % 97 else f"ERROR at {i}" for i in range(200_000))
    one_line = "x" * 3_000_000
    for text in (huge, one_line):
        units = parse_record(agent_session([text, "a", "b", "c"])).units
        ctx = EngineContext(tokens=tokens, latest_user_text="why does line 5 fail")
        started = time.perf_counter()
        out = AgingEngine().apply(units, ctx)
        assert time.perf_counter() - started < 15
        index = next(i for i, u in enumerate(units) if u.text == text)
        assert expanded(out.texts[index], out.stash) == text


def test_grep_output_keeps_every_match() -> None:
    # every ``path:line:`` of a search is a place (standard keeps each: aggressive does too,
    # tests/unit/engines/test_aging_search.py); what is no match still ages
    grep = "\n".join(
        f"src/pkg/module_{i // 5}.py:{10 + i}:    value = compute_total(items, {i})"
        for i in range(200)
    )
    data = agent_session([grep, "a\n" * 3, "b\n" * 3, "c"])
    for message in data["messages"]:
        for call in message.get("tool_calls") or []:
            call["function"]["arguments"] = '{"command": "grep -rn compute_total src"}'
    outcome = run(data)
    aged = tool_texts(outcome.record)[0]
    for line in grep.split("\n"):
        assert line in aged
    for kind, token in critical_lines(grep, "tool_result", "grep -rn compute_total src"):
        assert kind == "grep_file" and token in aged
    assert expanded_record(outcome) == data


def test_a_line_critical_in_the_output_as_it_came_in_stays() -> None:
    # an earlier engine folded a repeated valgrind headline into a marker: in its text no
    # frame follows a headline, so none is critical there; the input's first frame in
    # user code is, and aging keeps it visible
    frames = [f"==7==    by 0x4{i:05X}: lib_{i} (libc.c:{i})" for i in range(40)]
    wanted = "==7==    at 0x109290: hash (app.c:18)"
    runtime = [
        f"==7==    by 0x5{i:05X}: rt_{i} (in /usr/lib/x86_64-linux-gnu/libc.so.6)"
        for i in range(10)
    ]
    original = "\n".join(
        ["==7== Invalid read of size 4", *runtime, wanted, *frames, "==7== ERROR SUMMARY: 1 errors"]
    )
    current = original.replace(
        "==7== Invalid read of size 4", "… 1 line omitted <<cx:0123456789abcdef>>"
    )
    assert ("stack_frame", wanted) in critical_lines(original, "tool_result")
    assert ("stack_frame", wanted) not in critical_lines(current, "tool_result")
    data = agent_session([current], final=None)
    units = parse_record(data).units
    inputs = tuple(original if u.text == current else u.text for u in units)
    for given, kept in ((inputs, True), ((), False)):
        # (an output another engine shortened is condensed again only when it is big: here,
        # whatever its size)
        out = AgingEngine(policy=AgingPolicy(shortened_output_max_tokens=0)).apply(
            units, EngineContext(tokens=TokenCounter(), latest_user_text="fix", input_texts=given)
        )
        aged = next(t for t, u in zip(out.texts, units, strict=True) if u.text == current)
        assert aged != current  # fresh: the runtime frames go
        assert (wanted in aged) is kept


def test_an_output_another_engine_shortened_stays_as_it_left_it_unless_big() -> None:
    # held-out sets 8-10: a test report or a log the tool filter had already shortened around
    # its facts was summarised again once answered (behave's failing scenarios, meson's
    # ``Fail: 2``, gcov's ``Lines executed``): aggressive lost facts standard kept
    shortened = "\n".join(
        ["FAILED tests/test_a.py::test_x - AssertionError: 3 != 5"]
        + [f"Branches executed:{i}.00% of {i + 9}" for i in range(30)]
        + ["… 120 passing tests omitted <<cx:0123456789abcdef>>", "1 failed, 120 passed in 3.2s"]
    )
    original = shortened.replace("… 120 passing tests omitted <<cx:0123456789abcdef>>", "ok")
    data = agent_session([shortened], final="Thanks. Now update the changelog.")
    units = parse_record(data).units
    inputs = tuple(original if u.text == shortened else u.text for u in units)
    ctx = EngineContext(tokens=TokenCounter(), latest_user_text="changelog", input_texts=inputs)
    for limit, kept in ((3000, True), (0, False)):
        out = AgingEngine(policy=AgingPolicy(shortened_output_max_tokens=limit)).apply(units, ctx)
        aged = next(t for t, u in zip(out.texts, units, strict=True) if u.text == shortened)
        assert (aged == shortened) is kept
        assert ("Branches executed:17.00% of 26" in aged) is kept


def test_data_another_engine_shortened_ages_on_and_an_event_stream_is_a_report() -> None:
    # the public corpus: an answered JSON document or process table that the crusher or the
    # listing view shortened is data, not a report around its facts: aging condenses it
    # further (aggressive public 78.5 -> 80.0 %); a build tool's JSON event stream (cargo's
    # ``{"reason":...}``) is a report, left as the tool filter left it
    rows = [
        f'  {{"pid": {100 + i}, "user": "app", "cpu": {i % 7}.5, "cmd": "worker {i}"}},'
        for i in range(40)
    ]
    document = "[\n" + "\n".join(rows) + "\n]"
    shortened_doc = "[\n" + "\n".join(rows[:3]) + "\n  … 37 more items <<cx:0123456789abcdef>>\n]"
    events = "\n".join(
        [
            f'{{"reason":"compiler-artifact","target":{{"name":"dep{i}"}},"fresh":true}}'
            for i in range(40)
        ]
        + ['{"reason":"compiler-message","message":{"rendered":"error[E0308]: mismatched types"}}']
        + ['{"reason":"build-finished","success":false}']
    )
    shortened_events = "\n".join(
        events.splitlines()[:1]
        + ["… 39 lines omitted <<cx:00112233445566ff>>"]
        + events.splitlines()[-2:]
        + [f"note {i}: the crate graph has {i} nodes" for i in range(12)]
    )
    data = agent_session(
        [shortened_doc, shortened_events], final="Thanks. Now update the changelog."
    )
    units = parse_record(data).units
    originals = {shortened_doc: document, shortened_events: events}
    inputs = tuple(originals.get(u.text, u.text) for u in units)
    ctx = EngineContext(tokens=TokenCounter(), latest_user_text="changelog", input_texts=inputs)
    out = AgingEngine().apply(units, ctx)
    aged = dict(zip((u.text for u in units), out.texts, strict=True))
    assert aged[shortened_doc] != shortened_doc  # data ages on
    assert aged[shortened_events] == shortened_events  # a report stays as the filter left it


def test_json_lines_another_engine_shortened_are_a_log() -> None:
    # held-out set 9: an edge proxy's JSON access log (``cat edge-access.jsonl``) that
    # logtemplate shortened around its 5xx requests is a log, not data: it stays as it was left
    lines = [
        f'{{"start_time":"2026-12-06T23:22:{i:02d}.798Z","method":"GET","path":"/api/items/{i}",'
        f'"response_code":200,"duration":{i % 9}}}'
        for i in range(40)
    ]
    lines[17] = lines[17].replace('"response_code":200', '"response_code":503')
    original = "\n".join(lines)
    shortened = "\n".join(
        [lines[0], "… 16 more lines like this <<cx:0123456789abcdef>>", *lines[17:]]
    )
    data = agent_session([shortened], final="Thanks. Now update the changelog.")
    units = parse_record(data).units
    inputs = tuple(original if u.text == shortened else u.text for u in units)
    ctx = EngineContext(tokens=TokenCounter(), latest_user_text="changelog", input_texts=inputs)
    out = AgingEngine().apply(units, ctx)
    aged = next(t for t, u in zip(out.texts, units, strict=True) if u.text == shortened)
    assert aged == shortened
