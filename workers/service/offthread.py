"""One daemon thread that runs the pipeline, so the event loop stays free while it works.

The pipeline is CPU-bound Python.  Run on the event loop it stops everything else for
the length of a batch: the publication of the previous batch (its transactions wait for
the broker's answers), Faust's fetches, heartbeats and the web server.  Run here, the
loop gets the GIL between the pipeline's bytecodes, so the previous batch commits and the
next one fills while this one is compressed.  One thread: batches run one after the other
in the order given (per-partition order holds), and the engines' caches see one caller.

A daemon thread, so a worker that must exit (SIGTERM, a fatal error) is not held by a batch
still being compressed: its results are dropped and its offsets were never committed.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["PipelineThread"]

T = TypeVar("T")


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.cancelled():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


class PipelineThread:
    """``await runner.run(fn)``: ``fn()`` on the pipeline thread, its result on the loop."""

    def __init__(self, name: str = "ctxpress-pipeline") -> None:
        self.name = name
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], asyncio.Future[Any]]] = (
            queue.SimpleQueue()
        )
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _start(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name=self.name, daemon=True)
                self._thread.start()

    def _work(self) -> None:
        while True:
            fn, future = self._jobs.get()
            loop = future.get_loop()
            try:
                result, error = fn(), None
            except BaseException as exc:  # handed to the awaiting coroutine
                result, error = None, exc
            try:
                loop.call_soon_threadsafe(_settle, future, result, error)
            except RuntimeError:  # that loop is closed: nobody waits any more
                pass

    def run(self, fn: Callable[[], T]) -> asyncio.Future[T]:
        self._start()
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._jobs.put((fn, future))
        return future
