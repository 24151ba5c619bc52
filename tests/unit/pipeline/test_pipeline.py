from __future__ import annotations

import pytest

from workers.core.settings import Settings
from workers.engines.dedup import DedupEngine
from workers.pipeline.runner import Pipeline, RecordError
from workers.testing import FunctionEngine, RaisingEngine, openai_record

LOG = "\n".join(
    [f"step {i}: ok" for i in range(40)]
    + ["ERROR: disk /dev/sda1 full (errno 28)"]
    + [f"step {i}: ok" for i in range(40, 80)]
)


def pipeline_with(*engines: object) -> Pipeline:
    return Pipeline(Settings(mode="off"), engines={"standard": list(engines)})  # type: ignore[arg-type]


def test_gate_reverts_only_the_failing_message_and_reports_it() -> None:
    drop_errors = FunctionEngine(
        "droperr",
        lambda t: "\n".join(
            line.replace(": ok", ":") for line in t.splitlines() if "ERROR" not in line
        ),
    )
    data = openai_record("r", ("user", "check the log"), ("tool", LOG))
    data["messages"].append(
        {
            "role": "tool",
            "tool_call_id": "x",
            "content": "\n".join(f"step {i}: ok" for i in range(30)),
        }
    )
    data["mode"] = "standard"
    outcome = pipeline_with(drop_errors).run_raw(data)
    # message 3 (with the error line) is reverted, message 4 keeps the engine's work
    assert outcome.record["messages"][3]["content"] == LOG
    assert outcome.record["messages"][4]["content"].startswith("step 0:\nstep 1:\n")
    assert len(outcome.rejections) == 1
    rejection = outcome.rejections[0].as_dict()
    assert rejection["engine"] == "droperr" and rejection["message_index"] == 3
    kinds = {v["kind"] for v in rejection["violations"]}
    assert "error_line" in kinds
    assert any(
        v["token"] == "ERROR: disk /dev/sda1 full (errno 28)" for v in rejection["violations"]
    )
    engine_stats = outcome.stats["engines"][0]
    assert engine_stats["status"] == "applied" and engine_stats["details"]["messages_rejected"] == 1


def test_engine_that_raises_is_reverted_and_dead_lettered() -> None:
    data = openai_record("r", ("user", "hello there"), ("tool", LOG))
    data["mode"] = "standard"
    outcome = pipeline_with(RaisingEngine()).run_raw(data)
    assert outcome.record["messages"][3]["content"] == LOG
    assert outcome.stats["engines"][0]["status"] == "error"
    assert outcome.rejections[0].as_dict()["error_class"] == "RuntimeError"


def test_inflating_change_is_dropped() -> None:
    grow = FunctionEngine("grow", lambda t: t + " padding padding padding")
    data = openai_record("r", ("user", "hello there"))
    data["mode"] = "standard"
    outcome = pipeline_with(grow).run_raw(data)
    assert outcome.record["messages"][1]["content"] == "hello there"
    assert outcome.stats["engines"][0]["status"] == "inflation"
    assert outcome.stats["tokens_after"] == outcome.stats["tokens_before"]


def test_frozen_messages_are_never_changed() -> None:
    shout = FunctionEngine("shout", lambda t: t[: len(t) // 2])
    data = openai_record("r", ("user", "x y z " * 20), system="system prompt words " * 20)
    data["mode"] = "standard"
    outcome = pipeline_with(shout).run_raw(data)
    assert outcome.record["messages"][0]["content"] == "system prompt words " * 20


def test_stats_add_up() -> None:
    block = "\n".join(f"line {i} of a repeated block with some words" for i in range(6))
    data = openai_record("r", ("user", "see"), ("tool", block + "\n\nmiddle\n\n" + block))
    data["mode"] = "standard"
    outcome = pipeline_with(DedupEngine()).run_raw(data)
    stats = outcome.stats
    assert stats["tokens_after"] < stats["tokens_before"]
    assert stats["engines"][0]["tokens_before"] == stats["tokens_before"]
    assert stats["engines"][-1]["tokens_after"] == stats["tokens_after"]
    assert stats["engines_applied"] == ["dedup"] and stats["changed"] == ["m3"]
    # a chain of lossless engines only: dedup refers to the repeat within the output as a
    # run of lines
    assert stats["engines"][0]["details"]["line_runs_replaced"] == 1


def test_unknown_mode_fails_with_valid_names() -> None:
    data = openai_record("r", ("user", "hi"))
    data["mode"] = "fast"
    with pytest.raises(RecordError) as info:
        pipeline_with().run_raw(data)
    assert "valid modes: off, lossless, standard, aggressive" in info.value.reason


def test_marker_literals_in_input_are_never_touched() -> None:
    block = "\n".join(
        f"line {i} of a repeated block with <<cx:0123456789abcdef>>" for i in range(6)
    )
    data = openai_record("r", ("user", "x"), ("tool", block + "\n\n" + block))
    data["mode"] = "standard"
    outcome = pipeline_with(DedupEngine()).run_raw(data)
    assert outcome.record["messages"][3]["content"] == block + "\n\n" + block


def test_a_record_can_disable_engines() -> None:
    block = "\n".join(f"line {i} of a repeated block with some words" for i in range(6))
    data = openai_record("r", ("user", "see"), ("tool", block + "\n\n" + block))
    data["mode"] = "standard"
    data["disable_engines"] = ["dedup"]
    outcome = pipeline_with(DedupEngine()).run_raw(data)
    assert outcome.stats["engines"][0]["status"] == "disabled"
    assert outcome.record["messages"][3]["content"] == block + "\n\n" + block
    data["disable_engines"] = ["turbo"]
    with pytest.raises(RecordError, match="valid engines: dedup, ansi, jsontable"):
        pipeline_with(DedupEngine()).run_raw(data)


def test_clear_content_caches_empties_every_content_cache() -> None:
    from workers.engines import _shell, jsonminify
    from workers.fidelity import facts
    from workers.pipeline.caches import clear_content_caches

    facts.critical_lines("Error: boom\n", "tool_result")
    jsonminify.decode("plain")
    _shell.parse_access("cat a.py", None)
    assert len(facts._LINES) and len(jsonminify.decode)
    clear_content_caches()
    assert not len(facts._LINES) and not len(facts._SPANS)
    assert len(jsonminify.decode) == 0
    assert len(_shell._shell_access) == 0
