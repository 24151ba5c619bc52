"""The Faust agent and table: thin glue around :class:`~workers.service.handler.BatchHandler`.

One agent reads both input topics in batches (``take_batches``; batch size and
timeout from the settings), turns Faust events into
:class:`~workers.service.process.InMessage`, and awaits the handler, which processes
and publishes the batch (pipelined: starts its publication, which the next
batch awaits).  Then it adds the batch's savings to the windowed
``savings`` table (tumbling one-minute windows per mode, engine and input
partition; its changelog is the topic ``<prefix>savings-changelog`` from topics/, created by
``ctxpress topics create``: the worker declares no topic itself).

If publishing fails for good, the agent blocks input commits and crashes the
app: the batch was not published, its offsets never move, and the next worker
to own the partitions processes it again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

import faust
from faust.exceptions import PartitionsMismatch

from workers.service.faust_compat import current_event, input_topics, take_batches
from workers.service.handler import BatchHandler, Savings, savings_of
from workers.service.publish import PublishError
from workers.service.records import InMessage, Processed

__all__ = ["SAVINGS_WINDOW_S", "install_agents", "to_message"]

log = logging.getLogger(__name__)

SAVINGS_WINDOW_S = 60.0
SAVINGS_EXPIRES = timedelta(hours=2)


def _zero() -> list[int]:
    return [0, 0, 0]


def to_message(event: Any) -> InMessage:
    """A Faust event (raw key and value) as an :class:`InMessage`."""
    message = event.message
    timestamp = message.timestamp
    headers = message.headers or ()
    if isinstance(headers, dict):
        headers = headers.items()
    return InMessage(
        topic=message.topic,
        partition=message.partition,
        offset=message.offset,
        timestamp_ms=int(timestamp * 1000) if timestamp else None,
        key=message.key,
        value=message.value,
        headers=tuple((k, v if v is not None else b"") for k, v in headers),
    )


def add_savings(
    table: Any,
    events: Sequence[Any],
    savings: Savings,
    now: float,
    changelog_has: Callable[[int], bool] | None = None,
) -> set[int]:
    """Add one batch's aggregates to the windowed table (key: mode/engine/partition).

    ``changelog_has(partition)``: whether the table's changelog has that partition (None:
    assume it does).  A row of an input partition the changelog lacks is skipped, and its
    partition returned: Faust would send that changelog write later, from its producer
    buffer, where the consumer's ``key_partition`` asserts that the partition exists and
    the app crashes (an input topic that got more partitions than the changelog; Faust
    checks the counts once per topic, before the topic grew).
    """
    skipped: set[int] = set()
    if not savings.rows:
        return skipped
    by_partition = {e.message.partition: e for e in events}
    window = table.relative_to(now)
    for (partition, mode, engine), (records, before, after) in savings.rows.items():
        event = by_partition.get(partition)
        if event is None:
            continue
        if changelog_has is not None and not changelog_has(partition):
            skipped.add(partition)
            continue
        key = f"{mode}/{engine}/{partition}"
        with current_event(event):
            current = window[key].value() or [0, 0, 0]
            window[key] = [current[0] + records, current[1] + before, current[2] + after]
    return skipped


def changelog_has(app: Any, table: Any) -> Callable[[int], bool]:
    """Whether a changelog write for a partition would pass the check Faust makes when it
    sends it (the consumer's ``key_partition``: its cluster metadata must list the
    partition; an unknown topic passes)."""
    name = table.table.changelog_topic_name

    def has(partition: int) -> bool:
        try:
            app.consumer.key_partition(name, None, partition)
        except AssertionError:
            return False
        except Exception:  # no consumer yet: Faust sends nothing either
            return True
        return True

    return has


def savings_rows(table: Any) -> list[dict[str, Any]]:
    """Every live window of the table, summed over partitions, newest first."""
    rows: dict[tuple[float, str, str], list[int]] = {}
    for stored_key, value in list(table.table.data.items()):
        # (key, (start, end)); lists after a recovery from the JSON changelog
        key, window_range = stored_key
        start = float(window_range[0])
        mode, engine, _partition = str(key).split("/", 2)
        row = rows.setdefault((start, mode, engine), [0, 0, 0])
        for i in range(3):
            row[i] += int(value[i])
    out = []
    for (start, mode, engine), (records, before, after) in sorted(rows.items(), reverse=True):
        out.append(
            {
                "window_start": start,
                "window_seconds": SAVINGS_WINDOW_S,
                "mode": mode,
                "engine": engine,
                "records": records,
                "tokens_before": before,
                "tokens_after": after,
                "saved_pct": round(100.0 * (before - after) / before, 2) if before else 0.0,
            }
        )
    return out


def _log_mismatch(reason: str, changelog_topic: str | None) -> None:
    log.warning(
        "the savings table is off until its changelog has the input topics' "
        "partition count (records are processed as before): %s. Raise the "
        "partitions of both input topics and of %s to the same count, then "
        "restart the workers one by one (README: Adding partitions)",
        reason,
        changelog_topic or "the changelog topic",
    )


def install_agents(
    app: Any,
    handler: BatchHandler,
    *,
    inputs: Sequence[str],
    partitions: int,
    batch_size: int,
    batch_timeout: float,
    concurrency: int = 1,
    on_fatal: Callable[[BaseException], None] | None = None,
    changelog_topic: str | None = None,
) -> tuple[Any, Any]:
    """Register the ``compress`` agent and the ``savings`` table; returns both.

    ``changelog_topic``: the table's changelog (default: Faust's ``<app id>-savings-changelog``).
    """
    topic = input_topics(
        app,
        inputs,
        key_serializer="raw",
        value_serializer="raw",
        allow_empty=True,
    )
    schema: Any = faust.Schema(key_serializer="json", value_serializer="json")
    changelog = None
    if changelog_topic is not None:
        changelog = app.topic(
            changelog_topic,
            schema=schema,
            partitions=partitions,
            retention=SAVINGS_EXPIRES,
            compacting=True,
            deleting=True,
            acks=False,
            internal=True,
            maxsize=131_072,  # as Faust's own changelog topics: a large buffer
            allow_empty=True,
        )
    # Built here and registered with the app's tables only once its changelog is final:
    # tumbling() forgets a changelog given before it, and the table manager keys its
    # changelogs by the name seen at registration (``app.Table`` registers at once).  A
    # changelog swapped in later was read back by Faust's recovery as an unknown topic:
    # two warnings per savings update, and the table never restored after a restart.
    base = app.conf.Table(
        app,
        name="savings",
        default=_zero,
        beacon=app.tables.beacon,
        partitions=partitions,
        schema=schema,
        help="savings per mode/engine/partition, one-minute tumbling windows",
    )
    table = base.tumbling(SAVINGS_WINDOW_S, expires=SAVINGS_EXPIRES)
    if changelog is not None:
        base.changelog_topic = changelog
    app.tables.add(base)

    async def compress(stream: Any) -> None:
        mismatch_logged = False
        async for events in take_batches(stream, batch_size, batch_timeout):
            messages = [to_message(e) for e in events]
            try:
                results: list[Processed] = await handler.handle(messages)
            except Exception as exc:
                # The batch is not published: its offsets must not move, and this worker
                # must not go on with later batches (they would commit past it).
                if isinstance(exc, PublishError):
                    log.critical("stopping the worker: %s", exc)
                else:
                    log.critical("stopping the worker: publishing a batch raised", exc_info=True)
                if on_fatal is not None:
                    on_fatal(exc)
                await app.crash(exc)
                raise
            try:
                skipped = add_savings(
                    table,
                    events,
                    savings_of(results),
                    time.time(),
                    changelog_has(app, table),
                )
                if skipped and not mismatch_logged:
                    mismatch_logged = True
                    _log_mismatch(
                        f"input partitions {sorted(skipped)} have no changelog partition",
                        changelog_topic,
                    )
            except PartitionsMismatch as exc:  # an input topic got more partitions
                if not mismatch_logged:
                    mismatch_logged = True
                    _log_mismatch(str(exc), changelog_topic)
            except Exception:  # aggregates are best effort; they never hold up a batch
                log.exception("updating the savings table failed")

    agent = app.agent(topic, name="ctxpress.compress", concurrency=concurrency)(compress)
    return agent, table
