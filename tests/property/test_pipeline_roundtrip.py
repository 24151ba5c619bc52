"""Whole-pipeline property: expand(compress(record)) == record in lossless mode."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workers.core.jsonl import detect_layout, dump_layout
from workers.core.settings import Settings
from workers.pipeline.expand import expand_record
from workers.pipeline.runner import Pipeline

PIPELINE = Pipeline(Settings(mode="lossless"))

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=8), inner, max_size=5)
    ),
    max_leaves=25,
)


@st.composite
def tool_texts(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["json-table", "json", "text", "repeat"]))
    if kind == "json-table":
        keys = draw(st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=4, unique=True))
        rows = draw(
            st.lists(st.fixed_dictionaries({k: scalars for k in keys}), min_size=8, max_size=12)
        )
        return json.dumps(
            rows, indent=draw(st.sampled_from([None, 2, 4])), ensure_ascii=draw(st.booleans())
        )
    if kind == "json":
        return json.dumps(draw(json_values), indent=draw(st.sampled_from([None, 2])))
    if kind == "repeat":
        block = "\n".join(
            draw(
                st.lists(
                    st.text(min_size=20, max_size=40).map(lambda s: s.replace("\n", " ")),
                    min_size=3,
                    max_size=5,
                )
            )
        )
        return f"{block}\n\n{draw(st.text(max_size=30))}\n\n{block}"
    return draw(st.text(max_size=200))


@st.composite
def records(draw: st.DrawFn) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": draw(st.text(max_size=50))}]
    for n in range(draw(st.integers(1, 4))):
        messages.append({"role": "user", "content": draw(st.text(max_size=80))})
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"c{n}",
                        "type": "function",
                        "function": {"name": "bash", "arguments": "{}"},
                    }
                ],
            }
        )
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": draw(tool_texts())})
    record: dict[str, Any] = {"id": draw(st.text(min_size=1, max_size=10)), "messages": messages}
    if draw(st.booleans()):
        record["extra"] = draw(json_values)
    return record


@given(records())
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_lossless_pipeline_round_trip(record: dict[str, Any]) -> None:
    line = json.dumps(record).encode()
    outcome = PIPELINE.run_raw(json.loads(line))
    outcome.record["compression"]["layout"] = detect_layout(line, json.loads(line))
    wire = json.loads(json.dumps(outcome.record))
    restored = expand_record(wire)
    assert restored == record
    assert dump_layout(restored, wire["compression"]["layout"]) == line
