"""``ctxpress bench``: throughput, latency and memory of the pipeline per mode.

Prints, per mode: MB/s and records/s of input (the median of ``--repeat``
passes, each with empty caches), p50/p99 per-record latency,
peak memory (max RSS), tokens saved, and the ratio to one tokenizer pass over
the same text (the floor for exact token accounting).  Targets live here, not
in timed tests.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import orjson

from workers.cli._common import UserError
from workers.cli.corpus_cmd import ensure_corpus
from workers.core.catalog import MODES
from workers.core.offload import MemoryStore
from workers.core.settings import Settings
from workers.core.tokens import TokenCounter
from workers.engines import UnknownEngine
from workers.messages import InvalidRecord, parse_record
from workers.pipeline.batch import Summary, compress_lines
from workers.pipeline.caches import clear_content_caches
from workers.pipeline.runner import Pipeline
from workers.pipeline.visibility import count_facts, lost_facts

__all__ = ["BenchResult", "bench_mode", "register"]

# None: the generated corpus (``ctxpress corpus build``), built on demand
DEFAULT_CORPUS: str | None = None


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "bench",
        help="measure pipeline throughput, latency and memory per mode",
        description="Run the pipeline over a JSONL file once per mode (in-process, one core) and "
        "print MB/s, records/s, p50/p99 latency per record, peak memory and savings.",
    )
    p.add_argument(
        "-i",
        "--input",
        default=DEFAULT_CORPUS,
        help="JSONL file to run (default: the generated corpus, "
        ".cache/corpus/ctxpress-corpus-v<VERSION>.jsonl, built first when missing; "
        "see 'ctxpress corpus build')",
    )
    p.add_argument(
        "--modes",
        default="lossless,standard,aggressive",
        help="comma-separated modes to run (default: lossless,standard,aggressive)",
    )
    p.add_argument(
        "--repeat",
        type=int,
        default=5,
        help="cold passes over the file per mode; MB/s and records/s are the median pass "
        "(default: 5)",
    )
    p.add_argument(
        "--json", action="store_true", help="print one JSON object per mode instead of a table"
    )
    p.set_defaults(func=run)


class BenchResult(dict[str, Any]):
    pass


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[k]


def _unit_texts(lines: list[bytes]) -> list[str]:
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


def _facts(lines: list[bytes], outputs: dict[int, dict[str, Any]]) -> tuple[int, int]:
    """(critical tool-output facts in the input, how many are no longer visible)."""
    total = lost = 0
    for line_no, raw in enumerate(lines, start=1):
        output = outputs.get(line_no)
        if output is None:
            continue
        data = orjson.loads(raw)
        total += count_facts(data)
        lost += len(lost_facts(data, output))
    return total, lost


def bench_mode(lines: list[bytes], mode: str, repeat: int = 1) -> BenchResult:
    pipeline = Pipeline(Settings.from_env(mode=mode))
    # Warm-up: engines compile their patterns on first use; a worker pays that once.
    for _ in compress_lines(lines[:3], pipeline, MemoryStore()):
        pass
    latencies: list[float] = []
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
        cpu.append(time.process_time() - cpu_started)
        wall.append(time.perf_counter() - started)
        latencies.extend(summary.latencies_ms)
    seconds = statistics.median(wall)
    cpu_seconds = statistics.median(cpu)
    floor = tokenizer_floor_seconds(_unit_texts(lines), pipeline.tokens)
    facts, lost = _facts(lines, outputs)
    return BenchResult(
        mode=mode,
        mb_per_s=round(summary.bytes_in / seconds / 1e6, 2),
        cpu_mb_per_s=round(summary.bytes_in / cpu_seconds / 1e6, 2),
        records_per_s=round(summary.records / seconds, 1),
        passes=repeat,
        mb_per_s_all=[round(summary.bytes_in / w / 1e6, 2) for w in wall],
        p50_ms=round(_percentile(latencies, 0.5), 2),
        p99_ms=round(_percentile(latencies, 0.99), 2),
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
    )


def run(args: argparse.Namespace) -> int:
    try:
        path = Path(args.input) if args.input is not None else ensure_corpus()
        if not path.is_file():
            raise UserError(f"bench input {str(path)!r} not found; pass -i FILE.jsonl")
        lines = path.read_bytes().splitlines()
        if args.repeat < 1:
            raise UserError("--repeat must be at least 1")
        modes = [m.strip() for m in args.modes.split(",") if m.strip()]
        for mode in modes:
            if mode not in MODES:
                raise UserError(f"unknown mode {mode!r}; valid modes: {', '.join(MODES)}")
        env_settings = Settings.from_env()
        counter = TokenCounter(env_settings.encoding, backend=env_settings.token_backend)
        print(
            f"bench: {path} ({sum(map(len, lines)) / 1e6:.2f} MB, {len(lines)} lines), one core, "
            f"median of {args.repeat} cold passes, tokens: {counter.encoding_name} counted by {counter.backend}",
            file=sys.stderr,
        )
        header = f"{'mode':<11}{'MB/s':>8}{'CPU MB/s':>10}{'rec/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'peak MB':>9}{'saved %':>9}{'facts kept':>16}{'x tokenizer':>13}"
        if not args.json:
            print(header)
        for mode in modes:
            try:
                result = bench_mode(lines, mode, args.repeat)
            except UnknownEngine as exc:
                print(f"{mode:<11} not available: {exc}")
                continue
            if args.json:
                print(orjson.dumps(result).decode())
            else:
                print(
                    f"{mode:<11}{result['mb_per_s']:>8.2f}{result['cpu_mb_per_s']:>10.2f}"
                    f"{result['records_per_s']:>9.1f}"
                    f"{result['p50_ms']:>9.2f}{result['p99_ms']:>9.2f}{result['peak_rss_mb']:>9.1f}"
                    f"{result['saved_pct']:>9.2f}"
                    f"{str(result['facts_visible']) + '/' + str(result['facts']):>16}"
                    f"{result['tokenizer_ratio']:>13.2f}"
                )
        texts = _unit_texts(lines)
        text_mb = sum(len(t.encode("utf-8", "surrogatepass")) for t in texts) / 1e6
        speeds = [
            f"{backend} {text_mb / max(tokenizer_floor_seconds(texts, c), 1e-9):.1f} MB/s"
            for backend in ("bpe-openai", "tiktoken")
            for c in [TokenCounter(env_settings.encoding, backend=backend)]
        ]
        print(
            f"one tokenizer pass over the {text_mb:.2f} MB of texts: {', '.join(speeds)}",
            file=sys.stderr,
        )
        return 0
    except UserError as exc:
        print(f"ctxpress bench: {exc}", file=sys.stderr)
        return 2
