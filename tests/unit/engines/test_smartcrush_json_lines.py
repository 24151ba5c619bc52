"""JSON lines that are data (a ``.jsonl`` file, ``jq -c`` output, an access log of requests
written as JSON) are crushed as the items of one array: the first and last lines, the lines
with an error signal (a 5xx ``response_code``), the lines the request names and the outliers
stay whole; runs of the others go to the stash (held-out set 9: ``cat out/edge-access.jsonl``,
159,727 tokens, saved 0 % in standard).  A JSON log whose lines say they are log lines (a
level) is left to logtemplate."""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from workers.core.settings import Settings
from workers.core.tokens import TokenCounter
from workers.engines.base import EngineContext
from workers.engines.smartcrush import crush_text
from workers.pipeline.runner import Pipeline
from workers.testing import expanded, expanded_record, openai_record

CTX = EngineContext(tokens=TokenCounter())
_MARKER = re.compile(r"… \d+ of \d+ lines omitted(?: \([^)\n]*\))? <<cx:[0-9a-f]{16}>>")


def _access_log(n: int = 900) -> tuple[str, list[str]]:
    lines: list[str] = []
    failed: list[str] = []
    for k in range(n):
        code = 503 if k % 97 == 40 else 500 if k % 131 == 7 else 200
        row = {
            "start_time": f"2026-12-06T23:22:{k // 60 % 60:02d}.{k % 1000:03d}Z",
            "method": "POST" if code != 200 else "GET",
            "path": "/api/payments/charge" if code == 503 else f"/api/orders/{1000 + k % 40}",
            "response_code": code,
            "bytes_sent": 40 + k % 3,
            "duration": k % 5,
            "upstream_host": "10.4.2.12:8080",
            "x_request_id": f"req-{k:06x}",
            "user_agent": "shop-web/5.2",
        }
        line = json.dumps(row, separators=(",", ":"))
        lines.append(line)
        if code >= 500:
            failed.append(line)
    return "\n".join(lines) + "\n", failed


def test_a_big_json_lines_read_keeps_every_failed_request() -> None:
    text, failed = _access_log()
    assert len(text) > 32_000
    data = openai_record(
        "jl-1", ("user", "Which requests failed with 5xx?"), ("tool", text),
        command="cat out/edge-access.jsonl",
    )  # fmt: skip
    counter = TokenCounter()
    for mode in ("standard", "aggressive"):
        outcome = Pipeline(Settings(mode=mode)).run_raw(json.loads(json.dumps(data)))
        visible = outcome.record["messages"][-1]["content"]
        for line in failed:
            assert line in visible, (mode, line)
        assert counter.count(visible) < 0.3 * counter.count(text), mode
        back = expanded_record(outcome)["messages"][-1]["content"]
        assert back == text


def test_the_lines_the_request_names_stay() -> None:
    text, _ = _access_log(300)
    result = crush_text(text, CTX, terms=frozenset({"req-0000c8"}))
    assert result is not None
    assert '"x_request_id":"req-0000c8"' in result.text
    assert expanded(result.text, result.stash) == text


def test_a_json_log_with_levels_is_left_to_logtemplate() -> None:
    text = "\n".join(
        json.dumps({"level": "info", "ts": k, "msg": f"synced account {k}", "svc": "billing"})
        for k in range(200)
    )
    assert crush_text(text, CTX) is None


_objects = st.dictionaries(
    st.text(max_size=6),
    st.one_of(
        st.integers(min_value=-(10**20), max_value=10**20),
        st.text(max_size=12),
        st.sampled_from([1.5, 0.0, None, True]),
        st.lists(st.integers(), max_size=3),
    ),
    min_size=1,
    max_size=4,
)


@settings(max_examples=80, deadline=None)
@given(
    rows=st.lists(_objects, min_size=1, max_size=60),
    spacing=st.sampled_from([(",", ":"), (", ", ": ")]),
    noise=st.lists(st.sampled_from(["", "not json", "{broken", "[1, 2]"]), max_size=3),
)
def test_any_json_lines_expand_to_the_input(
    rows: list[dict[str, object]], spacing: tuple[str, str], noise: list[str]
) -> None:
    lines = [json.dumps(row, separators=spacing, ensure_ascii=False) for row in rows]
    for k, extra in enumerate(noise):
        lines.insert((k * 7) % (len(lines) + 1), extra)
    text = "\n".join(lines)
    result = crush_text(text, CTX)
    if result is None:
        return
    assert expanded(result.text, result.stash) == text
    for line in result.text.split("\n"):
        assert line in lines or _MARKER.fullmatch(line), line
