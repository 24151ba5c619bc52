"""produce/consume options and the worker's mode header, without a broker (issue 14)."""

from __future__ import annotations

import orjson
import pytest

from workers.cli._common import UserError
from workers.cli.consume_cmd import parse_offset, parse_time
from workers.cli.produce_cmd import parse_headers
from workers.core.settings import Settings
from workers.messages import RESERVED_KEY
from workers.pipeline.factory import build_pipeline
from workers.service.kafka.io import route
from workers.service.process import Processor
from workers.service.records import MODE_HEADER, InMessage, header_mode
from workers.service.topics import TopicNames

NAMES = TopicNames.from_prefix("t.")
JSON_ROWS = orjson.dumps([{"id": i, "name": f"item {i}", "ok": True} for i in range(30)]).decode()


def test_route_takes_the_key_from_a_field() -> None:
    line = orjson.dumps({"id": "r1", "meta": {"user": "u7", "n": 3}, "messages": []})
    assert route(line) == ("transcripts", b"r1")
    assert route(line, "meta.user") == ("transcripts", b"u7")
    assert route(line, "meta.n") == ("transcripts", b"3")
    assert route(line, "meta.absent") == ("transcripts", None)
    assert route(line, "meta") == ("transcripts", None)  # an object is no key


def test_headers_and_modes_parse() -> None:
    assert parse_headers(["tenant=acme", "q=a=b", "empty="]) == [
        ("tenant", b"acme"),
        ("q", b"a=b"),
        ("empty", b""),
    ]
    with pytest.raises(UserError):
        parse_headers(["novalue"])
    assert header_mode([("x", b"1"), (MODE_HEADER, b"off"), (MODE_HEADER, b" standard ")]) == (
        "standard"
    )
    assert header_mode([("x", b"1")]) is None


def test_offsets_and_times_parse() -> None:
    assert parse_offset("beginning") == "beginning"
    assert parse_offset("end") == "end"
    assert parse_offset("42") == 42
    assert parse_offset("-5") == -5
    with pytest.raises(UserError):
        parse_offset("later")
    assert parse_time("1764579600000") == 1_764_579_600_000
    assert parse_time("2026-12-01T09:00:00Z") == 1_796_115_600_000
    assert parse_time("2026-12-01T09:00:00") == 1_796_115_600_000  # no zone: UTC
    assert parse_time("-10m", now_ms=1_000_000) == 400_000
    assert parse_time("-2h", now_ms=10_000_000) == 10_000_000 - 7_200_000
    with pytest.raises(UserError):
        parse_time("yesterday")


def _message(value: bytes, headers: tuple[tuple[str, bytes], ...]) -> InMessage:
    return InMessage(NAMES.tool_outputs, 0, 1, 1_764_446_000_000, b"k", value, headers)


@pytest.mark.parametrize(
    ("field", "header", "want"),
    [
        (None, None, "lossless"),  # CTXPRESS_MODE
        ("off", None, "off"),  # the field
        ("off", b"lossless", "lossless"),  # the header wins over the field
        (None, b"off", "off"),
    ],
)
def test_the_worker_honours_the_mode_header(
    field: str | None, header: bytes | None, want: str
) -> None:
    record = {"id": "m1", "kind": "tool_output", "content": JSON_ROWS}
    if field is not None:
        record["mode"] = field
    headers = ((MODE_HEADER, header),) if header is not None else ()
    processor = Processor(build_pipeline(Settings(mode="lossless")), NAMES, "g")
    done = processor.process(_message(orjson.dumps(record), headers))
    assert done.ok, done.reason
    assert done.mode == want
    out = orjson.loads(done.outputs[0].value)
    assert out[RESERVED_KEY]["mode"] == want
    changed = out["content"] != JSON_ROWS
    assert changed is (want != "off")


def test_an_unknown_mode_header_is_a_dead_letter() -> None:
    record = {"id": "m2", "kind": "tool_output", "content": "x"}
    processor = Processor(build_pipeline(Settings()), NAMES, "g")
    done = processor.process(_message(orjson.dumps(record), ((MODE_HEADER, b"extreme"),)))
    assert not done.ok
    assert done.stage == "validate"
    assert "extreme" in (done.reason or "") and "lossless" in (done.reason or "")
