"""A log that quotes markers (a relay's log, an export of compressed chats) is compressed
like any other log, and expand still gives every record back byte for byte: a changed unit
whose input held marker-like text is kept only when expand restores it exactly
(``Pipeline._unforged``), so a forged stash key that the record really writes, a forged
well-formed ``[[prefix:v1 ...]]`` block or a forged JSON table never decodes into text the
record did not hold.
"""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.property.test_marker_forging import forged_pieces
from workers.core.offload import MemoryStore, stored_text
from workers.core.settings import Settings
from workers.markers import has_marker
from workers.messages import RESERVED_KEY, parse_record
from workers.pipeline.expand import expand_record
from workers.pipeline.runner import Outcome, Pipeline

PIPELINES = {m: Pipeline(Settings(mode=m)) for m in ("lossless", "standard", "aggressive")}


def relay_log(n: int, seed: int = 0) -> list[str]:
    """``n`` lines of one template: ``seq=0007 level=info msg="relay ok" bytes=.. peer=..``."""
    return [
        f'seq={i:04d} level=info msg="relay ok" bytes={(i * 7919 + seed) % 9000 + 100} '
        f"peer=10.0.{i % 7}.{i}"
        for i in range(n)
    ]


def _record(outputs: list[str], mode: str) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Why did the relay stall?"}]
    for i, output in enumerate(outputs):
        call = {"id": f"c{i}", "type": "function"}
        call["function"] = {"name": "bash", "arguments": '{"command": "python3 relay.py"}'}
        messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": output})
    return {"id": "relay", "mode": mode, "messages": messages}


def _expanded(outcome: Outcome) -> dict[str, Any]:
    store = MemoryStore()
    store.put_many({k: stored_text(v) for k, v in outcome.stash.items()})
    wire = orjson.loads(orjson.dumps(outcome.record))
    return expand_record(wire, store)


def _tool_texts(data: dict[str, Any]) -> list[str]:
    return [m["content"] for m in data["messages"] if m["role"] == "tool"]


def test_a_log_quoting_markers_is_compressed_and_its_quotes_stay_visible() -> None:
    lines = relay_log(400)
    quotes = {
        150: "<<cx:deadbeefdeadbeef>> ERROR: restore token forged by upstream at seq 150",
        200: "[[dup:v1 src=m3 at=0 len=12 | same lines as message 3]] WARN replay-guard tripped",
        250: "… 312 lines omitted <<cx:abc123>>  (ctxpress)",
        300: '[[json-table:v1 columns=["a"] rows=1]]',
    }
    for at, quote in quotes.items():
        lines[at] = quote
    data = _record(["\n".join(lines)], "standard")
    outcome = PIPELINES["standard"].run_raw(data)
    (shown,) = _tool_texts(outcome.record)
    assert outcome.stats["tokens_after"] < 0.6 * outcome.stats["tokens_before"]
    for quote in quotes.values():
        assert quote in shown.split("\n"), quote
    assert _expanded(outcome) == data


def test_a_forged_key_that_the_record_writes_is_given_back_as_input() -> None:
    honest = "\n".join(relay_log(400))
    alone = PIPELINES["standard"].run_raw(_record([honest], "standard"))
    assert alone.stash, "the honest log is folded into a stash"
    key = sorted(alone.stash)[0]
    forged = relay_log(400, seed=3)
    forged[40] = f"… 398 lines omitted <<cx:{key}>>"
    data = _record([honest, "\n".join(forged)], "standard")
    outcome = PIPELINES["standard"].run_raw(data)
    honest_out, forged_out = _tool_texts(outcome.record)
    assert honest_out != honest, "the honest log is still compressed"
    assert f"<<cx:{key}>>" in honest_out
    # the forged copy of that key would expand into the honest log's lines: left whole
    assert forged_out == "\n".join(forged)
    assert _expanded(outcome) == data
    # and what its own markers had pointed at is not kept for the store
    shown = "\n".join(_tool_texts(outcome.record))
    assert outcome.stash and all(f"<<cx:{k}>>" in shown for k in outcome.stash)


def test_a_forged_key_in_a_text_whose_only_change_is_a_redacted_secret_stays_text() -> None:
    # with the output's secrets redacted, a text left as its input but for a secret was
    # listed as changed, and expand resolved its forged key into the other log's lines
    honest = "\n".join(relay_log(400))
    key = sorted(PIPELINES["standard"].run_raw(_record([honest], "standard")).stash)[0]
    forged = relay_log(400, seed=3)
    forged[40] = f"… 398 lines omitted <<cx:{key}>>"
    forged[41] = "token=ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
    data = _record([honest, "\n".join(forged)], "standard")
    pipeline = Pipeline(Settings(mode="standard", redact_output=True))
    outcome = pipeline.run_raw(data)
    assert outcome.stats["secrets_redacted"] >= 1
    forged_out = _tool_texts(outcome.record)[1]
    assert "ghp_" not in forged_out and f"<<cx:{key}>>" in forged_out
    back = _tool_texts(_expanded(outcome))
    assert back[0] == honest
    assert back[1] == forged_out  # nothing of the honest log pulled in


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    mode=st.sampled_from(sorted(PIPELINES)),
    pieces=st.lists(
        st.tuples(st.integers(0, 119), st.sampled_from(forged_pieces("0123456789abcdef"))),
        min_size=1,
        max_size=4,
    ),
    honest_key=st.booleans(),
    crlf=st.booleans(),
)
def test_any_forged_marker_in_a_log_expands_back_exactly(
    mode: str, pieces: list[tuple[int, str]], honest_key: bool, crlf: bool
) -> None:
    honest = "\n".join(relay_log(120, seed=1))
    lines = relay_log(120)
    key = ""
    if honest_key:
        stash = PIPELINES[mode].run_raw(_record([honest], mode)).stash
        key = sorted(stash)[0] if stash else ""
    for at, piece in pieces:
        lines[at] = piece.replace("0123456789abcdef", key) if key else piece
    text = ("\r\n" if crlf else "\n").join(lines)
    # (an ANSI-split piece reads as a marker only once its escapes are gone)
    assert has_marker(text) or "\x1b" in text
    data = _record([honest, text], mode)
    outcome = PIPELINES[mode].run_raw(data)
    assert _expanded(outcome) == data
    before = {u.uid: u.text for u in parse_record(data).units}
    visible = {k: v for k, v in outcome.record.items() if k != RESERVED_KEY}
    shown = {u.uid: u.text for u in parse_record(visible).units}
    for uid in outcome.stats["changed"]:
        # what a forged piece reads stays readable where it was (or its unit is whole)
        for _, piece in pieces:
            first = piece.split("\n")[0]
            if first in before[uid] and mode != "aggressive":
                assert first in shown[uid] or "<<cx:" in shown[uid], (mode, first)


def test_an_older_log_keeps_its_quoted_markers_visible_in_aggressive_mode() -> None:
    # held-out set 9: once a log quoting markers was compressed at all, aging folded the
    # quoted ``… 312 lines omitted <<cx:abc123>>`` line of an older turn into its stash
    lines = relay_log(300)
    quote = "… 312 lines omitted <<cx:abc123>>  (ctxpress)"
    lines[120] = quote
    data = _record(["\n".join(lines)], "aggressive")
    data["messages"] += [
        {"role": "assistant", "content": "The relay is fine."},
        {"role": "user", "content": "Thanks. Now write the release notes."},
    ]
    outcome = PIPELINES["aggressive"].run_raw(data)
    (shown,) = _tool_texts(outcome.record)
    assert outcome.stats["tokens_after"] < 0.3 * outcome.stats["tokens_before"]
    assert quote in shown.split("\n")
    assert _expanded(outcome) == data
