"""``ctxpress consume --topic NAME [-p N] [--from-offset O | --from-time T] [-f | -e] ...``."""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
import time
from datetime import UTC, datetime
from typing import Any

import orjson

from workers.cli._common import UserError, open_out
from workers.cli._kafka import kafka_arguments, run_async, settings_of
from workers.core.jsonl import BadLine, decode_line, dump_layout
from workers.core.settings import SettingsError
from workers.service.topics import SHORT_NAMES, TopicNames

__all__ = ["register"]


def _text(data: bytes | None) -> str | None:
    return data.decode("utf-8", "backslashreplace") if data is not None else None


def _value(value: bytes | None) -> Any:
    """A JSON value as it was written (big integers, ``1.50``, key order kept), else text."""
    if value is None:
        return None
    decoded = decode_line(value, 0, len(value) + 1)
    if isinstance(decoded, BadLine):
        return _text(value)
    if b"\n" in value or b"\r" in value:  # one output line per record
        return orjson.Fragment(dump_layout(decoded, None))
    return orjson.Fragment(value.strip())


def _envelope(record: Any) -> bytes:
    return orjson.dumps(
        {
            "topic": record.topic,
            "partition": record.partition,
            "offset": record.offset,
            "timestamp": record.timestamp,
            "key": _text(record.key),
            "headers": {k: _text(v) for k, v in record.headers},
            "value": _value(record.value),
        }
    )


class _Expanded:
    """A consumed record with its value replaced by the expanded original."""

    def __init__(self, record: Any, value: bytes) -> None:
        self._record = record
        self.value = value

    def __getattr__(self, name: str) -> Any:
        return getattr(self._record, name)


async def _expand(topic: Any, record: Any) -> Any:
    """``record`` with its compressed value expanded; None (and a line on stderr) when it cannot
    be. A value that is not a compressed record (no ``compression`` object) stays as it is."""
    from workers.messages import InvalidRecord
    from workers.pipeline.expand import ExpandError

    if record.value is None:
        return record
    line = record.value.strip()
    decoded = decode_line(line, 0, len(line) + 1)
    if isinstance(decoded, BadLine):
        return record
    try:
        return _Expanded(record, await topic.expand(line, decoded))
    except (ExpandError, InvalidRecord, ValueError) as exc:
        print(
            f"ctxpress consume: {record.topic} {record.partition}:{record.offset}: cannot expand: "
            f"{exc}",
            file=sys.stderr,
        )
        return None


def _with(record: Any, keys: bool, headers: bool) -> bytes:
    """``{"key": ..., "headers": {...}, "value": ...}`` with the parts asked for."""
    out: dict[str, Any] = {}
    if keys:
        out["key"] = _text(record.key)
    if headers:
        out["headers"] = {k: _text(v) for k, v in record.headers}
    out["value"] = _value(record.value)
    return orjson.dumps(out)


_RELATIVE = re.compile(r"^-(\d+(?:\.\d+)?)(ms|s|m|h|d)$")
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


def parse_time(text: str, now_ms: int | None = None) -> int:
    """Epoch milliseconds from ``1764579600000``, an ISO 8601 time or ``-10m`` (ago)."""
    text = text.strip()
    if text.isdigit():
        return int(text)
    relative = _RELATIVE.match(text)
    if relative:
        now = int(time.time() * 1000) if now_ms is None else now_ms
        return now - int(float(relative.group(1)) * _UNIT_MS[relative.group(2)])
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UserError(
            f"--from-time {text!r}: give epoch milliseconds, an ISO 8601 time "
            "(2026-12-01T09:00:00Z) or a time ago (-30s, -10m, -2h, -1d)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def parse_offset(text: str) -> int | str:
    """``beginning``, ``end``, ``N`` (that offset) or ``-N`` (N before the end)."""
    if text in ("beginning", "end"):
        return text
    try:
        return int(text)
    except ValueError:
        raise UserError(
            f"--from-offset {text!r}: give beginning, end, an offset N or -N (N before the end)"
        ) from None


async def _consume(args: argparse.Namespace) -> int:
    from workers.service.kafka.io import read_topic

    settings = settings_of(args)
    names = TopicNames.from_settings(settings)
    try:
        topic = names.by_short(args.topic)
    except SettingsError as exc:
        raise UserError(str(exc)) from exc
    if args.follow and args.until_end:
        raise UserError("--follow and --until-end exclude each other")
    if args.from_time is not None and args.from_offset is not None:
        raise UserError("--from-time and --from-offset exclude each other")
    offset = parse_offset(args.from_offset) if args.from_offset is not None else None
    from_time = parse_time(args.from_time) if args.from_time is not None else None
    seen = failed = 0
    async with contextlib.AsyncExitStack() as stack:
        expander = None
        if args.expand:  # the originals: stashes come from the worker's offload topic
            from workers.cli._kafka_offload import OffloadTopic

            expander = await stack.enter_async_context(OffloadTopic(settings))
        out = stack.enter_context(open_out(args.output or "-"))
        assert out is not None
        async for record in read_topic(
            settings,
            topic,
            count=args.count,
            idle_timeout=None if args.follow else args.timeout,
            until_end=args.until_end,
            isolation_level=args.isolation_level,
            partitions=args.partition,
            offset=offset,
            from_time_ms=from_time,
        ):
            if expander is not None:
                record = await _expand(expander, record)
                if record is None:
                    failed += 1
                    seen += 1
                    continue
            if args.envelope:
                out.write(_envelope(record) + b"\n")
            elif args.keys or args.headers:
                out.write(_with(record, args.keys, args.headers) + b"\n")
            elif record.value is not None:
                out.write(record.value + b"\n")
            else:
                out.write(b"null\n")
            if args.follow:
                out.flush()
            seen += 1
        out.flush()
    if args.count is not None and seen < args.count:
        why = (
            "the end of the partitions"
            if args.until_end
            else (f"nothing new for {args.timeout:g} s")
        )
        print(
            f"ctxpress consume: {seen:,} of {args.count:,} records from {topic} ({why})",
            file=sys.stderr,
        )
        return 1
    print(f"ctxpress consume: {seen:,} records from {topic}", file=sys.stderr)
    if failed:
        print(f"ctxpress consume: {failed:,} record(s) could not be expanded", file=sys.stderr)
        return 1
    return 0


def _run(args: argparse.Namespace) -> int:
    try:
        return run_async(_consume, args, "consume")
    except KeyboardInterrupt:  # --follow ends with Ctrl-C
        return 130


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    topics = ", ".join(SHORT_NAMES)
    c = sub.add_parser(
        "consume",
        help="print a topic's records, one value per line",
        description=(
            "Read a topic (no consumer group, read_committed by default) and print one record "
            "value per line, from the beginning of every partition unless told otherwise. "
            "Dead letters carry record_id, reason, stage and source in their value; --keys, "
            "--headers and --envelope add the record's key, headers and position. Stops after "
            "--count records, at the end of the partitions (--until-end, like kcat -e), after "
            "--timeout seconds without a record, or never (--follow)."
        ),
    )
    c.add_argument("--topic", required=True, metavar="NAME", help=f"short topic name ({topics})")
    c.add_argument("--count", type=int, default=None, metavar="N", help="stop after N records")
    c.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="S",
        help="stop after S seconds without a new record (default: 10; ignored with --follow)",
    )
    c.add_argument(
        "-p",
        "--partition",
        type=int,
        action="append",
        default=None,
        metavar="N",
        help="read only partition N (repeat for several; default: every partition)",
    )
    c.add_argument(
        "--from-offset",
        default=None,
        metavar="OFFSET",
        help="start in each partition read at: beginning (default), end, an offset N "
        "(clamped to what the partition holds) or -N (the last N records)",
    )
    c.add_argument(
        "--from-time",
        default=None,
        metavar="T",
        help="start at the first record at or after T: epoch milliseconds, ISO 8601 "
        "(2026-12-01T09:00:00Z; no zone = UTC) or a time ago (-30s, -10m, -2h, -1d)",
    )
    c.add_argument(
        "-f",
        "--follow",
        action="store_true",
        help="keep waiting for new records (no idle timeout; Ctrl-C ends, exit code 130)",
    )
    c.add_argument(
        "-e",
        "--until-end",
        action="store_true",
        help="stop once every partition read reached its end offset as of the start (kcat -e)",
    )
    c.add_argument(
        "--keys",
        action="store_true",
        help='print {"key": ..., "value": ...} objects (with --headers: "headers" too)',
    )
    c.add_argument(
        "--headers",
        action="store_true",
        help='print {"headers": {name: value}, "value": ...} objects (with --keys: "key" too)',
    )
    c.add_argument(
        "--isolation-level",
        choices=("read_committed", "read_uncommitted"),
        default="read_committed",
        help="read_committed (default: only records of committed transactions, each once) or "
        "read_uncommitted (also those of open and aborted transactions)",
    )
    c.add_argument("-o", "--output", default=None, help="output file (default: stdout)")
    c.add_argument(
        "--expand",
        action="store_true",
        help="print the original records, as 'ctxpress expand --offload kafka' restores them "
        "(stashed spans from the offload topic); a record that cannot be expanded is left out, "
        "named on stderr, and the exit code is 1",
    )
    c.add_argument(
        "--envelope",
        action="store_true",
        help="print {topic, partition, offset, timestamp, key, headers, value} objects",
    )
    kafka_arguments(c)
    c.set_defaults(func=_run)
