"""Shared pieces of the worker's end-to-end tests: topics, producing, reading back, checking."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from workers.core.catalog import MODES
from workers.core.settings import Settings
from workers.messages import RESERVED_KEY
from workers.service.kafka.io import produce_lines, read_topic
from workers.service.supervise import WorkerProcess, free_port, scrape, worker_env
from workers.service.topics import TopicNames, create_topics, load_topics, topic_limits
from workers.testing.worker import GATE_ENGINE, GATE_MODE, Sample, gate_rejecting_pipeline

FACTORY = "workers.testing.worker:gate_rejecting_pipeline"


@dataclass
class Run:
    """One isolated worker deployment: uuid topic prefix and app id (consumer group)."""

    bootstrap: str
    tmp: Path
    guarantee: str = "exactly_once"
    tag: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    port: int = field(default_factory=free_port)

    @property
    def prefix(self) -> str:
        return f"e2e{self.tag}."

    @property
    def app_id(self) -> str:
        return f"e2e-{self.tag}"

    @property
    def names(self) -> TopicNames:
        return TopicNames.from_prefix(self.prefix)

    def settings(self) -> Settings:
        return Settings(
            kafka_bootstrap=self.bootstrap,
            topic_prefix=self.prefix,
            app_id=self.app_id,
            processing_guarantee=self.guarantee,
        )

    def env(self, **extra: str) -> dict[str, str]:
        return worker_env(
            {
                "CTXPRESS_KAFKA_BOOTSTRAP": self.bootstrap,
                "CTXPRESS_TOPIC_PREFIX": self.prefix,
                "CTXPRESS_APP_ID": self.app_id,
                "CTXPRESS_WEB_PORT": str(self.port),
                "CTXPRESS_DATA_DIR": str(self.tmp / "data"),
                "CTXPRESS_PROCESSING_GUARANTEE": self.guarantee,
                "CTXPRESS_PIPELINE_FACTORY": FACTORY,
                **extra,
            }
        )

    def worker(self, name: str = "worker", **extra: str) -> WorkerProcess:
        return WorkerProcess(self.env(**extra), self.tmp / f"{name}.log")

    def create_topics(self, max_message_bytes: int | None = None) -> None:
        """Every topic of topics/, taking records of ``max_message_bytes`` (default: the
        default CTXPRESS_MAX_MESSAGE_BYTES, as 'ctxpress topics create' does)."""
        asyncio.run(
            create_topics(
                self.bootstrap, load_topics(), self.prefix, max_message_bytes=max_message_bytes
            )
        )

    def set_max_message_bytes(self, topics: Sequence[str], limit: int) -> None:
        """Set ``max.message.bytes`` of ``topics`` (AlterConfigs: their other overrides reset)."""
        from aiokafka.admin import AIOKafkaAdminClient
        from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

        async def go() -> None:
            admin = AIOKafkaAdminClient(bootstrap_servers=self.bootstrap)
            await admin.start()
            try:
                await admin.alter_configs(
                    [
                        ConfigResource(
                            ConfigResourceType.TOPIC, t, {"max.message.bytes": str(limit)}
                        )
                        for t in topics
                    ]
                )
            finally:
                await admin.close()

        asyncio.run(go())
        # AlterConfigs answers before every broker applies the change: wait until it reads
        # back (a produce right after may still meet the old limit)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            limits = asyncio.run(topic_limits(self.bootstrap, list(topics)))
            if all(limits.get(t) == limit for t in topics):
                return
            time.sleep(0.2)
        raise AssertionError(f"max.message.bytes={limit} not applied to {list(topics)}")

    def produce(self, samples: Sequence[Sample]) -> None:
        lines = [s.line for s in samples]
        report = asyncio.run(produce_lines(lines, self.settings()))
        assert not report.failed, report.failed
        assert report.sent == len(samples)

    def read(
        self,
        short: str,
        *,
        idle: float = 3.0,
        until: float | None = None,
        count: int | None = None,
    ) -> list[Any]:
        async def go() -> list[Any]:
            return [
                r
                async for r in read_topic(
                    self.settings(),
                    self.names.by_short(short),
                    idle_timeout=idle,
                    deadline=until,
                    count=count,
                )
            ]

        return asyncio.run(go())

    def scrape(self, metric: str, **labels: str) -> float | None:
        return scrape(self.port, metric, labels or None)

    def wait_for_outputs(self, expected: int, worker: WorkerProcess, timeout: float) -> float:
        """Wait until the worker counted ``expected`` records out; returns the wait."""
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            assert worker.alive(), f"worker exited:\n{worker.log_tail()}"
            done = self.scrape("ctxpress_records_out_total")
            if done is not None and done >= expected:
                return time.monotonic() - started
            time.sleep(0.2)
        raise AssertionError(
            f"worker did not process {expected} records in {timeout} s:\n{worker.log_tail()}"
        )


def engines_of(sample: Sample) -> int:
    mode = orjson.loads(sample.line).get("mode") or "lossless"
    return 1 if mode == GATE_MODE else len(MODES[mode])


@dataclass
class Verdict:
    compressed: dict[str, list[bytes]]
    dead: list[Any]
    stats: dict[str, list[dict[str, Any]]]


def collect(run: Run, samples: Sequence[Sample], timeout: float = 60.0) -> Verdict:
    """Read compressed, dead-letter and stats back until every expected record is there."""
    ok = [s for s in samples if s.ok]
    deadline = time.monotonic() + timeout
    while True:
        compressed_records = run.read("compressed", idle=2.0)
        # distinct keys: at least once, a redelivered record's copies would count twice and
        # end the wait while records are still on their way
        keys = {r.key for r in compressed_records}
        if len(keys) >= len(ok) or time.monotonic() > deadline:
            break
        time.sleep(1.0)
    compressed: dict[str, list[bytes]] = defaultdict(list)
    for r in compressed_records:
        compressed[r.key.decode()].append(r.value)
    dead = run.read("dead-letter", idle=2.0)
    stats: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in run.read("stats", idle=2.0):
        stats[r.key.decode()].append(orjson.loads(r.value))
    return Verdict(dict(compressed), dead, dict(stats))


def check_exactly_once(
    run: Run, samples: Sequence[Sample], verdict: Verdict, *, identical_duplicates: bool = False
) -> int:
    """Every valid record once on compressed with correct stats, every bad one once dead-lettered.

    With ``identical_duplicates`` (the at-least-once contract) a record may appear more than
    once if every copy is byte-identical; returns the number of extra copies on compressed.
    """
    names = run.names
    pipeline = gate_rejecting_pipeline(Settings())
    ok = {s.record_id: s for s in samples if s.ok}
    bad = [s for s in samples if not s.ok]
    gate = {s.record_id for s in samples if s.kind == "gate"}

    # compressed: each valid id exactly once, nothing else
    missing = sorted(set(ok) - set(verdict.compressed))
    extra = sorted(set(verdict.compressed) - set(ok))
    dups = {k: len(v) for k, v in verdict.compressed.items() if len(v) > 1}
    assert not missing, f"{len(missing)} valid records missing on compressed: {missing[:10]}"
    assert not extra, f"unexpected keys on compressed: {extra[:10]}"
    if identical_duplicates:
        differing = [k for k in dups if len(set(verdict.compressed[k])) > 1]
        assert not differing, f"duplicates that differ: {differing[:10]}"
    else:
        assert not dups, f"duplicates on compressed: {list(dups.items())[:10]}"

    # stats equal the in-process pipeline's (timings aside)
    for rid, values in verdict.compressed.items():
        value = values[0]
        record = orjson.loads(value)
        comp = record[RESERVED_KEY]
        want = pipeline.run_raw(orjson.loads(ok[rid].line)).stats
        for key in (
            "mode",
            "tokens_before",
            "tokens_after",
            "chars_before",
            "chars_after",
            "engines_applied",
            "changed",
            "rejections",
        ):
            assert comp[key] == want[key], (rid, key, comp[key], want[key])
        assert [e["status"] for e in comp["engines"]] == [e["status"] for e in want["engines"]]
        rows = verdict.stats.get(rid, [])
        if identical_duplicates:  # a reprocessed record has its stats twice
            rows = rows[: engines_of(ok[rid])]
        assert len(rows) == engines_of(ok[rid]), (rid, rows)
        assert [r["engine"] for r in rows] == [e["engine"] for e in want["engines"]]
        for row, engine in zip(rows, want["engines"], strict=True):
            assert (row["tokens_before"], row["tokens_after"]) == (
                engine["tokens_before"],
                engine["tokens_after"],
            )
    assert set(verdict.stats) <= set(ok)

    # dead letters: one per bad input (original bytes unchanged), one per gate rejection
    by_original: dict[bytes, list[Any]] = defaultdict(list)
    gate_letters: Counter[str] = Counter()
    for r in verdict.dead:
        body = orjson.loads(r.value)
        headers = {k: v.decode() for k, v in r.headers}
        for name in (
            "ctxpress.dlq.original.topic",
            "ctxpress.dlq.original.partition",
            "ctxpress.dlq.original.offset",
            "ctxpress.dlq.original.timestamp",
            "ctxpress.dlq.original.consumer.group",
            "ctxpress.dlq.error.class",
            "ctxpress.dlq.error.message",
            "ctxpress.dlq.error.stage",
            "ctxpress.dlq.time",
        ):
            assert name in headers, (name, headers)
        assert headers["ctxpress.dlq.original.consumer.group"] == run.app_id
        assert headers["ctxpress.dlq.error.stage"] == body["stage"]
        assert headers["ctxpress.dlq.original.topic"] == body["source"]["topic"]
        assert int(headers["ctxpress.dlq.original.offset"]) == body["source"]["offset"]
        assert body["reason"]
        if body["stage"] == "gate":
            assert body["engine"] == GATE_ENGINE == headers["ctxpress.dlq.error.engine"]
            assert r.key.decode() == body["record_id"]
            gate_letters[body["record_id"]] += 1
            continue
        if "original_value" in body:
            original = body["original_value"].encode("utf-8")
        else:
            import base64

            original = base64.b64decode(body["original_value_b64"])
        by_original[original].append((r, body, headers))
    if identical_duplicates:
        assert set(gate_letters) == gate, "a gate dead letter per gate record"
    else:
        assert dict(gate_letters) == dict.fromkeys(gate, 1), "one gate dead letter per gate record"
    for s in bad:
        letters = by_original.get(s.line, [])
        if identical_duplicates and letters:
            assert len({r.value for r, _b, _h in letters}) == 1, (s.kind, s.record_id)
            letters = letters[:1]
        assert len(letters) == 1, (s.kind, s.record_id, len(letters))
        r, body, headers = letters[0]
        assert body["stage"] == s.expect, (s.kind, body)
        assert headers["ctxpress.dlq.original.topic"] == names.by_short(s.topic)
        assert headers["ctxpress.dlq.replayable"] == "true"
        if s.kind == "schema":
            assert body["record_id"] == s.record_id
            assert r.key.decode() == s.record_id
        else:
            assert body["record_id"] is None
    if not identical_duplicates:
        assert len(verdict.dead) == len(bad) + len(gate), "no other dead letters"
    return sum(n - 1 for n in dups.values())
