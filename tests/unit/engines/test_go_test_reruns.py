"""Re-runs of ``go test -v`` in one session: no gate rejection, no redacted test names.

Held-out set 33 (a Go service): dedup quoted a repeated run's first line in its marker note
(``same 9 lines as message 9: --- PASS: TestParsePrice/whole (0.00s)]]``); the store's
redaction read ``PASS: TestParsePrice/whole`` as a password there (the line did not end after
the duration), so the stashed text no longer gave the message back, and the gate rejected the
tool filter's work on the run every later run points into.
"""

from __future__ import annotations

import json
from typing import Any

from workers.core.offload import stored_text
from workers.core.settings import Settings
from workers.pipeline.runner import Pipeline

CASES = 9


def _run(fails: set[str]) -> str:
    out = []
    for test in ("TestParsePrice", "TestSlug", "TestTotals"):
        cases = [f"{test}/case_{k}" for k in range(CASES)]
        out.append(f"=== RUN   {test}")
        out += [f"=== RUN   {case}" for case in cases]
        out += [f"    parse_test.go:105: {case} got 1, want 2" for case in cases if case in fails]
        failed = any(case in fails for case in cases)
        out.append(f"--- {'FAIL' if failed else 'PASS'}: {test} (0.00s)")
        out += [f"    --- {'FAIL' if c in fails else 'PASS'}: {c} (0.00s)" for c in cases]
    out.append("FAIL" if fails else "PASS")
    out.append(
        "FAIL\texample.com/inv/api\t0.005s" if fails else "ok  \texample.com/inv/api\t0.004s"
    )
    return "\n".join(out) + "\n"


def _session() -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "fix the failing table tests"}]
    runs = [
        {"TestSlug/case_3", "TestSlug/case_4", "TestParsePrice/case_1"},
        {"TestSlug/case_3", "TestSlug/case_4"},
        {"TestSlug/case_4"},
        {"TestSlug/case_4"},
        set(),
    ]
    for i, fails in enumerate(runs):
        call = {"command": "go test -v ./internal/api/"}
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"c{i}",
                        "type": "function",
                        "function": {"name": "bash", "arguments": json.dumps(call)},
                    }
                ],
            }
        )
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": _run(fails)})
    return {"id": "reruns", "messages": messages}


def test_a_note_quoting_a_passing_test_is_no_password() -> None:
    note = (
        "[[dup:v1 src=m9 at=712 len=420 | same 9 lines as message 9: "
        "--- PASS: TestParsePrice/whole (0.00s)]]\n"
    )
    assert stored_text(note) == note
    assert "[REDACTED:kv_secret]" in stored_text("PASS: hunter2secret\n")


def test_reruns_compress_without_a_gate_rejection() -> None:
    outcome = Pipeline(Settings(mode="standard")).run_raw(_session())
    assert outcome.rejections == []
    assert "REDACTED" not in json.dumps(outcome.record)
    assert outcome.stats["tokens_after"] < outcome.stats["tokens_before"] * 0.6
