"""One core against ``jobs`` processes in the same run (``ctxpress bench --jobs N``).

The input is repeated up to ``target_mb`` (each copy with its strings' digits in
another order, so that no copy is a cache hit of another).  A pass cuts it in
segments of about 40 MB and runs each segment on one core
(:func:`~workers.pipeline.batch.compress_lines` in this process) and on
``jobs`` processes (:func:`~workers.pipeline.parallel.compress_parallel`), back
to back in alternating order, each with empty caches, so that both sides see the
same drift of a machine whose speed changes over seconds; the ratio is of the
median passes, and ``cpu_overhead`` is the CPU time of the jobs side (this process
and its workers) over that of one core, which says what the ratio would be on idle
cores (about ``jobs / cpu_overhead``) when the machine is shared.  The
load average is reported with it: on a shared machine it says how many cores
were really free.  ``machine_ratio`` is the same ratio for a loop of pure
arithmetic (one process, then ``jobs`` forked processes doing the same each),
measured after every segment: what the cores give right now to work that shares
nothing, to read ``ratio`` against (itself noisy: a few tenths of a second each,
so ``ratio`` can come out above it).
"""

from __future__ import annotations

import math
import multiprocessing
import os
import re
import resource
import statistics
import time
from typing import Any

from workers.core.offload import MemoryStore
from workers.core.settings import Settings
from workers.core.tokens import TokenCounter
from workers.pipeline.caches import clear_content_caches
from workers.pipeline.parallel import compress_parallel
from workers.pipeline.runner import Pipeline

__all__ = ["bench_jobs", "machine_ratio", "scaled", "segments"]


_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_DIGITS = re.compile(rb"\\u[0-9a-fA-F]{4}|[1-9]+")
_NINE = b"123456789"


def _permutation(k: int) -> bytes:
    """An ordering of the digits 1-9 for copy ``k`` (0 the identity; copies 9! apart alike),
    as a table; neighbouring copies get unrelated orderings (``k`` is spread by a prime)."""
    digits = list(_NINE)
    k = k * 100_003 % 362_880
    order = bytearray()
    for place in range(8, -1, -1):
        index, k = divmod(k, math.factorial(place))
        order.append(digits.pop(index))
    return bytes.maketrans(_NINE, bytes(order))


def _variant(line: bytes, k: int) -> bytes:
    """``line`` with the digits 1-9 inside its JSON strings permuted by the ``k``-th ordering
    (0 and ``\\u`` escapes kept): the same shapes and sizes, but, for 9! copies, texts with a
    digit that no cache has seen in another copy."""
    if k % 362_880 == 0:
        return line
    table = _permutation(k)

    def digits(m: re.Match[bytes]) -> bytes:
        d = m.group()
        return d if d[:2] == b"\\u" else d.translate(table)

    def string(s: re.Match[bytes]) -> bytes:
        text = s.group()
        return text.translate(table) if b"\\u" not in text else _DIGITS.sub(digits, text)

    return _STRING.sub(string, line)


def scaled(lines: list[bytes], target_mb: float) -> list[bytes]:
    """``lines`` repeated until they hold at least ``target_mb`` MB (at least once); each copy
    has its string digits permuted (:func:`_variant`), so a copy is not a cache hit of another."""
    size = sum(len(x) + 1 for x in lines) or 1
    times = max(1, -(-int(target_mb * 1e6) // size))
    return [_variant(line, k) for k in range(times) for line in lines]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


_SPIN_LOOPS = 2_000_000


def _spin(loops: int = _SPIN_LOOPS) -> int:
    """Pure arithmetic for about a fifth of a second: CPU work that shares nothing."""
    x = 0
    for i in range(loops):
        x += i * i % 7
    return x


def machine_ratio(jobs: int) -> float:
    """How much faster ``jobs`` processes do ``jobs`` times :func:`_spin` than one process does
    it once each, now (``jobs`` on free cores, less on a shared machine)."""
    started = time.perf_counter()
    for _ in range(jobs):
        _spin()
    one = time.perf_counter() - started
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_spin) for _ in range(jobs)]
    started = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return one / (time.perf_counter() - started)


def _pass(lines: list[bytes], pipeline: Pipeline, jobs: int) -> tuple[float, float, int, int]:
    """Wall seconds, CPU seconds (this process and its finished children), records, bytes out."""
    clear_content_caches()
    pipeline.tokens = TokenCounter(
        pipeline.settings.encoding, backend=pipeline.settings.token_backend
    )
    started = time.perf_counter()
    cpu_started = time.process_time() + _children_cpu()
    records = out_bytes = 0
    for result in compress_parallel(lines, pipeline, MemoryStore(), timings=False, jobs=jobs):
        if result.outcome is not None:
            records += 1
            out_bytes += len(result.encoded())
    wall = time.perf_counter() - started
    return wall, time.process_time() + _children_cpu() - cpu_started, records, out_bytes


SEGMENT_MB = 40.0


def segments(lines: list[bytes], segment_mb: float = SEGMENT_MB) -> list[list[bytes]]:
    """``lines`` cut into runs of about ``segment_mb`` MB each (at least one run)."""
    size = sum(len(x) + 1 for x in lines)
    count = max(1, round(size / (segment_mb * 1e6)))
    step = -(-len(lines) // count) if lines else 1
    return [lines[i : i + step] for i in range(0, len(lines), step)] or [lines]


def bench_jobs(
    lines: list[bytes], mode: str, jobs: int, repeat: int = 3, segment_mb: float = SEGMENT_MB
) -> dict[str, Any]:
    """MB/s on one core and on ``jobs`` processes over ``lines``, and their ratio.

    A pass runs the input in segments of about ``segment_mb`` MB, each on one core and on
    ``jobs`` processes back to back, in alternating order (one core first, then the jobs
    first, ...): on a machine whose speed drifts over seconds, both sides see the same drift.
    A pass's time per side is the sum over its segments (each jobs run pays its pool start)."""
    pipeline = Pipeline(Settings.from_env(mode=mode))
    for _ in compress_parallel(lines[:3], pipeline, MemoryStore(), jobs=1):  # warm-up
        pass
    size = sum(len(x) + 1 for x in lines)
    parts = segments(lines, segment_mb)
    one: list[float] = []
    many: list[float] = []
    cpu_one: list[float] = []
    cpu_many: list[float] = []
    machine: list[float] = []
    load_before = os.getloadavg()
    turn = 0
    for _ in range(repeat):
        totals = {1: [0.0, 0.0, 0, 0], jobs: [0.0, 0.0, 0, 0]}
        for part in parts:
            order = (1, jobs) if turn % 2 == 0 else (jobs, 1)
            turn += 1
            for n in order:
                seconds, cpu, records, out_bytes = _pass(part, pipeline, n)
                total = totals[n]
                total[0] += seconds
                total[1] += cpu
                total[2] += records
                total[3] += out_bytes
            machine.append(machine_ratio(jobs))
        one.append(totals[1][0])
        cpu_one.append(totals[1][1])
        many.append(totals[jobs][0])
        cpu_many.append(totals[jobs][1])
        if totals[1][2:] != totals[jobs][2:]:
            raise AssertionError(f"{mode}: {jobs} jobs gave other output than one core")
    one_s, many_s = statistics.median(one), statistics.median(many)
    return {
        "mode": mode,
        "jobs": jobs,
        "mb": round(size / 1e6, 2),
        "passes": repeat,
        "segments": len(parts),
        "one_core_mb_per_s": round(size / one_s / 1e6, 2),
        "jobs_mb_per_s": round(size / many_s / 1e6, 2),
        "ratio": round(one_s / many_s, 2),
        # CPU of the jobs pass (parent + workers) over CPU of one core: the cost of the pool;
        # on idle cores the ratio would be about jobs / cpu_overhead
        "cpu_overhead": round(statistics.median(cpu_many) / statistics.median(cpu_one), 2),
        # the same ratio for work that shares nothing, measured after each pass
        "machine_ratio": round(statistics.median(machine), 2),
        "load_average": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "cores": os.cpu_count(),
    }
