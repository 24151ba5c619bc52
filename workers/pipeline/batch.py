"""Offline batch compression of JSONL: the same pipeline the worker runs.

``compress_lines`` yields one :class:`LineResult` per input line: either the
compressed record (plus its gate rejections, which are extra dead-letter
entries) or a dead letter for the line itself.  Every input line ends as
exactly one output record or one dead-letter record.  A :class:`Summary`
adds the numbers up for the table printed at the end of a run.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from workers.core.jsonl import BadLine, decode_line, dump_layout
from workers.core.offload import OffloadStore, stored_text
from workers.core.redact import redact
from workers.messages import RESERVED_KEY, id_problem
from workers.messages.wire import compressed_line
from workers.pipeline.runner import Outcome, Pipeline, RecordError

__all__ = [
    "LineResult",
    "LongLine",
    "Summary",
    "compress_lines",
    "dead_letter_for_line",
    "redact_bytes",
    "redact_letter",
    "without_timings",
]


class LongLine(bytes):
    """The first bytes of an input line over the record limit, and its whole ``size``."""

    size: int

    def __new__(cls, head: bytes, size: int) -> LongLine:
        line = super().__new__(cls, head)
        line.size = size
        return line

    def __reduce__(self) -> tuple[type[LongLine], tuple[bytes, int]]:  # to worker processes
        return (LongLine, (bytes(self), self.size))


@dataclass(slots=True)
class LineResult:
    line_no: int
    size: int
    outcome: Outcome | None = None
    dead_letter: dict[str, Any] | None = None
    output: bytes | None = None  # the compressed line, when it keeps the input's bytes

    def encoded(self) -> bytes:
        """The compressed line to write (without ``\\n``); needs an outcome."""
        if self.output is not None:
            return self.output
        assert self.outcome is not None
        return dump_layout(self.outcome.record, None)


def redact_bytes(raw: bytes) -> bytes:
    """``raw`` with its secrets redacted (bytes that are not UTF-8 pass through unchanged)."""
    text = raw.decode("utf-8", "surrogateescape")
    redacted = redact(text)
    return raw if redacted == text else redacted.encode("utf-8", "surrogateescape")


def _redact_strings(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _redact_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_strings(v) for v in value]
    return value


def redact_letter(body: dict[str, Any], done: tuple[str, ...] = ()) -> dict[str, Any]:
    """The dead letter with every string redacted (reason, record id, ...), except the keys in ``done``."""
    return {k: v if k in done else _redact_strings(v) for k, v in body.items()}


ORIGINALS = ("original_value", "original_value_b64")
#: a dead letter keeps at most this many characters of the original line
KEPT_CHARS = 65536


def dead_letter_for_line(
    line_no: int, reason: str, raw: bytes, record_id: str | None, stage: str, error_class: str
) -> dict[str, Any]:
    """A dead letter for one input line: every field redacted, the original redacted before it is cut."""
    # a window past the cut, so a secret across the cut is redacted whole
    redacted = redact_bytes(raw[: KEPT_CHARS * 4 + 4096])
    try:
        original = redacted.decode("utf-8")[:KEPT_CHARS]
        key = "original_value"
    except UnicodeDecodeError:
        import base64

        original = base64.b64encode(redacted[: KEPT_CHARS * 3 // 4]).decode("ascii")
        key = "original_value_b64"
    body = {
        "record_id": record_id,
        "reason": reason,
        "stage": stage,
        "error_class": error_class,
        "error_message": reason,
        key: original,
        "source": {"line": line_no},
    }
    return redact_letter(body, done=ORIGINALS)


def without_timings(record: Mapping[str, Any]) -> dict[str, Any]:
    """The compressed record with its run-dependent timings zeroed (``duration_ms``, each
    engine's ``ms``), so equal input and settings give equal bytes; the stats keep them."""
    out = dict(record)
    comp = dict(out[RESERVED_KEY])
    comp["duration_ms"] = 0.0
    comp["engines"] = [{**e, "ms": 0.0} for e in comp.get("engines", ())]
    out[RESERVED_KEY] = comp
    return out


def compress_lines(
    lines: Iterable[bytes],
    pipeline: Pipeline,
    store: OffloadStore | None = None,
    *,
    timings: bool = True,
    start: int = 1,
) -> Iterator[LineResult]:
    """One :class:`LineResult` per non-blank line; ``timings=False``: the written line carries
    no timings (:func:`without_timings`; the outcome's stats keep them); ``start``: the line
    number of the first line (a chunk of a bigger input)."""
    max_bytes = pipeline.settings.max_record_bytes
    for line_no, raw in enumerate(lines, start=start):
        if isinstance(raw, LongLine):  # read bounded: only its head was kept
            reason = (
                f"line {line_no}: record is {raw.size:,} bytes, over the limit of {max_bytes:,}; "
                "split it or raise CTXPRESS_MAX_RECORD_BYTES"
            )
            yield LineResult(
                line_no,
                raw.size,
                dead_letter=dead_letter_for_line(
                    line_no, reason, raw, None, "decode", "InvalidJSON"
                ),
            )
            continue
        stripped = raw.strip()
        if not stripped:
            continue
        value = decode_line(stripped, line_no, max_bytes)
        if isinstance(value, BadLine):
            yield LineResult(
                line_no,
                len(raw),
                dead_letter=dead_letter_for_line(
                    # the whole line, not the decoder's cut prefix: redaction comes before the cut
                    line_no,
                    value.reason,
                    stripped,
                    None,
                    "decode",
                    "InvalidJSON",
                ),
            )
            continue
        problem = id_problem(value)
        if problem is not None:  # the worker's rule too (its schemas and process.py)
            yield LineResult(
                line_no,
                len(raw),
                dead_letter=dead_letter_for_line(
                    line_no,
                    f"line {line_no}: {problem}",
                    stripped,
                    None,
                    "validate",
                    "InvalidRecord",
                ),
            )
            continue
        try:
            outcome = pipeline.run_raw(value)
        except RecordError as exc:
            yield LineResult(
                line_no,
                len(raw),
                dead_letter=dead_letter_for_line(
                    line_no,
                    f"line {line_no}: {exc.reason}",
                    stripped,
                    exc.record_id,
                    exc.stage,
                    "InvalidRecord",
                ),
            )
            continue
        except RecursionError:
            yield LineResult(
                line_no,
                len(raw),
                dead_letter=dead_letter_for_line(
                    line_no,
                    f"line {line_no}: record nested too deeply to process",
                    stripped,
                    None,
                    "validate",
                    "InvalidRecord",
                ),
            )
            continue
        try:
            written = outcome.record if timings else without_timings(outcome.record)
            output = compressed_line(raw.removesuffix(b"\n"), value, written, stripped)
            if output is None and not timings:
                output = dump_layout(written, None)
        except (KeyError, ValueError, TypeError) as exc:  # never stop the run
            yield LineResult(
                line_no,
                len(raw),
                dead_letter=dead_letter_for_line(
                    line_no,
                    f"line {line_no}: the record cannot be written back byte for byte ({exc!r})",
                    stripped,
                    outcome.record_id,
                    "encode",
                    type(exc).__name__,
                ),
            )
            continue
        if store is not None and outcome.stash:
            store.put_many({k: stored_text(v) for k, v in outcome.stash.items()})
        yield LineResult(line_no, len(raw), outcome=outcome, output=output)


@dataclass(slots=True)
class Summary:
    started: float = field(default_factory=time.perf_counter)
    records: int = 0
    dead_letters: int = 0
    rejections: int = 0
    bytes_in: int = 0
    tokens_before: int = 0
    tokens_after: int = 0
    by_engine: dict[str, list[int]] = field(
        default_factory=dict
    )  # engine -> [before, after, applied, rejected]
    latencies_ms: list[float] = field(default_factory=list)
    #: the reason of the first dead letter (what an error message can quote)
    first_dead_letter: str | None = None

    def add(self, result: LineResult) -> None:
        self.bytes_in += result.size
        if result.outcome is None:
            self.dead_letters += 1
            if self.first_dead_letter is None and result.dead_letter is not None:
                self.first_dead_letter = str(result.dead_letter.get("reason", ""))[:300] or None
            return
        outcome = result.outcome
        self.records += 1
        self.rejections += len(outcome.rejections)
        self.tokens_before += outcome.stats["tokens_before"]
        self.tokens_after += outcome.stats["tokens_after"]
        self.latencies_ms.append(outcome.stats["duration_ms"])
        for stats in outcome.engine_stats:
            row = self.by_engine.setdefault(stats.engine, [0, 0, 0, 0])
            row[0] += stats.tokens_before
            row[1] += stats.tokens_after
            row[2] += stats.status == "applied"
            row[3] += int(stats.details.get("messages_rejected", 0))

    @property
    def saved_pct(self) -> float:
        if not self.tokens_before:
            return 0.0
        return 100.0 * (self.tokens_before - self.tokens_after) / self.tokens_before

    def render(self) -> str:
        seconds = max(time.perf_counter() - self.started, 1e-9)
        mb_s = self.bytes_in / seconds / 1e6
        lines = [
            "",
            f"{'records':<22}{self.records:>14,}",
            f"{'dead letters':<22}{self.dead_letters:>14,}",
            f"{'gate rejections':<22}{self.rejections:>14,}",
            f"{'tokens before':<22}{self.tokens_before:>14,}",
            f"{'tokens after':<22}{self.tokens_after:>14,}",
            f"{'saved':<22}{self.saved_pct:>13.1f}%",
            f"{'throughput':<22}{mb_s:>10.2f} MB/s  ({self.bytes_in / 1e6:.2f} MB in {seconds:.2f} s)",
        ]
        if self.by_engine:
            lines += [
                "",
                f"{'engine':<16}{'tokens saved':>14}{'saved %':>9}{'records':>9}{'rejected':>10}",
            ]
            for engine, (before, after, applied, rejected) in self.by_engine.items():
                pct = 100.0 * (before - after) / before if before else 0.0
                lines.append(
                    f"{engine:<16}{before - after:>14,}{pct:>8.1f}%{applied:>9,}{rejected:>10,}"
                )
        return "\n".join(lines)
