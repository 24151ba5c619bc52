"""``compress_lines`` on several cores: chunks of lines to a process pool, results in input order.

The engines are pure, so a record gives the same bytes in any process.  The
parent reads the input and cuts it into chunks (``CHUNK_LINES`` lines or
``CHUNK_BYTES`` bytes, whichever comes first); forked workers run
:func:`~workers.pipeline.batch.compress_lines` on a chunk (stashes go straight
to the offload store, whose writes are atomic) and send the results back; the
parent yields them chunk by chunk in input order.  At most ``2 * jobs`` chunks
are in flight, so memory is bounded whatever the input's size.  An input that
fits in one chunk runs in-process (no pool to start for a few records).
"""

from __future__ import annotations

import gc
import multiprocessing
import os
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from itertools import chain
from typing import Any

from workers.core.offload import OffloadStore
from workers.pipeline.batch import LineResult, LongLine, compress_lines
from workers.pipeline.runner import Pipeline

__all__ = ["CHUNK_BYTES", "CHUNK_LINES", "compress_parallel", "default_jobs"]

CHUNK_LINES = 128
CHUNK_BYTES = 256 << 10

Chunk = tuple[int, list[Any]]  # (line number of its first line, lines)

# What the forked workers run with: set in the parent right before the pool forks.
_STATE: tuple[Pipeline, OffloadStore | None, bool, bool] | None = None


def default_jobs() -> int:
    """The cores this process may run on."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):
        return max(os.cpu_count() or 1, 1)


def _portable(raw: bytes) -> Any:
    """A line that pickles (a :class:`LongLine` keeps its size)."""
    if isinstance(raw, LongLine):
        return ("long", bytes(raw), raw.size)
    return raw


def _restored(raw: Any) -> bytes:
    if isinstance(raw, tuple):
        return LongLine(raw[1], raw[2])
    return bytes(raw)


def _chunks(lines: Iterable[bytes]) -> Iterator[Chunk]:
    start, size = 1, 0
    batch: list[Any] = []
    for n, raw in enumerate(lines, start=1):
        if not batch:
            start = n
        batch.append(_portable(raw))
        size += len(raw)
        if len(batch) >= CHUNK_LINES or size >= CHUNK_BYTES:
            yield start, batch
            batch, size = [], 0
    if batch:
        yield start, batch


def _run_chunk(chunk: Chunk) -> list[LineResult]:
    assert _STATE is not None, "the worker was not forked from compress_parallel"
    pipeline, store, timings, keep = _STATE
    start, lines = chunk
    raws = [_restored(raw) for raw in lines]
    results = list(compress_lines(raws, pipeline, store, timings=timings, start=start))
    if not keep:  # what the parent does not read is not pickled back
        for result in results:
            if result.outcome is not None and result.output is not None:
                result.outcome.record = {}
                result.outcome.stash = {}
    return results


def compress_parallel(
    lines: Iterable[bytes],
    pipeline: Pipeline,
    store: OffloadStore | None = None,
    *,
    timings: bool = True,
    jobs: int = 1,
    keep: bool = False,
) -> Iterator[LineResult]:
    """What ``compress_lines`` yields, in the same order, computed by ``jobs`` processes.

    Without ``keep``, a result computed in a worker whose line is written (``output``) has
    its outcome's ``record`` and ``stash`` emptied (the stash is in the store already), so
    that less is sent back; ``keep=True`` for callers that read them (``--explain``)."""
    if jobs <= 1:
        yield from compress_lines(lines, pipeline, store, timings=timings)
        return
    chunks = _chunks(lines)
    first = next(chunks, None)
    if first is None:
        return
    second = next(chunks, None)
    if second is None:  # one chunk: not worth a pool
        start, batch = first
        raws = [_restored(raw) for raw in batch]
        yield from compress_lines(raws, pipeline, store, timings=timings, start=start)
        return
    global _STATE
    _STATE = (pipeline, store, timings, keep)
    # What the workers inherit is moved out of the collector's sight: their collections then
    # do not walk (and copy-on-write) the parent's whole heap.
    gc.freeze()
    try:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(jobs, mp_context=context) as pool:
            pending: deque[Future[list[LineResult]]] = deque()
            for chunk in chain((first, second), chunks):
                pending.append(pool.submit(_run_chunk, chunk))
                while len(pending) >= 2 * jobs:
                    yield from pending.popleft().result()
            while pending:
                yield from pending.popleft().result()
    finally:
        _STATE = None
        gc.unfreeze()
