"""The pipeline in a child process (``CTXPRESS_PIPELINE_PROCESS=1``): loop and pipeline on two cores.

On the pipeline thread (:mod:`workers.service.offthread`) the event loop and the pipeline
share one interpreter lock: while a batch is compressed, every fetch, produce, commit and
heartbeat of the loop waits for its turn, and the pipeline waits for theirs.  A profile of
a worker on 2 KB records had the loop's Kafka and Faust work take about as many samples as
the pipeline.  Here the pipeline runs in a child process with its own interpreter, so the
two use two cores.

The child is spawned, not forked (the worker has threads and a running loop), and builds
the same :class:`~workers.service.process.Processor` from the settings
(:func:`~workers.service.process.make_processor`; ``CTXPRESS_PIPELINE_FACTORY`` holds).  It
serves one batch at a time over a pipe: the batch's
:class:`~workers.service.records.InMessage` list in, its
:class:`~workers.service.records.Processed` list out, in order; a record's own failure is
its dead letter, in the child as on the thread.  If the child dies, the batch raises
:class:`PipelineDied` and the worker stops as for any failed batch: nothing of it was
published or committed, and the next owner of the partitions processes it again.  The child
also ends when the worker does (its end of the pipe closes).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import threading
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.connection import Connection
from typing import Any

from workers.core.settings import Settings

__all__ = ["PipelineDied", "PipelineProcess"]


class PipelineDied(RuntimeError):
    """The pipeline's child process exited while a batch was in it."""


def _serve(conn: Connection, settings: Settings) -> None:
    from workers.core.heap import map_large_blocks
    from workers.pipeline.factory import build_pipeline
    from workers.service.process import make_processor

    map_large_blocks(settings.malloc_mmap_threshold)

    processor = make_processor(settings, build_pipeline(settings))
    while True:
        try:
            batch = conn.recv()
        except EOFError:  # the worker is gone
            return
        conn.send([_slim(processor.process(msg)) for msg in batch])


def _slim(result: Any) -> Any:
    """What the worker reads of a result (:func:`~workers.service.process.slimmed`), without
    the input message either (it has it: put back by :meth:`PipelineProcess._call`).  About
    half of what would be pickled for 2 KB records."""
    from workers.service.process import slimmed

    result.message = None
    return slimmed(result)


class PipelineProcess:
    """``await runner.batch(messages)``: ``Processor.process`` of each, in a child process."""

    def __init__(self, settings: Settings, name: str = "ctxpress-pipeline") -> None:
        self.settings = settings
        self.name = name
        self._conn: Connection | None = None
        self._child: Any = None
        self._lock = threading.Lock()
        # one thread waits on the pipe, so the loop does not; batches go one after the other
        self._waiter = ThreadPoolExecutor(1, thread_name_prefix=f"{name}-pipe")

    @property
    def pid(self) -> int | None:
        return self._child.pid if self._child is not None else None

    def _start(self) -> Connection:
        with self._lock:
            if self._conn is None:
                context = multiprocessing.get_context("spawn")
                parent, child_end = context.Pipe()
                self._child = context.Process(
                    target=_serve, args=(child_end, self.settings), name=self.name, daemon=True
                )
                self._child.start()
                child_end.close()
                self._conn = parent
            return self._conn

    def _call(self, messages: list[Any]) -> list[Any]:
        conn = self._start()
        try:
            conn.send(messages)
            results: list[Any] = conn.recv()
        except (EOFError, OSError) as exc:
            code = self._child.exitcode if self._child is not None else None
            raise PipelineDied(
                f"the pipeline process ({self.name}) exited while compressing a batch "
                f"(exit code {code}); the batch was not published"
            ) from exc
        for result, message in zip(results, messages, strict=True):
            result.message = message
        return results

    def batch(self, messages: list[Any]) -> asyncio.Future[list[Any]]:
        return asyncio.get_running_loop().run_in_executor(self._waiter, self._call, messages)

    def close(self) -> None:
        """End the child (it also ends on its own when this process exits)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            if self._child is not None:
                self._child.join(timeout=5)
                if self._child.is_alive():
                    self._child.kill()
                self._child = None
        self._waiter.shutdown(wait=False)
