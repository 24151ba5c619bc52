"""In-process benchmark of the pipeline per mode (``ctxpress bench`` prints it).

Prints, per mode: MB/s and records/s of input (the median of ``--repeat``
passes, each with empty caches), p50/p99 per-record latency (and the p99 of
records under 100 KB, the size the latency target is for),
peak memory (max RSS), tokens saved, and the ratio to one tokenizer pass over
the same text (the floor for exact token accounting).  Targets live here, not
in timed tests.  ``families`` holds the same savings per output family (the
filter a tool output was recognised as, :mod:`workers.pipeline.explain`):
outputs, tokens before/after and critical facts kept.
"""

from __future__ import annotations

import resource
import statistics
import time
from typing import Any

import orjson

from workers.core.offload import MemoryStore
from workers.core.settings import Settings
from workers.core.tokens import TokenCounter
from workers.messages import InvalidRecord, parse_record
from workers.pipeline.batch import Summary, compress_lines
from workers.pipeline.caches import clear_content_caches
from workers.pipeline.explain import UnitReport, explain_record, family_rows
from workers.pipeline.runner import Pipeline

__all__ = ["BenchResult", "bench_mode", "tokenizer_floor_seconds", "unit_texts"]


class BenchResult(dict[str, Any]):
    pass


SMALL_RECORD = 100_000  # bytes: the latency target (p99 under 60 ms) is for records under this


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[k]


def unit_texts(lines: list[bytes]) -> list[str]:
    texts: list[str] = []
    for raw in lines:
        try:
            texts.extend(u.text for u in parse_record(orjson.loads(raw)).units)
        except (orjson.JSONDecodeError, InvalidRecord):
            continue
    return texts


def tokenizer_floor_seconds(texts: list[str], counter: TokenCounter) -> float:
    """Seconds for one uncached pass of ``counter``'s tokenizer over ``texts``."""
    started = time.process_time()
    for text in texts:
        counter.uncached_count(text)
    return time.process_time() - started


def _reports(
    lines: list[bytes], outputs: dict[int, dict[str, Any]], pipeline: Pipeline
) -> list[UnitReport]:
    """Per tool output of the input (and a ``(messages)`` row per record): family, tokens, facts."""
    filters = getattr(pipeline, "_filters", None)  # the set the pipeline's toolfilter uses
    reports: list[UnitReport] = []
    for line_no, raw in enumerate(lines, start=1):
        output = outputs.get(line_no)
        if output is None:
            continue
        reports.extend(
            explain_record(orjson.loads(raw), output, {}, pipeline.tokens, filters, lines=False)
        )
    return reports


def bench_mode(lines: list[bytes], mode: str, repeat: int = 1) -> BenchResult:
    pipeline = Pipeline(Settings.from_env(mode=mode))
    # Warm-up: engines compile their patterns on first use; a worker pays that once.
    for _ in compress_lines(lines[:3], pipeline, MemoryStore()):
        pass
    latencies: list[float] = []
    small: list[float] = []  # latencies of records under SMALL_RECORD bytes
    summary = Summary()
    outputs: dict[int, dict[str, Any]] = {}
    wall: list[float] = []
    cpu: list[float] = []
    for _ in range(repeat):
        clear_content_caches()  # every pass pays for every text, like new traffic
        pipeline.tokens = TokenCounter(  # cold cache each pass
            pipeline.settings.encoding, backend=pipeline.settings.token_backend
        )
        summary = Summary()
        outputs = {}
        started = time.perf_counter()
        cpu_started = time.process_time()
        for result in compress_lines(lines, pipeline, MemoryStore()):
            summary.add(result)
            if result.outcome is not None:
                outputs[result.line_no] = result.outcome.record
                if result.size < SMALL_RECORD:
                    small.append(result.outcome.stats["duration_ms"])
        cpu.append(time.process_time() - cpu_started)
        wall.append(time.perf_counter() - started)
        latencies.extend(summary.latencies_ms)
    seconds = statistics.median(wall)
    cpu_seconds = statistics.median(cpu)
    # the floor is measured like the mode: the median of several passes (one pass of
    # ~50 ms swung the ratio from 2.0 to 3.4 between two runs of the same code)
    texts = unit_texts(lines)
    floor = statistics.median(
        tokenizer_floor_seconds(texts, pipeline.tokens) for _ in range(max(3, repeat))
    )
    reports = _reports(lines, outputs, pipeline)
    facts = sum(r.facts for r in reports)
    lost = facts - sum(r.facts_kept for r in reports)
    return BenchResult(
        mode=mode,
        mb_per_s=round(summary.bytes_in / seconds / 1e6, 2),
        cpu_mb_per_s=round(summary.bytes_in / cpu_seconds / 1e6, 2),
        records_per_s=round(summary.records / seconds, 1),
        passes=repeat,
        mb_per_s_all=[round(summary.bytes_in / w / 1e6, 2) for w in wall],
        p50_ms=round(_percentile(latencies, 0.5), 2),
        p99_ms=round(_percentile(latencies, 0.99), 2),
        p99_small_ms=round(_percentile(small, 0.99), 2),
        peak_rss_mb=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        tokens_before=summary.tokens_before,
        tokens_after=summary.tokens_after,
        saved_pct=round(summary.saved_pct, 2),
        dead_letters=summary.dead_letters,
        rejections=summary.rejections,
        tokenizer_ratio=round(cpu_seconds / floor, 2) if floor else 0.0,
        tokenizer=f"{pipeline.tokens.encoding_name} ({pipeline.tokens.backend})",
        facts=facts,
        facts_visible=facts - lost,
        families=family_rows(reports),
    )
