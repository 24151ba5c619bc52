"""Dead letters are redacted like everything else (CLI and worker), before they are cut."""

from __future__ import annotations

import base64
from pathlib import Path

import orjson

from workers.cli import main
from workers.core.settings import Settings
from workers.service.process import Processor
from workers.service.records import InMessage
from workers.service.topics import TopicNames
from workers.testing.worker import gate_rejecting_pipeline

KEY = "sk-proj-" + "Zq3vT9wXk2LmN8pR4sYb7cJd" * 3
NAMES = TopicNames.from_prefix("t.")


def _record(**extra: object) -> bytes:
    return orjson.dumps({"id": "r1", "messages": [{"role": "user", "content": "hi"}], **extra})


def _cli_letters(tmp_path: Path, lines: list[bytes]) -> bytes:
    src, out, dlq = tmp_path / "in.jsonl", tmp_path / "out.jsonl", tmp_path / "dlq.jsonl"
    src.write_bytes(b"\n".join([_record(), *lines]) + b"\n")  # one good record: exit 0
    args = ["compress", "--mode", "off", "-i", str(src), "-o", str(out), "--dead-letter", str(dlq)]
    assert main([*args, "--quiet"]) == 0
    return dlq.read_bytes()


def test_cli_letters_do_not_echo_a_secret(tmp_path: Path) -> None:
    lines = [
        _record(format=KEY),  # unknown format: the reason used to echo it
        orjson.dumps({"id": KEY, "messages": [{"role": "user", "content": 1}]}),
        b"not json " + KEY.encode(),
        b"not json \xff " + KEY.encode(),  # not UTF-8: original_value_b64
    ]
    letters = _cli_letters(tmp_path, lines)
    assert len(letters.splitlines()) == 4
    assert b"sk-proj-" not in letters
    bodies = [orjson.loads(x) for x in letters.splitlines()]
    assert "[REDACTED:openai_key]" in bodies[0]["reason"]
    assert bodies[1]["record_id"] == "[REDACTED:openai_key]"
    decoded = base64.b64decode(bodies[3]["original_value_b64"])
    assert b"sk-proj-" not in decoded and decoded.startswith(b"not json \xff [REDACTED:")


def test_redaction_runs_before_the_cut(tmp_path: Path) -> None:
    # the secret straddles the 65,536-character prefix a dead letter keeps
    line = b"{" + b"x" * 65_520 + b" password=hunter2abcdefghij" + b"y" * 100
    (body,) = [orjson.loads(x) for x in _cli_letters(tmp_path, [line]).splitlines()]
    assert "hunter" not in body["original_value"]
    assert len(body["original_value"]) == 65_536


def _processor() -> Processor:
    return Processor(gate_rejecting_pipeline(Settings()), NAMES, "g", clock=lambda: 0.0)


def _msg(value: bytes, key: bytes | None = b"k1", secret_header: bool = True) -> InMessage:
    headers = (("trace", b"abc"), ("authorization", b"Bearer " + KEY.encode()))
    headers = headers if secret_header else headers[:1]
    return InMessage(NAMES.transcripts, 0, 1, 0, key, value, headers)


def test_worker_letter_with_a_secret_is_redacted_and_not_replayable() -> None:
    bad_id = orjson.dumps({"id": KEY, "messages": [{"role": "user", "content": 1}]})
    for value in (_record(format=KEY), bad_id, b"{broken " + KEY.encode()):
        result = _processor().process(_msg(value))
        assert not result.ok
        (out,) = result.outputs
        assert b"sk-proj-" not in out.value
        assert all(b"sk-proj-" not in v for _, v in out.headers), out.headers
        assert KEY not in (result.reason or "")
        body = orjson.loads(out.value)
        assert body["original_redacted"] is True
        assert dict(out.headers)["ctxpress.dlq.replayable"] == b"false"


def test_worker_letter_without_a_secret_stays_replayable() -> None:
    raw = b'{"id": "x1", "messages": [ truncated'
    (out,) = _processor().process(_msg(raw, secret_header=False)).outputs
    body = orjson.loads(out.value)
    assert body["original_value"].encode() == raw
    assert "original_redacted" not in body
    assert dict(out.headers)["ctxpress.dlq.replayable"] == b"true"


def test_worker_cut_letter_is_redacted_before_the_cut() -> None:
    small = Settings(max_message_bytes=4096, max_record_bytes=1 << 20)
    proc = Processor(gate_rejecting_pipeline(small), NAMES, "g", clock=lambda: 0.0)
    value = b"{" + b"y" * 250 + b" password=hunter2abcdefghij" + b"z" * 20_000
    (out,) = proc.process(_msg(value)).outputs
    body = orjson.loads(out.value)
    assert body["original_truncated"] is True
    assert b"hunter" not in out.value
