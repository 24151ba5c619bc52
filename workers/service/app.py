"""The Faust app of the worker service, built from :class:`~workers.core.settings.Settings`.

``create_app(settings)`` returns a configured ``faust.App``; ``workers.app:app``
is the app for the environment's settings, so the usual Faust command works::

    faust -A workers.app:app worker -l info      # same as: ctxpress worker

Delivery guarantee (``CTXPRESS_PROCESSING_GUARANTEE``):

- ``exactly_once`` (default): outputs and input offsets are committed in one
  Kafka transaction per input partition and batch
  (:class:`~workers.service.publish.TransactionalPublisher`).  Faust's own
  ``processing_guarantee="exactly_once"`` is not used: it picks the
  transactional producer by the *output* partition, and for a topic the app
  does not consume (ours: compressed, stats, dead-letter, offload) it finds
  none and sends outside any transaction; and its periodic commit can include
  outputs of a batch whose offsets it does not commit yet.  So Faust runs
  at-least-once for consumption and our :class:`CommitGuard` keeps it from
  committing input offsets itself.
- ``at_least_once``: one idempotent producer; Faust commits offsets after a
  batch is published.  A crash can republish a batch; duplicates on
  ``compressed`` are byte-identical (timings are zeroed, see
  ``workers.service.process``) under the same key (the record id).

Either way the worker does not rely on Faust delivering every record: each input
partition is processed contiguously from the group's committed offset, and a
range Faust skips (seen after restarts and rebalances) is read from the broker
directly (``workers.service.handler``, ``workers.service.source``).

A fatal error (a publication that failed for good, an agent that crashed) is
recorded in :class:`Health`: ``GET /live`` and ``GET /ready`` answer 503 from
then on (``/ready`` also while the publisher is stopped or the partitions are
not assigned yet), input commits are blocked and the app crashes;
``ctxpress worker`` then stops the process within seconds (``workers.cli.worker_cmd``).

The windowed ``savings`` table's changelog is written by Faust's producer and
is at-least-once in both modes (a crash can count a batch twice).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

import faust
from prometheus_client import CollectorRegistry

from workers.core.catalog import MODES
from workers.core.heap import map_large_blocks
from workers.core.offload import OffloadStore
from workers.core.settings import Settings, SettingsError
from workers.pipeline.factory import build_pipeline
from workers.pipeline.runner import Pipeline
from workers.service.agents import install_agents, savings_rows
from workers.service.faust_compat import cap_fetch_bytes, deliver_inline, filter_commits
from workers.service.handler import BatchHandler
from workers.service.kafka.options import bootstrap_list, client_options, faust_credentials
from workers.service.metrics import Metrics
from workers.service.offload_topic import KafkaOffloadStore
from workers.service.offprocess import PipelineProcess
from workers.service.process import Processor, make_processor
from workers.service.publish import IdempotentPublisher, Publisher, TransactionalPublisher
from workers.service.recovery_watch import install_recovery_watch
from workers.service.source import KafkaSource, RecordSource
from workers.service.topics import TopicNames, load_topics, require_topics
from workers.service.web import check_web_security, install_views

__all__ = ["CommitGuard", "Health", "WorkerParts", "create_app"]

log = logging.getLogger(__name__)

SWEEP_INTERVAL_S = 5.0
SWEEP_IDLE_S = 10.0


@dataclass(slots=True)
class Health:
    """Liveness and readiness of one worker (``GET /live``, ``GET /ready``)."""

    publisher: Publisher
    handler: BatchHandler
    #: the first fatal error; once set the worker only stops
    fatal: BaseException | None = None

    def record(self, exc: BaseException) -> None:
        if self.fatal is None:
            self.fatal = exc

    def live(self) -> tuple[bool, str]:
        if self.fatal is not None:
            return (
                False,
                f"fatal error, the worker is stopping: {type(self.fatal).__name__}: {self.fatal}",
            )
        if not self.publisher.running:
            return False, "the publisher is stopped"
        return True, "ok"

    def ready(self) -> tuple[bool, str]:
        live, reason = self.live()
        if not live:
            return False, reason
        if not self.handler.ready.is_set():
            return False, "waiting for the partition assignment"
        return True, "ok"


@dataclass(slots=True)
class WorkerParts:
    """Everything ``create_app`` built, reachable as ``app.ctxpress`` (tests, CLI)."""

    settings: Settings
    names: TopicNames
    pipeline: Pipeline
    processor: Processor
    publisher: Publisher
    metrics: Metrics
    registry: CollectorRegistry
    offload: OffloadStore
    handler: BatchHandler
    guard: CommitGuard
    agent: Any
    table: Any
    health: Health
    #: the topics were found on the broker (``ctxpress worker`` checks before Faust starts)
    topics_checked: bool = False


class CommitGuard:
    """Filters Faust's offset commits for the input topics.

    With a publisher that commits offsets in its transactions, Faust must never
    commit input offsets (it could move them back, or past an unpublished
    batch).  After a failed publish (``block()``), no input commit goes through
    in either mode.
    """

    def __init__(self, input_topics: Iterable[str], publisher_commits: bool) -> None:
        self.inputs = frozenset(input_topics)
        self.publisher_commits = publisher_commits
        self.blocked = False
        self._installed: Any = None

    def block(self, _exc: BaseException | None = None) -> None:
        self.blocked = True

    def allows(self, topic: str) -> bool:
        if topic not in self.inputs:
            return True
        return not (self.publisher_commits or self.blocked)

    def install(self, consumer: Any) -> None:
        if self._installed is consumer:
            return
        filter_commits(consumer, self.allows)
        deliver_inline(consumer)
        self._installed = consumer


def _input_partitions(settings: Settings) -> tuple[int, int]:
    specs = load_topics()
    parts = {specs["transcripts"].partitions, specs["tool-outputs"].partitions}
    if len(parts) != 1:
        raise SettingsError(
            "topics/transcripts.json and topics/tool-outputs.json must have the same number of "
            "partitions (the savings table is co-partitioned with both)"
        )
    return parts.pop(), specs["transcripts"].replication_factor


def _publisher(settings: Settings, metrics: Metrics) -> Publisher:
    options = client_options(settings)
    bootstrap = ",".join(bootstrap_list(settings))
    if settings.processing_guarantee == "exactly_once":
        return TransactionalPublisher(
            bootstrap,
            settings.app_id,
            client_options=options,
            linger_ms=settings.producer_linger_ms,
            max_batch_size=settings.producer_max_batch_size,
            max_request_size=settings.max_message_bytes,
            transaction_timeout_ms=settings.transaction_timeout_ms,
            on_retry=metrics.publish_retries.inc,
        )
    return IdempotentPublisher(
        bootstrap,
        client_options=options,
        linger_ms=settings.producer_linger_ms,
        max_batch_size=settings.producer_max_batch_size,
        max_request_size=settings.max_message_bytes,
    )


def create_app(
    settings: Settings | None = None,
    *,
    pipeline: Pipeline | None = None,
    publisher: Publisher | None = None,
    offload: OffloadStore | None = None,
    registry: CollectorRegistry | None = None,
    source: RecordSource | Literal["kafka"] | None = "kafka",
) -> faust.App:
    """A configured Faust app.

    Every collaborator can be passed in (tests pass a ListPublisher, a MemoryStore and
    ``source=None``); by default each is the Kafka one.  ``source``: where the handler
    re-reads records it missed (``"kafka"``: the input topics; None: nowhere).  With the
    Kafka source the app refuses to start when one of its topics is missing
    (:func:`~workers.service.topics.require_topics`, before Faust subscribes).
    """
    check_topics = source == "kafka"
    settings = settings or Settings.from_env()
    check_web_security(settings)
    if settings.processing_guarantee == "exactly_once" and settings.concurrency != 1:
        raise SettingsError(
            "CTXPRESS_CONCURRENCY must be 1 with exactly_once: two agent instances would commit "
            "one partition's offsets out of order; run more worker processes to scale instead"
        )
    names = TopicNames.from_settings(settings)
    partitions, replication = _input_partitions(settings)
    hosts = bootstrap_list(settings)
    session = settings.session_timeout
    # (here, so that `faust -A workers.app:app worker` gets them too, not only `ctxpress worker`)
    map_large_blocks(settings.malloc_mmap_threshold)
    cap_fetch_bytes(settings.fetch_max_bytes)
    app: Any = faust.App(
        settings.app_id,
        broker=[f"kafka://{h}" for h in hosts],
        broker_credentials=faust_credentials(settings),
        # Consumption only; outputs go through workers.service.publish (see the docstring).
        processing_guarantee="at_least_once",
        producer_linger=settings.producer_linger_ms / 1000.0,
        producer_max_batch_size=settings.producer_max_batch_size,
        producer_acks=-1,
        broker_session_timeout=session,
        broker_rebalance_timeout=settings.rebalance_timeout,
        broker_heartbeat_interval=max(0.3, min(3.0, session / 5.0)),
        broker_commit_livelock_soft_timeout=max(300.0, 10 * session),
        # at_least_once: what a crash makes us redo is bounded by this interval
        broker_commit_interval=1.0,
        consumer_auto_offset_reset="earliest",
        # one size end to end (CTXPRESS_MAX_MESSAGE_BYTES): a record up to it is fetched whole
        consumer_max_fetch_size=settings.max_message_bytes,
        producer_max_request_size=settings.max_message_bytes,
        # new input partitions are seen (and the group rebalanced onto them) within this
        consumer_metadata_max_age_ms=settings.metadata_max_age_ms,
        store="memory://",
        datadir=settings.data_dir,
        topic_partitions=partitions,
        topic_replication_factor=replication,
        topic_disable_leader=True,
        key_serializer="raw",
        value_serializer="raw",
        web_bind=settings.web_host,
        web_host=settings.web_host,
        web_port=settings.web_port,
        web_in_thread=False,
        autodiscover=False,
        # every topic comes from topics/ via 'ctxpress topics create' (the broker does not
        # create topics); a missing one stops the start with that command (require_topics)
        topic_allow_declare=False,
    )
    registry = registry if registry is not None else CollectorRegistry()
    metrics = Metrics(registry)
    metrics.info.labels(settings.processing_guarantee, settings.mode).set(1)
    # the child process rebuilds the pipeline from the settings: an injected one stays here
    child = PipelineProcess(settings) if settings.pipeline_process and pipeline is None else None
    pipeline = pipeline or build_pipeline(settings)
    metrics.prime({mode: [e.name for e in pipeline.engines_for(mode)] for mode in MODES})
    processor = make_processor(settings, pipeline)
    publisher = publisher or _publisher(settings, metrics)
    if source == "kafka":
        source = KafkaSource(
            ",".join(hosts),
            client_options=client_options(settings),
            max_fetch_bytes=settings.max_message_bytes,
        )
    store: OffloadStore
    if offload is not None:
        store = offload
    else:
        store = KafkaOffloadStore(
            ",".join(hosts), names.offload, client_options=client_options(settings)
        )

    # committed stash entries: the Kafka store only indexes them (they are on the topic)
    remember = store.remember if isinstance(store, KafkaOffloadStore) else store.put

    guard = CommitGuard(names.inputs, publisher.commits_offsets)

    crashing: set[asyncio.Future[Any]] = set()
    health: Health

    def on_fatal(exc: BaseException) -> None:
        # Nothing after the failed batch may commit; probes report the worker down.
        guard.block(exc)
        health.record(exc)

    def on_publish_error(exc: BaseException) -> None:
        on_fatal(exc)
        log.critical("publishing a batch failed; stopping the worker: %r", exc)
        crashing.add(asyncio.ensure_future(app.crash(exc)))

    # exactly_once: process the next batch while the previous one's transactions commit.
    handler = BatchHandler(
        processor,
        publisher,
        metrics,
        on_offloaded=remember,
        pipelined=publisher.commits_offsets,
        on_error=on_publish_error,
        source=source,
        child=child,
    )
    health = Health(publisher, handler)
    agent, table = install_agents(
        app,
        handler,
        inputs=names.inputs,
        changelog_topic=names.savings_changelog,
        partitions=partitions,
        batch_size=settings.batch_size,
        batch_timeout=settings.batch_timeout,
        concurrency=settings.concurrency,
        on_fatal=on_fatal,
    )
    _install_lifecycle(
        app, handler, publisher, store, guard, names, source, settings.app_id, on_publish_error
    )
    _install_web(app, registry, store, settings, table, health)
    install_recovery_watch(
        app,
        settings.table_recovery_stall_s,
        lambda how: metrics.table_recovery_finished.labels(how).inc(),
    )
    if check_topics:
        _install_topic_check(app, settings, names)
    app.ctxpress = WorkerParts(
        settings=settings,
        names=names,
        pipeline=pipeline,
        processor=processor,
        publisher=publisher,
        metrics=metrics,
        registry=registry,
        offload=store,
        handler=handler,
        guard=guard,
        agent=agent,
        table=table,
        health=health,
    )
    built: faust.App = app
    return built


def _install_lifecycle(
    app: Any,
    handler: BatchHandler,
    publisher: Publisher,
    store: OffloadStore,
    guard: CommitGuard,
    names: TopicNames,
    source: RecordSource | None,
    group_id: str,
    on_fatal: Callable[[BaseException], None],
) -> None:
    inputs = set(names.inputs)

    assigning: list[asyncio.Task[None]] = []

    async def _take_over(tps: list[tuple[str, int]]) -> None:
        # Producers first: their start fences a previous owner and completes or aborts
        # its open transactions, so the committed offsets read next are settled.
        await publisher.assigned(tps)
        if source is not None:
            handler.assigned(await source.start_offsets(group_id, tps))

    def _done(task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            on_fatal(task.exception())  # type: ignore[arg-type]

    async def _assigned(_sender: Any, assigned: Any, **_kwargs: Any) -> None:
        guard.install(app.consumer)
        tps = sorted((tp.topic, tp.partition) for tp in assigned if tp.topic in inputs)
        log.info("ctxpress: %d input partitions assigned", len(tps))
        # Off the rebalance callback (batches wait for handler.ready): a slow callback
        # makes Faust finish recovery first and lose its rebalance sensor state.
        handler.revoked()
        task = asyncio.ensure_future(_take_over(tps))
        task.add_done_callback(_done)
        assigning.append(task)

    async def _revoked(_sender: Any, revoked: Any, **_kwargs: Any) -> None:
        handler.revoked()
        while assigning:
            task = assigning.pop()
            if not task.done():
                await asyncio.wait([task])
        await handler.flush()  # the batch in flight commits before its partitions go
        tps = sorted((tp.topic, tp.partition) for tp in revoked if tp.topic in inputs)
        await publisher.revoked(tps)

    async def _start_publisher() -> None:
        await publisher.start()

    async def _follow_offload() -> None:
        if isinstance(store, KafkaOffloadStore):
            await store.run()

    async def _stop(_sender: Any, **_kwargs: Any) -> None:
        if isinstance(store, KafkaOffloadStore):
            store.stop()
        try:
            await handler.flush()
        except Exception:  # reported by on_error already; its offsets did not move
            log.exception("the last batch was not published; it will be processed again")
        await publisher.stop()
        if source is not None:
            await source.stop()

    app.on_partitions_assigned.connect(_assigned)
    app.on_partitions_revoked.connect(_revoked)
    app.on_before_shutdown.connect(_stop)
    app.task(_start_publisher)
    app.task(_follow_offload)

    async def _sweep() -> None:
        # Records Faust skipped at the end of a partition have no later message that
        # would reveal the gap; read them once the partition has been idle a while.
        await handler.sweep(idle_for=SWEEP_IDLE_S)

    if source is not None:
        app.timer(SWEEP_INTERVAL_S)(_sweep)


def _install_topic_check(app: Any, settings: Settings, names: TopicNames) -> None:
    """``faust -A workers.app:app worker``: the topics must exist before Faust starts."""
    first_start = app.on_first_start

    async def on_first_start() -> None:
        if not app.ctxpress.topics_checked:
            await require_topics(settings, names)  # MissingTopicsError names the command
            app.ctxpress.topics_checked = True
        await first_start()

    app.on_first_start = on_first_start


def _install_web(
    app: Any,
    registry: CollectorRegistry,
    store: OffloadStore,
    settings: Settings,
    table: Any,
    health: Health,
) -> None:
    from faust import web

    from workers.service.faust_sensors import install_prometheus_sensors

    # Faust's sensors in the same registry, prefixed faust_ (ours are ctxpress_).
    install_prometheus_sensors(app, pattern="/metrics", registry=registry, name_prefix="faust")
    install_views(app, store, settings, lambda: savings_rows(table))

    def probe(check: Callable[[], tuple[bool, str]]) -> Any:
        class ProbeView(web.View):  # type: ignore[misc]
            async def get(self, request: web.Request) -> web.Response:
                ok, reason = check()
                body = {"status": "ok" if ok else "unavailable", "reason": reason}
                return self.json(body, status=200 if ok else 503)

        return ProbeView

    # liveness: the agent and the publisher work; readiness: and the partitions are assigned
    app.page("/live")(probe(health.live))
    app.page("/ready")(probe(health.ready))


def __getattr__(name: str) -> Any:
    # ``faust -A workers.app:app``: build the app from the environment on first use only,
    # so importing this module (tests, the CLI) has no side effects.
    if name == "app":
        app = create_app()
        globals()["app"] = app
        return app
    raise AttributeError(name)
