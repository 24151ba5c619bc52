"""Per-message processing for the worker: Kafka bytes in, output records out.

No Faust and no I/O here, so tests call it directly.  :class:`Processor`
turns one :class:`InMessage` into a :class:`Processed` whose ``outputs`` are
the records to publish.  Every input message ends as exactly one of:

- its compressed record on ``compressed`` (key: record id), plus one stats
  record per engine on ``stats``, one dead letter per gate rejection or engine
  error on ``dead-letter`` (the record itself is still published, without that
  change), and one entry per stashed original on ``offload`` (key: hash);
- or exactly one dead letter on ``dead-letter`` that carries the original key
  and the original value bytes unchanged (``original_value`` or, for bytes
  that are not UTF-8, ``original_value_b64``), so ``ctxpress dlq replay`` can
  re-publish it byte for byte.  Every field of a dead letter is redacted like
  everything else (reason, record id, key, copied headers); an input that holds
  a secret keeps only its redacted value (``original_redacted: true``) and is
  not replayable: the dead-letter topic never holds a credential.  A tombstone
  (a null value) is a dead letter with ``original_value: null`` and
  ``original_null: true``; a replay sends null again.

Dead letters carry headers in the style of Kafka Connect / Kafka Streams
(``ctxpress.dlq.original.topic`` ... see ``DLQ_HEADERS``) and the input's own
headers after them (at most ``COPIED_HEADERS_BYTES`` of them; the names and sizes
of the others are listed in ``dropped_headers``).

No output is larger than ``CTXPRESS_MAX_MESSAGE_BYTES`` (the producer's
``max_request_size`` is the same setting, so the client never refuses a record and
no record can stop the partition): a compressed record, stats or offload entry over
it turns the input into one dead letter (stage ``publish``, error class
``OutputTooLarge``); a dead letter over it keeps the reason, the record id and the
source but only a bounded, redacted prefix of the original value, with its length
and sha256 (``original_truncated``; not replayable); a gate letter over it has its
``before``/``after`` texts cut (``truncated``).  Input validation happens here, at the edge, against the
input topic's JSON Schema (compiled once).

With ``deterministic=True`` (the at-least-once guarantee) the compressed record
carries no timings (``duration_ms`` and each engine's ``ms`` are 0; the real
ones are on the stats topic), so a record reprocessed after a crash is
published byte-identical under the same key.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import orjson

from workers.core.jsonl import BadLine, decode_line, dump_layout
from workers.core.offload import stored_text
from workers.core.redact import redact
from workers.core.settings import Settings
from workers.messages import id_problem, record_id
from workers.messages.wire import compressed_line
from workers.pipeline.batch import (
    dead_letter_for_line,
    redact_bytes,
    redact_letter,
    without_timings,
)
from workers.pipeline.combos import route_fields, run_routed
from workers.pipeline.runner import Outcome, Pipeline, RecordError, Rejection
from workers.service.dead_letters import (
    COPIED_HEADERS_BYTES,
    DLQ_HEADERS,
    DLQ_PREFIX,
    MAX_HEADER_MESSAGE,
    MAX_KEY_BYTES,
    PREFIX_CHARS,
)
from workers.service.records import (
    HEADER_OVERHEAD,
    InMessage,
    OutMessage,
    Processed,
    header_mode,
    wire_size,
)
from workers.service.topics import TopicNames
from workers.service.validate import EdgeValidator

__all__ = ["REFUSED_LETTER_BYTES", "Processor", "make_processor", "slimmed"]

#: the largest dead letter written for an output the broker refused (see Processor.refused)
REFUSED_LETTER_BYTES = 64 * 1024

log = logging.getLogger(__name__)


def _utc_iso(now: float) -> str:
    return datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


class Processor:
    """Turns input messages into output records; one instance per worker."""

    def __init__(
        self,
        pipeline: Pipeline,
        names: TopicNames,
        group_id: str,
        *,
        deterministic: bool = False,
        validator: EdgeValidator | None = None,
        clock: Callable[[], float] = time.time,
        max_message_bytes: int | None = None,
    ) -> None:
        """``max_message_bytes``: the largest output (default: the pipeline's settings)."""
        self.pipeline = pipeline
        self.names = names
        self.group_id = group_id
        self.deterministic = deterministic
        self.validator = validator or EdgeValidator(names)
        self.clock = clock
        self.max_bytes = pipeline.settings.max_record_bytes
        self.max_message_bytes = max_message_bytes or pipeline.settings.max_message_bytes

    # -- one message -------------------------------------------------------

    def process(self, msg: InMessage) -> Processed:
        started = time.perf_counter()
        try:
            result = self._process(msg)
        except Exception as exc:  # a bug must not stop the partition: dead-letter it
            log.exception(
                "processing %s[%d]@%d failed; dead-lettered", msg.topic, msg.partition, msg.offset
            )
            result = self._reject(
                msg,
                "pipeline",
                type(exc).__name__,
                f"processing failed: {type(exc).__name__}: {str(exc)[:500]}",
                None,
            )
        if result.ok:
            result = self._fit(msg, result)
        result.seconds = time.perf_counter() - started
        return result

    def refused(self, msg: InMessage, reason: str, record_id: str | None) -> Processed:
        """The dead letter of an input whose output the broker refused as too large: at most
        64 KiB, so that a dead-letter topic whose limit was lowered too still takes it (an
        original over that is cut, and stays in its input topic at the offset named)."""
        return self._reject(
            msg,
            "publish",
            "OutputRefused",
            f"the broker refused this record's output: {reason[:1500]}",
            record_id,
            limit=min(self.max_message_bytes, REFUSED_LETTER_BYTES),
        )

    def _fits(self, out: OutMessage, limit: int | None = None) -> bool:
        """Within ``limit`` (default: CTXPRESS_MAX_MESSAGE_BYTES)."""
        return wire_size(out.key, out.value, out.headers) <= (limit or self.max_message_bytes)

    def _fit(self, msg: InMessage, result: Processed) -> Processed:
        """``result`` with every output within the limit, or its input as one dead letter."""
        limit = self.max_message_bytes
        for out in result.outputs:
            if out.topic == self.names.dead_letter:
                continue
            size = wire_size(out.key, out.value, out.headers)
            if size > limit:
                short = {self.names.stats: "stats", self.names.offload: "offload"}.get(
                    out.topic, "compressed"
                )
                log.warning(
                    "%s[%d]@%d: %s output of %d bytes is over CTXPRESS_MAX_MESSAGE_BYTES=%d; "
                    "dead-lettered",
                    msg.topic,
                    msg.partition,
                    msg.offset,
                    short,
                    size,
                    limit,
                )
                fallen = self._reject(
                    msg,
                    "publish",
                    "OutputTooLarge",
                    f"{short} output of {size:,} bytes exceeds the limit of {limit:,} bytes; "
                    "raise CTXPRESS_MAX_MESSAGE_BYTES together with the max.message.bytes of the "
                    "output topics, or split the record",
                    result.record_id,
                )
                fallen.mode = result.mode
                return fallen
        if not all(self._fits(out) for out in result.outputs):
            result.outputs = [out if self._fits(out) else self._cut(out) for out in result.outputs]
        return result

    def _cut(self, out: OutMessage) -> OutMessage:
        """A gate or engine letter whose ``before``/``after`` texts are cut to fit."""
        body = orjson.loads(out.value)
        texts = {
            name: body[name] for name in ("before", "after") if isinstance(body.get(name), str)
        }
        keep = max(len(t) for t in texts.values()) if texts else 0
        while True:
            keep //= 2
            for name, text in texts.items():
                if len(text) > keep:
                    body[name] = text[:keep]
                    body[f"{name}_chars"] = len(text)
            body["truncated"] = True
            cut = OutMessage(out.topic, out.key, orjson.dumps(body), out.headers)
            if self._fits(cut) or keep == 0:
                if not self._fits(cut):  # nothing left to cut but the violations
                    body["violations"] = body.get("violations", [])[:10]
                    cut = OutMessage(out.topic, out.key, orjson.dumps(body), out.headers)
                return cut

    def _process(self, msg: InMessage) -> Processed:
        raw = msg.value
        if raw is None:
            return self._reject(
                msg,
                "decode",
                "Tombstone",
                "value is null (a tombstone): there is no record to compress; 'ctxpress dlq "
                "replay' re-publishes it as null",
                None,
            )
        if not raw.strip():
            return self._reject(msg, "decode", "EmptyValue", "value is empty", None)
        if len(raw) > self.max_bytes:
            return self._reject(
                msg,
                "validate",
                "RecordTooLarge",
                f"record is {len(raw):,} bytes, over the limit of {self.max_bytes:,}; "
                "split it or raise CTXPRESS_MAX_RECORD_BYTES",
                None,
            )
        value = decode_line(raw, 0, self.max_bytes)
        if isinstance(value, BadLine):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                return self._reject(
                    msg, "decode", "UnicodeDecodeError", f"value is not UTF-8 ({exc})", None
                )
            reason = value.reason.removeprefix("line 0: ")
            return self._reject(msg, "decode", "JSONDecodeError", f"value is {reason}", None)
        schema_error = self.validator.error(msg.topic, value) or id_problem(value)
        if schema_error is not None:
            return self._reject(
                msg, "validate", "SchemaValidationError", schema_error, record_id(value)
            )
        try:
            outcome = run_routed(
                self.pipeline, value, header_mode(msg.headers), msg.headers, msg.topic
            )
        except RecordError as exc:
            return self._reject(
                msg, exc.stage, "InvalidRecord", exc.reason, exc.record_id or record_id(value)
            )
        except RecursionError:
            return self._reject(
                msg,
                "validate",
                "InvalidRecord",
                "record nested too deeply to process",
                record_id(value),
            )
        return self._accept(msg, outcome, raw, value)

    # -- outputs -----------------------------------------------------------

    def _accept(self, msg: InMessage, outcome: Outcome, raw: bytes, value: Any) -> Processed:
        now = self.clock()
        now_ms = int(now * 1000)
        rid = outcome.record_id
        key = rid.encode("utf-8") if rid is not None else msg.key
        record = outcome.record
        if self.deterministic:
            record = without_timings(record)
        try:
            # the input's own bytes with only the changed strings spliced in (layout "bytes"),
            # or None when a known serialiser reproduces the input (layout named, compact out)
            line = compressed_line(raw, value, record)
        except (KeyError, ValueError, TypeError) as exc:  # one record never stops the stream
            return self._reject(
                msg,
                "pipeline",
                type(exc).__name__,
                f"the record cannot be written back byte for byte ({exc!r})",
                rid,
            )
        compressed = line if line is not None else dump_layout(record, None)
        outputs = [OutMessage(self.names.compressed, key, compressed)]
        encoding = outcome.stats.get("encoding")
        savings: dict[str, tuple[int, int]] = {
            "_record": (outcome.stats["tokens_before"], outcome.stats["tokens_after"])
        }
        for stats in outcome.engine_stats:
            body = stats.as_dict()
            body.update(record_id=rid, mode=outcome.mode, ts=now_ms, encoding=encoding)
            body.update(route_fields(outcome.stats))  # the combo and the auto decision, if any
            outputs.append(OutMessage(self.names.stats, key, orjson.dumps(body)))
            savings[stats.engine] = (stats.tokens_before, stats.tokens_after)
        for rejection in outcome.rejections:
            outputs.append(self._rejection_letter(msg, rejection, key, now_ms))
        created = _utc_iso(now)
        offloaded = {digest: stored_text(text) for digest, text in sorted(outcome.stash.items())}
        for digest, text in offloaded.items():
            body = {"hash": digest, "text": text, "created_at": created, "record_id": rid}
            outputs.append(
                OutMessage(self.names.offload, digest.encode("ascii"), orjson.dumps(body))
            )
        return Processed(
            msg,
            outputs,
            outcome=outcome,
            record_id=rid,
            mode=outcome.mode,
            savings=savings,
            offloaded=offloaded,
        )

    def _source(self, msg: InMessage) -> dict[str, Any]:
        return {
            "topic": msg.topic,
            "partition": msg.partition,
            "offset": msg.offset,
            "timestamp": msg.timestamp_ms,
        }

    def _headers(
        self,
        msg: InMessage,
        error_class: str,
        message: str,
        stage: str,
        engine: str | None,
        record_id: str | None,
        now_ms: int,
        replayable: bool,
        theirs: tuple[tuple[str, bytes], ...] = (),
    ) -> tuple[tuple[str, bytes], ...]:
        values = (
            msg.topic,
            str(msg.partition),
            str(msg.offset),
            "" if msg.timestamp_ms is None else str(msg.timestamp_ms),
            self.group_id,
            error_class,
            message[:MAX_HEADER_MESSAGE],
            stage,
            engine or "",
            record_id or "",
            str(now_ms),
            "true" if replayable else "false",
        )
        ours = tuple(
            (name, value.encode("utf-8"))
            for name, value in zip(DLQ_HEADERS, values, strict=True)
            if value or name == "ctxpress.dlq.original.timestamp"
        )
        # The input's own headers follow (see _copied_headers), so a replay can restore them.
        return ours + theirs

    def _copied_headers(
        self, msg: InMessage, limit: int
    ) -> tuple[tuple[tuple[str, bytes], ...], list[dict[str, Any]]]:
        """The input headers a dead letter copies (bounded), and what was left out."""
        budget = min(COPIED_HEADERS_BYTES, limit // 8)
        kept: list[tuple[str, bytes]] = []
        dropped: list[dict[str, Any]] = []
        for name, value in msg.headers:
            if name.startswith(DLQ_PREFIX):
                continue
            size = HEADER_OVERHEAD + len(name.encode("utf-8")) + len(value)
            if size <= budget:
                kept.append((name, value))
                budget -= size
            elif len(dropped) < 20:
                dropped.append({"key": name[:200], "bytes": len(value)})
        return tuple(kept), dropped

    def _reject(
        self,
        msg: InMessage,
        stage: str,
        error_class: str,
        reason: str,
        record_id: str | None,
        *,
        limit: int | None = None,
    ) -> Processed:
        """The input as one dead letter of at most ``limit`` bytes (default:
        CTXPRESS_MAX_MESSAGE_BYTES)."""
        limit = limit or self.max_message_bytes
        now_ms = int(self.clock() * 1000)
        raw = msg.value or b""
        # Redacted like everything else: reason, record id, value, key and copied headers.
        # A letter whose original held a secret is not replayable (its bytes are not kept).
        reason = redact(reason)
        record_id = redact(record_id) if record_id else record_id
        theirs, dropped = self._copied_headers(msg, limit)
        red_theirs = tuple((name, redact_bytes(value)) for name, value in theirs)
        red_raw = redact_bytes(raw)
        red_key = None if msg.key is None else redact_bytes(msg.key)
        clean = red_raw == raw and red_theirs == theirs and red_key == msg.key

        def letter(body: dict[str, Any], key: bytes | None, replayable: bool) -> OutMessage:
            if dropped:
                body["dropped_headers"] = dropped
            body["source"] = self._source(msg)
            if not clean:
                body["original_redacted"] = True
            headers = self._headers(
                msg, error_class, reason, stage, None, record_id, now_ms, replayable, red_theirs
            )
            # Key: the original key bytes, unchanged (the replay key).
            return OutMessage(self.names.dead_letter, key, orjson.dumps(body), headers)

        out: OutMessage | None = None
        if msg.value is None:  # a tombstone: the null itself is what a replay restores
            body = dead_letter_for_line(0, reason, b"", record_id, stage, error_class)
            body["original_value"] = None
            body["original_null"] = True
            body["original_key"] = _key_text(red_key)
            out = letter(body, red_key, clean)
        elif wire_size(msg.key, raw, ()) <= limit:
            # The original bytes unchanged, when they fit (JSON escaping can multiply them).
            body = dead_letter_for_line(0, reason, b"", record_id, stage, error_class)
            body.pop("original_value", None)
            try:
                body["original_value"] = red_raw.decode("utf-8")
            except UnicodeDecodeError:
                body["original_value_b64"] = base64.b64encode(red_raw).decode("ascii")
            body["original_key"] = _key_text(red_key)
            out = letter(body, red_key, clean)
            if not self._fits(out, limit):
                out = None
        if out is None:
            out = self._cut_reject(
                msg, red_raw, reason, record_id, stage, error_class, letter, limit
            )
        return Processed(
            msg,
            [out],
            stage=stage,
            error_class=error_class,
            reason=reason,
            record_id=record_id,
            mode=_mode_of(raw),
        )

    def _cut_reject(
        self,
        msg: InMessage,
        raw: bytes,
        reason: str,
        record_id: str | None,
        stage: str,
        error_class: str,
        letter: Callable[[dict[str, Any], bytes | None, bool], OutMessage],
        limit: int,
    ) -> OutMessage:
        """A dead letter of at most ``limit`` bytes with a bounded prefix of the (redacted)
        original (not replayable)."""
        key = None if msg.key is None else redact_bytes(msg.key)[:MAX_KEY_BYTES]
        text: str | None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        chars = min(PREFIX_CHARS, limit // 16)
        while True:
            body = dead_letter_for_line(0, reason, b"", record_id, stage, error_class)
            body.pop("original_value", None)
            if text is not None:
                body["original_value"] = text[:chars]
            else:
                body["original_value_b64"] = base64.b64encode(raw[: chars * 3 // 4]).decode("ascii")
            body["original_truncated"] = True
            body["original_bytes"] = len(raw)
            body["original_sha256"] = hashlib.sha256(raw).hexdigest()
            body["original_key"] = _key_text(key)
            out = letter(body, key, False)
            if self._fits(out, limit) or chars == 0:
                return out
            chars //= 4

    def _rejection_letter(
        self, msg: InMessage, rejection: Rejection, key: bytes | None, now_ms: int
    ) -> OutMessage:
        body = redact_letter(rejection.as_dict(), done=("before", "after"))
        body["source"] = self._source(msg)
        headers = self._headers(
            msg,
            body["error_class"],
            body["reason"],
            rejection.stage,
            rejection.engine,
            body["record_id"],
            now_ms,
            False,
        )
        return OutMessage(self.names.dead_letter, key, orjson.dumps(body), headers)


def _key_text(key: bytes | None) -> str | None:
    return key.decode("utf-8", "backslashreplace") if key is not None else None


def _mode_of(raw: bytes) -> str:
    """Best-effort mode label of a rejected input (metrics only)."""
    if b'"mode"' not in raw[:65536]:
        return "unknown"
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return "unknown"
    mode = value.get("mode") if isinstance(value, dict) else None
    return mode if mode in ("off", "lossless", "standard", "aggressive") else "unknown"


def slimmed(result: Processed) -> Processed:
    """``result`` without what the worker never reads once it is made: the compressed record
    as a dict (its bytes are in ``outputs``) and the stash's texts (their count is read; what
    is published is in ``offloaded``).  A batch's results live until it is published: for
    50 KB records that is a second copy of every record and stash held meanwhile."""
    if result.outcome is not None:
        result.outcome.record = {}
        result.outcome.stash = dict.fromkeys(result.outcome.stash, "")
    return result


def make_processor(settings: Settings, pipeline: Pipeline) -> Processor:
    """The worker's record processor (also built in the pipeline's child process)."""
    return Processor(
        pipeline,
        TopicNames.from_settings(settings),
        settings.app_id,
        deterministic=settings.processing_guarantee == "at_least_once",
        max_message_bytes=settings.max_message_bytes,
    )
