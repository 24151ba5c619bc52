"""``ctxpress bench-kafka``: throughput through the broker, next to its baselines, in one run.

For each record size (2 KB and 50 KB tool outputs, 1 MB and 5 MB transcripts by default;
JSON rows, lossless mode):

1. **in-process**: the worker's per-record work (:class:`~workers.service.process.Processor`:
   decode, validate, pipeline, serialise) in a loop, no Kafka;
2. **aiokafka copy loop**: a plain consume -> produce -> commit loop on the
   same broker that copies the input unchanged (the client/broker ceiling);
3. **aiokafka + pipeline**: the same loop running the Processor per record
   (what a hand-written worker without Faust would do, at least once);
4. **ctxpress worker**: ``ctxpress worker`` (exactly_once) as a subprocess.

Kafka rows read a backlog produced beforehand and are timed from the first
record out to the last (the worker from the first time its
``ctxpress_records_out_total`` metric is seen above 0, polled every 50 ms until then and
every 5 s after, because each page costs the worker CPU, to the timestamp of its last
output record), so start-up
and group joins are not counted.  The worker's peak RSS (``VmHWM``) is reported.  Every fresh pipeline
starts with a cold token cache.  The in-process loop runs before the Kafka rows and
again after them, and the table shows the mean of the two (the machine's speed drifts
over minutes).  The table's last column compares each row with that in-process rate
of the same size; the target is the worker at >= 80 % of in-process.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from workers.core.settings import Settings
from workers.service.kafka import clients
from workers.service.kafka.io import read_topic
from workers.service.kafka.options import bootstrap_list, client_options
from workers.service.process import Processor
from workers.service.records import InMessage
from workers.service.supervise import (
    WorkerProcess,
    child_pids,
    cpu_seconds,
    ctxpress_argv,
    free_port,
    peak_rss_mb,
    scrape,
)
from workers.service.topics import TopicNames, create_topics, load_topics
from workers.testing.worker import padded_record

__all__ = ["Result", "main", "run_bench"]

#: the worker's throughput goal, in % of the in-process rate of the same records
TARGET_PCT = 80.0

#: seconds between two /metrics pages once the worker's first output is seen
AFTER_FIRST_POLL_S = 5.0

#: records per size by default: a few seconds of work each
DEFAULT_RECORDS = {2048: 4000, 51200: 400, 1048576: 24, 5242880: 6}


@dataclass(slots=True)
class Result:
    size: int
    path: str
    records: int
    megabytes: float
    seconds: float
    note: str = ""
    peak_rss_mb: float | None = None  # the worker's peak resident memory (VmHWM), when known
    #: CPU seconds spent over the timed part: this process's (in-process, the aiokafka
    #: loops), the worker's and its children's (the worker row), when known
    cpu_seconds: float | None = None

    @property
    def rate(self) -> float:
        return self.records / self.seconds if self.seconds > 0 else 0.0

    @property
    def mb_s(self) -> float:
        return self.megabytes / self.seconds if self.seconds > 0 else 0.0

    @property
    def cpu_ms_per_record(self) -> float | None:
        if self.cpu_seconds is None or not self.records:
            return None
        return 1000.0 * self.cpu_seconds / self.records


def _unit(size: int) -> str:
    """``2 KB``, ``50 KB``, ``1 MB``, ``5 MB``."""
    return f"{size // 1024} KB" if size < 1024 * 1024 else f"{size // (1024 * 1024)} MB"


def _records(size: int, n: int, mode: str, tag: str) -> list[bytes]:
    return [padded_record(f"b{tag}-{size}-{i}", size, mode=mode, seed=i) for i in range(n)]


def _processor(settings: Settings, names: TopicNames) -> Processor:
    from workers.pipeline.factory import build_pipeline

    return Processor(build_pipeline(settings), names, settings.app_id)


def in_process(settings: Settings, names: TopicNames, lines: Sequence[bytes], size: int) -> Result:
    proc = _processor(settings, names)
    started, cpu = time.perf_counter(), time.process_time()
    for i, line in enumerate(lines):
        result = proc.process(InMessage(names.tool_outputs, 0, i, None, None, line))
        assert result.ok, result.reason
    seconds = time.perf_counter() - started
    cpu = time.process_time() - cpu
    return Result(
        size, "in-process", len(lines), sum(map(len, lines)) / 1e6, seconds, cpu_seconds=cpu
    )


async def _produce(settings: Settings, topic: str, lines: Sequence[bytes]) -> None:
    producer = clients.producer(
        clients.connection(settings),
        linger_ms=10,
        max_batch_size=1024 * 1024,
        max_request_size=settings.max_message_bytes,
        acks="all",
    )
    await producer.start()
    try:
        futures = [await producer.send(topic, line) for line in lines]
        await asyncio.gather(*futures)
    finally:
        await producer.stop()


async def aiokafka_loop(
    settings: Settings,
    source: str,
    sink: str,
    n: int,
    size: int,
    processor: Processor | None,
) -> Result:
    """Consume ``n`` records of ``source``, produce to ``sink`` (processed or not), commit."""
    conn = clients.connection(settings)
    consumer = clients.consumer(
        conn,
        source,
        group_id=f"bench-loop-{uuid.uuid4().hex[:8]}",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        max_partition_fetch_bytes=settings.max_message_bytes,
    )
    producer = clients.producer(
        conn,
        linger_ms=settings.producer_linger_ms,
        max_batch_size=settings.producer_max_batch_size,
        max_request_size=settings.max_message_bytes,
        acks="all",
        enable_idempotence=True,
    )
    await consumer.start()
    await producer.start()
    seen = 0
    nbytes = 0
    started = cpu = 0.0
    try:
        while seen < n:
            batches = await consumer.getmany(timeout_ms=1000, max_records=settings.batch_size)
            if not batches:
                continue
            if not started:
                started, cpu = time.perf_counter(), time.process_time()
            futures = []
            for records in batches.values():
                for record in records:
                    seen += 1
                    nbytes += len(record.value)
                    if processor is None:
                        futures.append(await producer.send(sink, record.value, key=record.key))
                        continue
                    msg = InMessage(
                        record.topic,
                        record.partition,
                        record.offset,
                        None,
                        record.key,
                        record.value,
                    )
                    for out in processor.process(msg).outputs:
                        futures.append(await producer.send(sink, out.value, key=out.key))
            await asyncio.gather(*futures)
            await consumer.commit()
        seconds = time.perf_counter() - started
        cpu = time.process_time() - cpu
    finally:
        await producer.stop()
        await consumer.stop()
    path = "aiokafka copy loop" if processor is None else "aiokafka + pipeline"
    return Result(size, path, seen, nbytes / 1e6, seconds, cpu_seconds=cpu)


async def _last_timestamp(settings: Settings, topic: str) -> float | None:
    """The newest record timestamp of ``topic`` (committed records), in epoch seconds."""
    newest: int | None = None
    async for record in read_topic(settings, topic, until_end=True, idle_timeout=10.0):
        if newest is None or record.timestamp > newest:
            newest = record.timestamp
    return newest / 1000.0 if newest is not None else None


def worker_run(
    settings: Settings, names: TopicNames, lines: Sequence[bytes], size: int, tmp: Path
) -> Result:
    """Start ``ctxpress worker`` on a backlog; time first output to last by its metrics."""
    port = free_port()
    # The caller's CTXPRESS_* settings (security, guarantee, batch size) apply to the worker too.
    env = {
        **os.environ,
        "CTXPRESS_KAFKA_BOOTSTRAP": settings.kafka_bootstrap,
        "CTXPRESS_TOPIC_PREFIX": settings.topic_prefix,
        "CTXPRESS_APP_ID": f"bench-worker-{uuid.uuid4().hex[:8]}",
        "CTXPRESS_WEB_PORT": str(port),
        "CTXPRESS_DATA_DIR": str(tmp / "data"),
        "CTXPRESS_LOG_LEVEL": "warning",
    }
    worker = WorkerProcess(
        env, tmp / f"worker-{size}.log", [*ctxpress_argv(), "worker", "--loglevel", "warning"]
    )
    worker.start()
    n = len(lines)
    try:
        first_t = last_t = 0.0
        first_n = 0
        first_cpu: float | None = None
        cpu_used: float | None = None
        processing = publishing = batches = 0.0
        peak: float | None = None
        children = 0.0
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if not worker.alive():
                raise RuntimeError(f"worker exited:\n{worker.log_tail()}")
            done = scrape(port, "ctxpress_records_out_total") or 0.0
            now = time.time()  # the clock of the outputs' timestamps (same machine)
            if done > 0 and not first_t:
                first_t, first_n = now, int(done)
                first_cpu = _tree_cpu_seconds(worker.pid)
            if done >= n:
                last_cpu = _tree_cpu_seconds(worker.pid)
                if first_cpu is not None and last_cpu is not None:
                    cpu_used = last_cpu - first_cpu
                last_t = asyncio.run(_last_timestamp(settings, names.compressed)) or now
                processing = scrape(port, "ctxpress_record_latency_seconds_sum") or 0.0
                publishing = scrape(port, "ctxpress_publish_seconds_sum") or 0.0
                batches = scrape(port, "ctxpress_publish_seconds_count") or 0.0
                peak = peak_rss_mb(worker.pid)
                children = sum(peak_rss_mb(child) or 0.0 for child in child_pids(worker.pid))
                break
            # rendering /metrics costs the worker's event loop CPU (27 ms a page in a py-spy
            # profile of a 2 KB run, Faust's sensors included): polled every 50 ms until the
            # first output (before the timed part), then every 5 s, nearer what a Prometheus
            # server does (15 s by default); the start is timed by the count seen first, the
            # end by the last output's timestamp, so polling less only ends the loop later
            time.sleep(AFTER_FIRST_POLL_S if first_t else 0.05)
        else:
            raise RuntimeError(f"worker did not finish {n} records in 300 s:\n{worker.log_tail()}")
    finally:
        worker.terminate(timeout=30)
    counted = n - first_n
    per_record = sum(map(len, lines)) / 1e6 / n
    note = (
        f"records {processing:.1f} s, publishing {publishing:.1f} s "
        f"in {batches:.0f} batches (whole run)"
    )
    if peak is not None:
        note += f", worker peak RSS {peak:.0f} MB"
        if children:
            note += f" + {children:.0f} MB in its child processes"
    return Result(
        size,
        "ctxpress worker",
        counted,
        counted * per_record,
        last_t - first_t,
        note,
        peak,
        cpu_used,
    )


def _tree_cpu_seconds(pid: int) -> float | None:
    """CPU seconds (user + system) of process ``pid`` and its children; None off Linux."""
    total = 0.0
    for one in (pid, *child_pids(pid)):
        used = cpu_seconds(one)
        if used is None:
            return None
        total += used
    return total


def run_bench(
    settings: Settings,
    sizes: Sequence[int],
    records: int | None = None,
    mode: str = "lossless",
    keep_topics: bool = False,
) -> list[Result]:
    """Every path for every size; the topics it creates are deleted at the end (also after a
    failure) unless ``keep_topics``."""
    tag = uuid.uuid4().hex[:8]
    try:
        return _run_bench(settings, sizes, records, mode, tag)
    finally:
        if not keep_topics:
            prefix = f"bench{tag}-"
            try:
                gone = asyncio.run(_delete_topics(settings, prefix))
            except Exception as exc:  # the run's own error matters more
                print(f"bench-kafka: could not delete the {prefix}* topics: {exc}", file=sys.stderr)
            else:
                print(f"bench-kafka: deleted {gone} topics ({prefix}*)", file=sys.stderr)


async def _delete_topics(settings: Settings, prefix: str) -> int:
    """Delete every topic whose name starts with ``prefix``; returns how many."""
    admin = clients.admin(clients.connection(settings))
    await admin.start()
    try:
        doomed = sorted(t for t in await admin.list_topics() if t.startswith(prefix))
        if doomed:
            await admin.delete_topics(doomed)
        return len(doomed)
    finally:
        await admin.close()


def _run_bench(
    settings: Settings, sizes: Sequence[int], records: int | None, mode: str, tag: str
) -> list[Result]:
    base_settings = settings
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="ctxpress-bench-") as tmp_name:
        tmp = Path(tmp_name)
        for size in sizes:
            # Fresh topics per size, so each worker reads only its own backlog.
            settings = dataclasses.replace(base_settings, topic_prefix=f"bench{tag}-{size}.")
            names = TopicNames.from_settings(settings)
            bootstrap = ",".join(bootstrap_list(settings))
            asyncio.run(
                create_topics(
                    bootstrap,
                    load_topics(),
                    settings.topic_prefix,
                    client_options=client_options(settings),
                    max_message_bytes=settings.max_message_bytes,
                )
            )
            n = records or DEFAULT_RECORDS.get(size, max(200, 8_000_000 // size))
            lines = _records(size, n, mode, tag)
            print(f"bench-kafka: {n} records of {size:,} bytes ...", file=sys.stderr)
            first = len(results)
            results.append(in_process(settings, names, lines, size))
            source = f"{settings.topic_prefix}bench-loop"
            asyncio.run(_create_plain(bootstrap, [source, f"{source}-out"], settings, partitions=4))
            asyncio.run(_produce(settings, source, lines))
            results.append(
                asyncio.run(aiokafka_loop(settings, source, f"{source}-out", n, size, None))
            )
            results.append(
                asyncio.run(
                    aiokafka_loop(
                        settings, source, f"{source}-out", n, size, _processor(settings, names)
                    )
                )
            )
            asyncio.run(_produce(settings, names.tool_outputs, lines))
            results.append(worker_run(settings, names, lines, size, tmp))
            # once more after the Kafka rows: the machine's speed drifts over minutes, and
            # the rows are read against the mean of the two
            results[first] = _both(results[first], in_process(settings, names, lines, size))
    return results


def _both(before: Result, after: Result) -> Result:
    """One in-process row from the runs before and after the Kafka rows (their mean time)."""
    note = f"{before.rate:,.0f} records/s before the Kafka rows, {after.rate:,.0f} after"
    seconds = (before.seconds + after.seconds) / 2
    cpu = None
    if before.cpu_seconds is not None and after.cpu_seconds is not None:
        cpu = (before.cpu_seconds + after.cpu_seconds) / 2
    return dataclasses.replace(before, seconds=seconds, note=note, cpu_seconds=cpu)


async def _create_plain(
    bootstrap: str, topics: Sequence[str], settings: Settings, partitions: int
) -> None:
    from aiokafka.admin import NewTopic

    admin = clients.admin(clients.connection(bootstrap=bootstrap, options=client_options(settings)))
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        configs = {"max.message.bytes": str(settings.max_message_bytes)}
        new = [
            NewTopic(t, partitions, 1, topic_configs=configs) for t in topics if t not in existing
        ]
        if new:
            await admin.create_topics(new)
    finally:
        await admin.close()


def render(results: Sequence[Result]) -> str:
    base = {r.size: r.rate for r in results if r.path == "in-process"}
    header = (
        f"{'size':>8}  {'path':<22}{'records':>9}{'MB':>9}{'seconds':>9}{'records/s':>11}"
        f"{'MB/s':>8}{'vs in-process':>15}{'CPU ms/rec':>12}"
    )
    lines = [header, "-" * len(header)]
    for r in results:
        ratio = 100.0 * r.rate / base[r.size] if base.get(r.size) else 0.0
        per_record = r.cpu_ms_per_record
        cpu = f"{per_record:>12.2f}" if per_record is not None else f"{'-':>12}"
        lines.append(
            f"{_unit(r.size):>8}  {r.path:<22}{r.records:>9,}{r.megabytes:>9.1f}"
            f"{r.seconds:>9.2f}{r.rate:>11,.0f}{r.mb_s:>8.2f}{ratio:>14.0f}%{cpu}"
        )
        if r.note:
            lines.append(f"{'':>31}({r.note})")
    return "\n".join(lines)


def main(
    settings: Settings,
    sizes: Sequence[int],
    records: int | None,
    mode: str,
    as_json: bool,
    keep_topics: bool = False,
) -> int:
    try:
        results = run_bench(settings, sizes, records, mode, keep_topics)
    except Exception as exc:
        hint = clients.kafka_error_hint(exc, "bench-kafka", settings_hint=False)
        if hint is None:
            raise
        print(hint, file=sys.stderr)
        return 1
    print(render(results))
    if as_json:
        print(
            json.dumps(
                [
                    {**asdict(r), "rate": r.rate, "mb_s": r.mb_s, "cpu_ms": r.cpu_ms_per_record}
                    for r in results
                ]
            )
        )
    worker = {r.size: r for r in results if r.path == "ctxpress worker"}
    base = {r.size: r for r in results if r.path == "in-process"}
    print()
    for size in sorted(worker):
        if size not in base or base[size].rate <= 0:
            continue
        share = 100.0 * worker[size].rate / base[size].rate
        verdict = "meets" if share >= TARGET_PCT else "misses"
        unit = _unit(size)
        cpu = ""
        worker_cpu, base_cpu = worker[size].cpu_ms_per_record, base[size].cpu_ms_per_record
        if worker_cpu and base_cpu:
            # load on the machine (other processes, the broker) moves the rates; CPU per record
            # much less: this says how much work the worker adds to the pipeline's own
            cpu = (
                f"; CPU per record {worker_cpu:.2f} ms against {base_cpu:.2f} ms in-process "
                f"({100.0 * base_cpu / worker_cpu:.0f}%)"
            )
        print(
            f"worker at {share:.0f}% of in-process for {unit} records "
            f"({verdict} the {TARGET_PCT:.0f}% target){cpu}"
        )
    return 0
