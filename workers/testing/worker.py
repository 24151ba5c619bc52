"""Test helpers for the worker, shipped with the package (functional, e2e, crash, bench).

- :func:`gate_rejecting_pipeline`: a ``CTXPRESS_PIPELINE_FACTORY`` whose
  ``aggressive`` chain is one engine (``drop-errors``) that deletes lines
  starting with ``ERROR``.  The fidelity gate protects error lines, so every
  such record gets a gate rejection on the dead-letter topic while the record
  itself is still published.  None of the real chains rejects reliably (that
  is the point of them), so tests use this one.  Other modes are the real ones.
- :func:`mixed_stream`: a reproducible stream of input lines of every kind
  (valid transcripts and tool outputs, invalid JSON, bytes that are not UTF-8,
  schema violations, gate rejections), each with what must become of it.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass

from workers.core.settings import Settings
from workers.pipeline.runner import Pipeline
from workers.testing import FunctionEngine, anthropic_record, openai_record, tool_output_record

__all__ = [
    "GATE_ENGINE",
    "GATE_MODE",
    "KINDS",
    "Sample",
    "drop_error_lines",
    "gate_rejecting_pipeline",
    "mixed_stream",
    "padded_record",
]

GATE_MODE = "aggressive"
GATE_ENGINE = "drop-errors"
KINDS = ("transcript", "anthropic", "tool_output", "gate", "bad_json", "not_utf8", "schema")


def drop_error_lines(text: str) -> str:
    return "\n".join(line for line in text.split("\n") if not line.startswith("ERROR"))


def gate_rejecting_pipeline(settings: Settings) -> Pipeline:
    """The real modes, except ``aggressive`` = [drop-errors] (always rejected by the gate)."""
    return Pipeline(settings, engines={GATE_MODE: [FunctionEngine(GATE_ENGINE, drop_error_lines)]})


@dataclass(frozen=True, slots=True)
class Sample:
    """One input line and its expected fate."""

    line: bytes
    kind: str
    record_id: str  # unique; for unparsable lines it is only inside the bytes
    #: "compressed" or the stage of the input's own dead letter
    expect: str
    topic: str  # short input topic name

    @property
    def ok(self) -> bool:
        return self.expect == "compressed"


def _rows(rng: random.Random, n: int) -> str:
    rows = [
        {
            "id": i,
            "name": f"item-{rng.randrange(10**6)}",
            "price": round(rng.random() * 100, 2),
            "tags": ["a", "b"],
        }
        for i in range(n)
    ]
    return json.dumps(rows, indent=2)


def _log(rng: random.Random, n: int) -> str:
    return "\n".join(
        f"2025-01-0{1 + i % 9} 12:00:{i % 60:02d} INFO worker-{rng.randrange(8)} handled "
        f"request {rng.randrange(10**6)} in {rng.randrange(1, 900)} ms"
        for i in range(n)
    )


def _sample(kind: str, rid: str, rng: random.Random, rows: int) -> Sample:
    if kind == "transcript":
        record = openai_record(
            rid,
            ("user", f"Show the inventory ({rid})."),
            ("tool", _rows(rng, rows)),
            ("assistant", "Here it is."),
            command="curl -s https://api.example.com/items",
        )
        return Sample(json.dumps(record).encode(), kind, rid, "compressed", "transcripts")
    if kind == "anthropic":
        record = anthropic_record(
            rid,
            "You are careful.",
            ("user", f"List the log ({rid})."),
            ("tool", _log(rng, rows)),
            command="tail -n 50 app.log",
        )
        return Sample(json.dumps(record).encode(), kind, rid, "compressed", "transcripts")
    if kind == "tool_output":
        record = tool_output_record(rid, _rows(rng, rows), command="cat items.json")
        return Sample(
            json.dumps(record, separators=(",", ":")).encode(),
            kind,
            rid,
            "compressed",
            "tool-outputs",
        )
    if kind == "gate":
        record = tool_output_record(
            rid,
            f"starting job {rid}\nERROR db connection refused at 10.0.0.3:5432\n" + _log(rng, 3),
            command="./job.sh",
        )
        record["mode"] = GATE_MODE
        return Sample(json.dumps(record).encode(), kind, rid, "compressed", "tool-outputs")
    if kind == "bad_json":
        line = ('{"id": "' + rid + '", "messages": [{"role": "user", "content": "cut').encode()
        return Sample(line, kind, rid, "decode", "transcripts")
    if kind == "not_utf8":
        line = b'{"id": "' + rid.encode() + b'", "messages": [], "x": "\xff\xfe"}'
        return Sample(line, kind, rid, "decode", "transcripts")
    if kind == "schema":
        variant = rng.randrange(3)
        if variant == 0:
            data: dict[str, object] = {"id": rid, "messages": [{"role": "user", "content": 42}]}
        elif variant == 1:
            data = {"id": rid, "messages": [{"role": "user", "content": "hi"}], "mode": "fast"}
        else:
            data = {"id": rid, "kind": "tool_output", "content": ["not", "a", "string"]}
        topic = "tool-outputs" if data.get("kind") == "tool_output" else "transcripts"
        return Sample(json.dumps(data).encode(), kind, rid, "validate", topic)
    raise ValueError(f"unknown kind {kind!r}; valid kinds: {', '.join(KINDS)}")


def mixed_stream(
    n: int,
    *,
    seed: int = 0,
    weights: Sequence[float] = (40, 10, 20, 8, 8, 4, 10),
    rows: int = 12,
    prefix: str = "r",
) -> list[Sample]:
    """``n`` samples of the seven :data:`KINDS` (in that order of ``weights``)."""
    rng = random.Random(seed)
    kinds = rng.choices(KINDS, weights=weights, k=n)
    for kind in KINDS:  # every kind at least once when n allows
        if n >= len(KINDS) and kind not in kinds:
            kinds[rng.randrange(n)] = kind
    return [_sample(kind, f"{prefix}{i:06d}", rng, rows) for i, kind in enumerate(kinds)]


def padded_record(rid: str, size: int, *, mode: str = "lossless", seed: int = 0) -> bytes:
    """A tool-output record of about ``size`` bytes (JSON rows, so the lossless engines work)."""
    rng = random.Random(seed)
    rows: list[dict[str, object]] = []
    length = 2  # of json.dumps(rows, indent=2), kept as rows are added (no re-serialising)
    while True:
        row = {
            "id": len(rows),
            "name": f"item-{rng.randrange(10**6)}",
            "price": round(rng.random() * 100, 2),
            "ok": rng.random() < 0.5,
        }
        rows.append(row)
        part = json.dumps(row, indent=2)  # nested one level deeper: two more spaces a line
        length += len(part) + 2 * part.count("\n") + 4
        if length + 80 >= size:
            break
    text = json.dumps(rows, indent=2)
    record = {"id": rid, "kind": "tool_output", "mode": mode, "content": text}
    return json.dumps(record, separators=(",", ":")).encode()
