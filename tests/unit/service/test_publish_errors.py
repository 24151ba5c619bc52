"""Every publishing error is sorted: retry, dead-letter this record and go on, or fatal."""

from __future__ import annotations

import asyncio

import orjson
import pytest
from aiokafka import errors as kafka_errors

from workers.core.settings import Settings
from workers.pipeline.factory import build_pipeline
from workers.service.handler import REFUSED_RETRIES, BatchHandler
from workers.service.process import REFUSED_LETTER_BYTES, Processor
from workers.service.publish import (
    DEAD_LETTER,
    FATAL,
    RETRY,
    ListPublisher,
    RecordsRefused,
    error_action,
    group_batches,
)
from workers.service.records import InMessage, OutMessage, wire_size
from workers.service.topics import TopicNames

NAMES = TopicNames.from_prefix("t.")


def _caused(outer: BaseException, inner: BaseException) -> BaseException:
    outer.__cause__ = inner
    return outer


@pytest.mark.parametrize(
    ("exc", "action"),
    [
        (kafka_errors.RequestTimedOutError(), RETRY),
        (kafka_errors.NotLeaderForPartitionError(), RETRY),
        (kafka_errors.KafkaConnectionError(), RETRY),
        (kafka_errors.NotEnoughReplicasError(), RETRY),
        (kafka_errors.KafkaTimeoutError(), RETRY),
        (TimeoutError(), RETRY),
        (kafka_errors.MessageSizeTooLargeError(), DEAD_LETTER),
        (kafka_errors.RecordListTooLargeError(), DEAD_LETTER),
        (
            _caused(kafka_errors.KafkaError("wrapped"), kafka_errors.MessageSizeTooLargeError()),
            DEAD_LETTER,
        ),
        (kafka_errors.ProducerFenced(), FATAL),
        (kafka_errors.TopicAuthorizationFailedError(), FATAL),
        (kafka_errors.TransactionalIdAuthorizationFailed(), FATAL),
        (kafka_errors.UnsupportedVersionError(), FATAL),
        (kafka_errors.InvalidTxnState(), FATAL),
        (ValueError("a bug"), FATAL),
    ],
)
def test_every_error_class_has_an_action(exc: BaseException, action: str) -> None:
    assert error_action(exc) == action


def _msg(offset: int, body: str) -> InMessage:
    line = orjson.dumps({"id": f"r{offset}", "messages": [{"role": "user", "content": body}]})
    return InMessage(NAMES.transcripts, 1, offset, 1_764_446_000_000, f"r{offset}".encode(), line)


def test_group_batches_remember_which_input_each_output_came_from() -> None:
    out = OutMessage("x", None, b"v")
    (batch,) = group_batches([("t", 0, 4, [out, out]), ("t", 0, 5, [out])])
    assert batch.origins == [4, 4, 5]
    assert batch.refused([1, 2]) == {4, 5}


def test_a_refused_record_becomes_a_dead_letter_and_the_partition_goes_on() -> None:
    processor = Processor(build_pipeline(Settings()), NAMES, "g")
    publisher = ListPublisher()
    handler = BatchHandler(processor, publisher)
    big = "x " * 200_000
    batch = [_msg(0, "hello"), _msg(1, big), _msg(2, "world")]
    publisher.fail_next = RecordsRefused(
        "Kafka refused a record as too large", {(NAMES.transcripts, 1): {1}}
    )
    results = asyncio.run(handler.handle(batch))
    assert [r.ok for r in results] == [True, False, True]
    assert results[1].error_class == "OutputRefused"
    letters = publisher.on(NAMES.dead_letter)
    assert len(letters) == 1
    body = orjson.loads(letters[0].value)
    assert body["stage"] == "publish" and body["record_id"] == "r1"
    assert body["source"]["offset"] == 1
    assert wire_size(letters[0].key, letters[0].value, letters[0].headers) <= REFUSED_LETTER_BYTES
    assert body["original_truncated"] is True and body["original_bytes"] == len(
        batch[1].value or b""
    )
    ids = [orjson.loads(m.value)["id"] for m in publisher.on(NAMES.compressed)]
    assert ids == ["r0", "r2"]
    assert publisher.committed == {(NAMES.transcripts, 1): 3}
    assert handler.expected[(NAMES.transcripts, 1)] == 3


def test_a_broker_that_keeps_refusing_stops_the_worker_and_commits_nothing() -> None:
    processor = Processor(build_pipeline(Settings()), NAMES, "g")

    class Refusing(ListPublisher):
        calls = 0

        async def publish(self, batches):  # type: ignore[no-untyped-def]
            type(self).calls += 1
            raise RecordsRefused("refused", {(NAMES.transcripts, 1): {0}})

    publisher = Refusing()
    handler = BatchHandler(processor, publisher)
    with pytest.raises(RecordsRefused):
        asyncio.run(handler.handle([_msg(0, "hello")]))
    assert publisher.calls == REFUSED_RETRIES + 1
    assert publisher.committed == {}
    assert (NAMES.transcripts, 1) not in handler.expected


def test_only_the_largest_refused_output_is_named() -> None:
    from workers.service.publish import _raise_refused

    small, big = OutMessage("c", None, b"x" * 10), OutMessage("c", None, b"x" * 5000)
    (batch,) = group_batches([("t", 0, 3, [small]), ("t", 0, 4, [big]), ("t", 0, 5, [small])])
    refusal = kafka_errors.MessageSizeTooLargeError()
    with pytest.raises(RecordsRefused) as caught:
        _raise_refused(batch, [refusal, refusal, refusal], 1024)
    assert caught.value.refused == {("t", 0): {4}}
    with pytest.raises(kafka_errors.NotLeaderForPartitionError):
        _raise_refused(batch, [None, kafka_errors.NotLeaderForPartitionError(), None], 1024)
    _raise_refused(batch, [None, None, None], 1024)  # all acknowledged: nothing raised
