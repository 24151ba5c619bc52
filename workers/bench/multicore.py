"""One core against ``jobs`` processes in the same run (``ctxpress bench --jobs N``).

The input is repeated up to ``target_mb`` (each copy with other digits in its
strings, so that no copy is a cache hit of another) so that starting the pool is paid
once per pass, as on a real batch.  Each pass times one core
(:func:`~workers.pipeline.batch.compress_lines` in this process) and then
``jobs`` processes (:func:`~workers.pipeline.parallel.compress_parallel`) on the
same lines, each with empty caches; the ratio is of the median passes, and
``cpu_overhead`` is the CPU time of the jobs pass (this process and its
workers) over that of one core, which says what the ratio would be on idle
cores (about ``jobs / cpu_overhead``) when the machine is shared.  The
load average is reported with it: on a shared machine it says how many cores
were really free.  ``machine_ratio`` is the same ratio for a loop of pure
arithmetic (one process, then ``jobs`` forked processes doing the same each),
measured next to every pass: what the cores give right now to work that shares
nothing, to read ``ratio`` against (itself noisy: a few tenths of a second per pass,
so ``ratio`` can come out above it).
"""

from __future__ import annotations

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

__all__ = ["bench_jobs", "machine_ratio", "scaled"]


_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_DIGITS = re.compile(rb"\\u[0-9a-fA-F]{4}|[1-9]")


def _variant(line: bytes, k: int) -> bytes:
    """``line`` with the digits 1-9 inside its JSON strings rotated by ``k`` (0 and \\u escapes
    kept): the same shapes and sizes, but texts no cache has seen in another copy."""
    if k % 9 == 0:
        return line

    def digit(m: re.Match[bytes]) -> bytes:
        d = m.group()
        return d if len(d) > 1 else bytes([0x31 + (d[0] - 0x31 + k) % 9])

    return _STRING.sub(lambda s: _DIGITS.sub(digit, s.group()), line)


def scaled(lines: list[bytes], target_mb: float) -> list[bytes]:
    """``lines`` repeated until they hold at least ``target_mb`` MB (at least once); each copy
    has its string digits rotated (:func:`_variant`), so a copy is not a cache hit of the last."""
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


def bench_jobs(lines: list[bytes], mode: str, jobs: int, repeat: int = 3) -> dict[str, Any]:
    """MB/s on one core and on ``jobs`` processes over ``lines``, and their ratio."""
    pipeline = Pipeline(Settings.from_env(mode=mode))
    for _ in compress_parallel(lines[:3], pipeline, MemoryStore(), jobs=1):  # warm-up
        pass
    size = sum(len(x) + 1 for x in lines)
    one: list[float] = []
    many: list[float] = []
    cpu_one: list[float] = []
    cpu_many: list[float] = []
    machine: list[float] = []
    load_before = os.getloadavg()
    for _ in range(repeat):
        seconds, cpu, records_one, bytes_one = _pass(lines, pipeline, 1)
        one.append(seconds)
        cpu_one.append(cpu)
        seconds, cpu, records_many, bytes_many = _pass(lines, pipeline, jobs)
        many.append(seconds)
        cpu_many.append(cpu)
        machine.append(machine_ratio(jobs))
        if (records_one, bytes_one) != (records_many, bytes_many):
            raise AssertionError(f"{mode}: {jobs} jobs gave other output than one core")
    one_s, many_s = statistics.median(one), statistics.median(many)
    return {
        "mode": mode,
        "jobs": jobs,
        "mb": round(size / 1e6, 2),
        "passes": repeat,
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
