"""Every Prometheus metric the worker exports, declared in one place.

``Metrics(registry)`` builds them in an injected ``CollectorRegistry`` (a
fresh one per app, so tests and several apps in one process never clash).
All names start with ``ctxpress_``; Faust's own sensors are exported from the
same registry with the ``faust_`` prefix (see ``workers.service.app``).  Label values
are low-cardinality: mode, engine, topic, outcome, violation kind, stage.

| metric | type | labels |
|---|---|---|
| ctxpress_records_in_total | counter | topic |
| ctxpress_bytes_in_total | counter | topic |
| ctxpress_records_out_total | counter | mode, outcome (compressed, dead_letter) |
| ctxpress_record_tokens_before_total / _after_total | counter | mode |
| ctxpress_engine_tokens_before_total / _after_total | counter | mode, engine |
| ctxpress_engine_runs_total | counter | mode, engine, status |
| ctxpress_gate_rejections_total | counter | engine, kind |
| ctxpress_dead_letters_total | counter | reason (decode, validate, gate, engine, pipeline) |
| ctxpress_offload_entries_total | counter | |
| ctxpress_record_latency_seconds | histogram | mode |
| ctxpress_batch_size | histogram | |
| ctxpress_publish_seconds | histogram | |
| ctxpress_publish_retries_total | counter | |
| ctxpress_redelivered_skipped_total | counter | |
| ctxpress_gap_records_filled_total | counter | |
| ctxpress_worker_info | gauge (1) | guarantee, default_mode |

The counters a dashboard reads with ``increase()``/``rate()`` by label start at 0 for every
known label value (:meth:`Metrics.prime`): dead letters by reason, gate rejections by engine
and kind, records out by mode and outcome, engine runs by mode, engine and status, tokens and
latency by mode (and engine).  A series that appeared only with its first event
would make ``increase()`` miss that event (2 dead letters read as 0).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics

from workers.service.records import Processed

# No ``*_created`` series: the dashboards and alerts do not read them, and they were half of
# the worker's page (1,395 lines, 116 KB; 747 lines, 55 KB without them).
disable_created_metrics()  # type: ignore[no-untyped-call]

__all__ = [
    "DEAD_LETTER_REASONS",
    "ENGINE_STATUSES",
    "GATE_KINDS",
    "LATENCY_BUCKETS",
    "OUTCOMES",
    "Metrics",
]

#: every stage a dead letter can name (workers.service.process, workers.pipeline.runner)
DEAD_LETTER_REASONS = ("decode", "validate", "tokenize", "pipeline", "publish", "gate", "engine")
#: what the fidelity gate reports (workers.fidelity: protected spans and critical lines;
#: ``lossless`` for a lossless engine that does not decode back, ``error`` for one that raised)
GATE_KINDS = (
    "url",
    "fenced_code",
    "inline_code",
    "path",
    "version",
    "identifier",
    "json_key",
    "number",
    "error_line",
    "error_detail",
    "stack_frame",
    "diff_header",
    "finding",
    "test_failure",
    "test_summary",
    "git_status_path",
    "grep_file",
    "commit",
    "stat_summary",
    "http_status",
    "location",
    "constraint",
    "negation",
    "lossless",
    "error",
)
OUTCOMES = ("compressed", "dead_letter")
#: what an engine run ends as (workers.pipeline.runner)
ENGINE_STATUSES = ("applied", "unchanged", "inflation", "fidelity", "error", "disabled")

LATENCY_BUCKETS = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


class Metrics:
    """The worker's metrics; ``observe`` records one processed batch."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry

        def counter(name: str, doc: str, labels: Iterable[str] = ()) -> Counter:
            return Counter(name, doc, list(labels), registry=registry)

        self.records_in = counter("ctxpress_records_in_total", "Input records consumed.", ["topic"])
        self.bytes_in = counter("ctxpress_bytes_in_total", "Input value bytes consumed.", ["topic"])
        self.records_out = counter(
            "ctxpress_records_out_total",
            "Input records by outcome: compressed (published) or dead_letter.",
            ["mode", "outcome"],
        )
        self.record_tokens_before = counter(
            "ctxpress_record_tokens_before_total", "Tokens of compressed records before.", ["mode"]
        )
        self.record_tokens_after = counter(
            "ctxpress_record_tokens_after_total", "Tokens of compressed records after.", ["mode"]
        )
        self.engine_tokens_before = counter(
            "ctxpress_engine_tokens_before_total",
            "Tokens going into each engine.",
            ["mode", "engine"],
        )
        self.engine_tokens_after = counter(
            "ctxpress_engine_tokens_after_total",
            "Tokens coming out of each engine (after the gate).",
            ["mode", "engine"],
        )
        self.engine_runs = counter(
            "ctxpress_engine_runs_total",
            "Engine runs by status (applied, unchanged, inflation, fidelity, error, disabled).",
            ["mode", "engine", "status"],
        )
        self.gate_rejections = counter(
            "ctxpress_gate_rejections_total",
            "Messages the fidelity gate reverted, by engine and violated kind "
            "(kind 'error' for an engine that raised).",
            ["engine", "kind"],
        )
        self.dead_letters = counter(
            "ctxpress_dead_letters_total",
            "Dead letters published, by reason (the stage: decode, validate, gate, engine, pipeline).",
            ["reason"],
        )
        self.offload_entries = counter(
            "ctxpress_offload_entries_total", "Stashed originals published to the offload topic."
        )
        self.latency = Histogram(
            "ctxpress_record_latency_seconds",
            "Processing time per record (decode, validate, pipeline, serialise).",
            ["mode"],
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.batch_size = Histogram(
            "ctxpress_batch_size",
            "Records per published chunk (an agent batch, split at about 2 MB of input).",
            buckets=BATCH_BUCKETS,
            registry=registry,
        )
        self.publish_seconds = Histogram(
            "ctxpress_publish_seconds",
            "Time to publish one batch (exactly_once: until its transactions committed).",
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.redelivered = counter(
            "ctxpress_redelivered_skipped_total",
            "Messages Faust delivered again after they were published; dropped.",
        )
        self.gap_records = counter(
            "ctxpress_gap_records_filled_total",
            "Records Faust skipped that the worker read from the broker itself.",
        )
        self.table_recovery_finished = counter(
            "ctxpress_table_recovery_finished_total",
            "Savings-table changelog partitions whose stalled recovery the worker finished: "
            "read_to_end (only transaction markers were left) or given_up.",
            ["how"],
        )
        self.publish_retries = counter(
            "ctxpress_publish_retries_total", "Batch publications retried after a broker error."
        )
        self.info = Gauge(
            "ctxpress_worker_info",
            "Always 1; the labels describe the worker's configuration.",
            ["guarantee", "default_mode"],
            registry=registry,
        )

    def prime(self, engines_by_mode: Mapping[str, Sequence[str]]) -> None:
        """Create the labelled series the dashboards watch at 0 for every known label value:
        ``engines_by_mode`` is the chain the worker runs for each mode."""
        for reason in DEAD_LETTER_REASONS:
            self.dead_letters.labels(reason)
        for outcome in OUTCOMES:
            for mode in engines_by_mode:
                self.records_out.labels(mode, outcome)
        self.records_out.labels("unknown", "dead_letter")  # rejected before its mode was known
        for mode, engines in engines_by_mode.items():
            self.latency.labels(mode)
            self.record_tokens_before.labels(mode)
            self.record_tokens_after.labels(mode)
            for engine in engines:
                self.engine_tokens_before.labels(mode, engine)
                self.engine_tokens_after.labels(mode, engine)
                for status in ENGINE_STATUSES:
                    self.engine_runs.labels(mode, engine, status)
        for engine in sorted({e for engines in engines_by_mode.values() for e in engines}):
            for kind in GATE_KINDS:
                self.gate_rejections.labels(engine, kind)
        for how in ("read_to_end", "given_up"):
            self.table_recovery_finished.labels(how)

    def observe(self, results: Iterable[Processed]) -> None:
        """Count a published batch: each counter series moves once per batch by its sum (the
        same values as one ``inc`` per record, at a fraction of the event loop's time)."""
        sums: dict[tuple[Any, tuple[str, ...]], float] = {}

        def add(metric: Any, labels: tuple[str, ...], value: float = 1) -> None:
            key = (metric, labels)
            sums[key] = sums.get(key, 0) + value

        count = 0
        for result in results:
            count += 1
            self._collect(result, add)
        for (metric, labels), value in sums.items():
            (metric.labels(*labels) if labels else metric).inc(value)
        self.batch_size.observe(count)

    def _collect(self, result: Processed, add: Callable[..., None]) -> None:
        msg = result.message
        add(self.records_in, (msg.topic,))
        add(self.bytes_in, (msg.topic,), len(msg.value or b""))
        mode = result.mode
        self.latency.labels(mode).observe(result.seconds)
        outcome = result.outcome
        if outcome is None:
            add(self.records_out, (mode, "dead_letter"))
            add(self.dead_letters, (result.stage or "pipeline",))
            return
        add(self.records_out, (mode, "compressed"))
        add(self.record_tokens_before, (mode,), outcome.stats["tokens_before"])
        add(self.record_tokens_after, (mode,), outcome.stats["tokens_after"])
        for stats in outcome.engine_stats:
            add(self.engine_tokens_before, (mode, stats.engine), stats.tokens_before)
            add(self.engine_tokens_after, (mode, stats.engine), stats.tokens_after)
            add(self.engine_runs, (mode, stats.engine, stats.status))
        for rejection in outcome.rejections:
            add(self.dead_letters, (rejection.stage,))
            kinds = {v.kind for v in rejection.violations} or {"error"}
            for kind in sorted(kinds):
                add(self.gate_rejections, (rejection.engine, kind))
        if outcome.stash:
            add(self.offload_entries, (), len(outcome.stash))
