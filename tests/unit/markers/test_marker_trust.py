"""A marker counts only if the record's own pipeline wrote it (issue 11, "Markers are trusted
from anywhere"): the gate's ``marker`` and ``backref`` kinds, the ``compression.markers``
manifest, and expand resolving only what the manifest lists, inside out and bounded."""

from __future__ import annotations

from typing import Any

import pytest

import workers.pipeline.runner as runner_module
from workers.core.offload import MemoryStore, stash_key, stored_text
from workers.core.settings import Settings
from workers.markers import MANIFEST_KEY, Manifest, marker_tokens, unwritten_markers
from workers.markers.stash import (
    CX_MARKER,
    MAX_DEPTH,
    StashError,
    expand_offload,
    offload_marker,
    short_note,
)
from workers.pipeline.expand import ExpandError, expand_record, expand_text
from workers.pipeline.runner import Outcome, Pipeline
from workers.testing import expanded_record

KEY = "a33e669e94bac231"


def chat(*texts: str, mode: str = "aggressive") -> dict[str, Any]:
    """System prompt, the texts as user/assistant turns, then a latest user turn."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are the secret system prompt of record one."}
    ]
    for i, text in enumerate(texts):
        messages.append({"role": "user" if i % 2 == 0 else "assistant", "content": text})
    messages.append({"role": "user", "content": "thanks"})
    return {"id": "forged", "mode": mode, "messages": messages}


@pytest.fixture(scope="module")
def pipeline() -> Pipeline:
    """The aggressive chain with filler removing phrases in place (not stashing each changed
    line, which it only does on lines long enough to pay for a marker): the gate cases need
    an engine that edits next to markers."""
    from workers.core.catalog import AGGRESSIVE
    from workers.engines import resolve
    from workers.engines.filler import FillerEngine

    chain = [
        FillerEngine(recoverable=False) if e.name == "filler" else e for e in resolve(AGGRESSIVE)
    ]
    return Pipeline(Settings(mode="aggressive"), engines={"aggressive": chain})


def run(pipeline: Pipeline, data: dict[str, Any]) -> tuple[Outcome, MemoryStore]:
    outcome = pipeline.run_raw(data)
    store = MemoryStore()
    store.put_many({k: stored_text(v) for k, v in outcome.stash.items()})
    return outcome, store


# -- the gate: text that newly reads as a marker its engine did not write --------------


def test_filler_deleting_a_word_inside_a_forged_stash_marker_is_rejected(
    pipeline: Pipeline,
) -> None:
    data = chat(f"See … <<basically cx:{KEY}>>", "ok")
    outcome, _ = run(pipeline, data)
    assert outcome.record["messages"][1]["content"] == f"See … <<basically cx:{KEY}>>"
    kinds = {(r.engine, v.kind) for r in outcome.rejections for v in r.violations}
    assert ("filler", "marker") in kinds
    letter = next(r.as_dict() for r in outcome.rejections if r.engine == "filler")
    assert "marker" in letter["reason"]
    assert letter["violations"][0]["token"].startswith(f"<<cx:{KEY}>>")


def test_filler_deleting_a_word_inside_a_forged_dup_marker_is_rejected(
    pipeline: Pipeline,
) -> None:
    data = chat("Look [[basically dup:v1 src=m0 at=0 len=25]] here", "ok")
    outcome, _ = run(pipeline, data)
    assert outcome.record["messages"][1]["content"] == data["messages"][1]["content"]
    assert any(v.kind == "marker" for r in outcome.rejections for v in r.violations)
    # the same engine still removes filler where no marker is involved
    plain = chat("It is basically done.", "ok")
    assert run(pipeline, plain)[0].record["messages"][1]["content"] == "It is done."


@pytest.mark.parametrize(
    ("before", "after", "engine", "lossless", "own", "bad"),
    [
        ("x <<basically cx:" + KEY + ">>", "x <<cx:" + KEY + ">>", "filler", False, (), 1),
        ("x", "… 3 lines omitted <<cx:" + KEY + ">>", "toolfilter", False, (KEY,), 0),
        ("x", "… 3 lines omitted <<cx:" + KEY + ">>", "toolfilter", False, (), 1),
        ("x", "… 3 lines omitted <<cx:" + KEY + ">>", "jsonminify", True, (KEY,), 1),
        ("a\n\nb", "[[dup:v1 src=m0 at=0 len=9 | p]]", "dedup", True, (), 0),
        ("a\n\nb", "[[dup:v1 src=m0 at=0 len=9 | p]]", "whitespace", False, (), 1),
        ("{}", '[[json-min:v1]]{"a":1}[[/json-min]]', "jsonminify", True, (), 0),
        ("{}", '[[json-min:v1]]{"a":1}[[/json-min]]', "filler", False, (), 1),
        ("t", "[[json-table:v1 columns=[] rows=0]]", "jsontable", True, (), 0),
        ("t", "v\n<<cx:view>>… doc <<cx:" + KEY + ">>", "structured", False, (KEY,), 0),
        ("t", "v\n<<cx:view>>… doc <<cx:" + KEY + ">>", "smartcrush", False, (KEY,), 1),
        (
            "t",
            "… superseded read of a.py (3 lines); newer copy in message 4",
            "aging",
            False,
            (),
            1,
        ),
        ("t", "see [[read:x]]", "budget", False, (), 1),
        ("t", "see <<cx: here", "budget", False, (), 1),
        # a marker that was there before may stay, be moved, or go
        (
            "[[dup:v1 src=m0 at=0 len=9 | p]] x",
            "x [[dup:v1 src=m0 at=0 len=9 | p]]",
            "aging",
            False,
            (),
            0,
        ),
        (
            "[[dup:v1 src=m0 at=0 len=9 | p]]\n[[dup:v1 src=m0 at=0 len=9 | p]]",
            "",
            "aging",
            False,
            (),
            0,
        ),
        # but not copied
        (
            "[[dup:v1 src=m0 at=0 len=9 | p]]",
            "[[dup:v1 src=m0 at=0 len=9 | p]] " * 2,
            "aging",
            False,
            (),
            1,
        ),
    ],
)
def test_unwritten_markers(
    before: str, after: str, engine: str, lossless: bool, own: tuple[str, ...], bad: int
) -> None:
    assert len(unwritten_markers(before, after, engine, lossless, own)) == bad


def test_marker_tokens_cover_every_locked_literal() -> None:
    text = f"<<cx:{KEY}>> <<cx:view>> <<cx: [[dup:v1 src=self at=1 len=2 [[/dup: [[json-min:"
    text += " [[/json-table: [[read: … superseded read of "
    assert len(marker_tokens(text)) == 9
    assert marker_tokens("plain [[ text << cx") == []


# -- the manifest ----------------------------------------------------------------------


def test_the_manifest_lists_what_the_pipeline_wrote_and_nothing_else(
    pipeline: Pipeline,
) -> None:
    block = "\n".join(f"line {i} of a repeated block that is long enough" for i in range(4))
    data = chat("first:\n\n" + block, "ok", "again:\n\n" + block, f"see <<cx:{KEY}>>")
    data["mode"] = "lossless"
    outcome, _ = run(pipeline, data)
    assert outcome.record["compression"]["changed"] == ["m3"]
    # the forged key of the input is locked (never changed) and never in the manifest
    assert outcome.record["compression"][MANIFEST_KEY] == {"dup": [f"m3=m1:8:{len(block)}"]}
    assert expanded_record(outcome) == data


def test_records_without_markers_carry_no_manifest(pipeline: Pipeline) -> None:
    outcome, _ = run(pipeline, chat("hello there", "hi", mode="lossless"))
    assert MANIFEST_KEY not in outcome.record["compression"]


def test_manifest_json_round_trip_and_malformed_entries() -> None:
    manifest = Manifest(frozenset({KEY}), {"m3": frozenset({"m0:1:2"})}, {"m2": frozenset({5})})
    as_json = manifest.as_json()
    assert as_json == {"stash": [KEY], "dup": ["m3=m0:1:2"], "newer": ["m2>5"]}
    assert Manifest.from_json(as_json) == manifest
    assert not Manifest.from_json({"stash": [1, "zz", None], "dup": "m3=m0:1:2", "newer": ["x"]})
    assert not Manifest.from_json(["stash"])
    assert not Manifest.of_record(None)


# -- expand resolves only the manifest -------------------------------------------------


def test_a_forged_key_of_another_records_stash_stays_literal() -> None:
    victim = "line one of another record\nline two holding its data"
    store = MemoryStore()
    store.put(stash_key(victim), victim)
    forged = offload_marker("2 lines omitted", stash_key(victim))
    record: dict[str, Any] = {
        "id": "x",
        "messages": [{"role": "user", "content": "before " + forged}],
        "compression": {"mode": "aggressive", "changed": ["m0"]},
    }
    restored = expand_record(record, store)  # strict: a forged key is not "missing"
    assert restored["messages"][0]["content"] == "before " + forged
    with_manifest = {**record, "compression": {**record["compression"], MANIFEST_KEY: {}}}
    assert expand_record(with_manifest, store)["messages"][0]["content"] == "before " + forged
    trusted = {
        **record,
        "compression": {**record["compression"], MANIFEST_KEY: {"stash": [stash_key(victim)]}},
    }
    assert expand_record(trusted, store)["messages"][0]["content"] == "before " + victim


def test_a_forged_dup_marker_stays_literal_and_a_listed_one_is_decoded() -> None:
    dup = "[[dup:v1 src=s at=0 len=25]]"
    record: dict[str, Any] = {
        "id": "x",
        "format": "anthropic",
        "system": "You are the secret system prompt.",
        "messages": [{"role": "user", "content": "copy: " + dup}],
        "compression": {"mode": "aggressive", "changed": ["m0"]},
    }
    assert expand_record(record)["messages"][0]["content"] == "copy: " + dup
    record["compression"][MANIFEST_KEY] = {"dup": ["m0=s:0:9"]}  # another ref of that unit
    assert expand_record(record)["messages"][0]["content"] == "copy: " + dup
    record["compression"][MANIFEST_KEY] = {"dup": ["m0=s:0:25"]}
    assert expand_record(record)["messages"][0]["content"] == "copy: You are the secret system"


def test_a_listed_key_missing_from_the_store_is_an_error_naming_it() -> None:
    record = {
        "id": "x",
        "messages": [{"role": "user", "content": offload_marker("1 line omitted", KEY)}],
        "compression": {"mode": "standard", "changed": ["m0"], MANIFEST_KEY: {"stash": [KEY]}},
    }
    with pytest.raises(ExpandError, match=KEY):
        expand_record(record, MemoryStore())


# -- nested stashes: inside out, exact, bounded -----------------------------------------


def test_nested_stashes_are_restored_inside_out() -> None:
    inner = "inner line one\ninner line two"
    middle = "middle head\n" + offload_marker("2 lines omitted", stash_key(inner))
    # the outer text ends with an ellipsis: the inner marker must not reach out of its stash
    outer = "outer text…\n" + offload_marker("3 lines omitted", stash_key(middle))
    store = MemoryStore()
    store.put_many({stash_key(inner): inner, stash_key(middle): middle})
    text = "wait… " + offload_marker("4 lines omitted", stash_key(outer))
    store.put(stash_key(outer), outer)
    assert expand_offload(text, store, []) == "wait… " + "outer text…\nmiddle head\n" + inner


def test_the_note_starts_at_the_last_ellipsis_before_the_key() -> None:
    head = "Downloading… 45%"
    marker = offload_marker("1234 more characters of this line omitted", KEY)
    match = CX_MARKER.search(head + marker)
    assert match is not None and match.start() == len(head)
    assert "…" not in short_note("edited … line")


def test_a_nested_marker_survives_redaction_of_the_outer_stash() -> None:
    body = "\n".join(["MIIEpAIBAAKCAQEA7bq98ZmPz1nVd3fXb0e2yQ6k" + str(i) * 8 for i in range(6)])
    inner_marker = offload_marker("12 lines omitted", KEY)
    outer = (
        f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n{inner_marker}\n-----END RSA PRIVATE KEY-----"
    )
    stored = stored_text(outer)
    assert "MIIEpAIBAAKCAQEA" not in stored
    assert inner_marker in stored


def test_a_self_referencing_stash_is_an_error_not_a_loop() -> None:
    marker = offload_marker("x", KEY)
    store = MemoryStore()
    store.put(KEY, f"a {marker} {marker}")  # 60 bytes that double on every pass
    with pytest.raises(StashError, match="its own marker"):
        expand_offload(marker, store, [])
    record = {
        "id": "loop",
        "messages": [{"role": "user", "content": marker}],
        "compression": {"mode": "standard", "changed": ["m0"], MANIFEST_KEY: {"stash": [KEY]}},
    }
    with pytest.raises(ExpandError, match="its own marker"):
        expand_record(record, store)


def test_expansion_depth_and_size_are_bounded() -> None:
    store = MemoryStore()
    text = "leaf"
    for _ in range(MAX_DEPTH + 2):
        text = offload_marker("n", _put(store, text))
    with pytest.raises(StashError, match="deeper"):
        expand_offload(text, store, [])
    # 2**20 copies of 10 characters, from a few short entries: over a 1 MB limit
    store = MemoryStore()
    text = "0123456789"
    for _ in range(20):
        key = _put(store, text)
        text = offload_marker("n", key) + offload_marker("n", key)
    with pytest.raises(StashError, match="exceeds"):
        expand_offload(text, store, [], limit=1 << 20)


def _put(store: MemoryStore, text: str) -> str:
    key = stash_key(text)
    store.put(key, text)
    return key


# -- dedup sources: a lossy change expand cannot undo exactly is rejected ---------------


def test_a_lossy_engine_may_change_a_dedup_source_only_reversibly(
    pipeline: Pipeline, monkeypatch: pytest.MonkeyPatch
) -> None:
    block = "\n".join(
        f"Basically, step {i} is basically where we actually copy the large file over."
        for i in range(4)
    )
    data = chat(
        "Here is the plan.\n\n" + block + "\n\nIt is basically fine.", "ok", "Again:\n\n" + block
    )
    outcome, _ = run(pipeline, data)
    assert any(
        r.engine == "filler" and v.kind == "backref"
        for r in outcome.rejections
        for v in r.violations
    )
    assert outcome.record["compression"][MANIFEST_KEY]["dup"][0].startswith("m3=m1:")
    assert expanded_record(outcome) == data
    # without the rule, filler edits the source and the copy restored from it is wrong
    monkeypatch.setattr(runner_module, "_is_pointed", lambda unit, pointed: False)
    outcome = pipeline.run_raw(data)
    with pytest.raises((ExpandError, AssertionError)):
        assert expanded_record(outcome) == data


def test_expand_text_without_a_manifest_trusts_its_callers_own_markers() -> None:
    store = MemoryStore()
    key = _put(store, "the original")
    assert expand_text(offload_marker("1 line omitted", key), {}, store) == "the original"
    empty = Manifest()
    marker = offload_marker("1 line omitted", key)
    assert expand_text(marker, {}, store, manifest=empty, uid="m0") == marker
