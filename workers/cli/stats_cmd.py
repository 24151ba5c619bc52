"""``ctxpress stats``: savings per mode, engine and command family from a ``--stats`` file."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable

import orjson

from workers.cli._common import UserError
from workers.cli._inputs import open_input
from workers.pipeline.stats_report import (
    CHART_WIDTH,
    BadStatsLine,
    Report,
    records_from_engine_rows,
    render_chart,
    render_table,
    summarize,
)

__all__ = ["register"]


def _price(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text!r}")
    return value


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "stats",
        help="savings per mode, engine and command family from a 'compress --stats' file",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Read the per-record statistics that 'ctxpress compress --stats FILE' writes (JSONL;\n"
            "gzip or zstd compressed is fine) and print tables of records, tokens before, tokens\n"
            "after, tokens saved and saved %:\n"
            "  mode            every record, by the mode it ran in, plus a total row;\n"
            "  engine          the records in which the engine applied, with the engine's own\n"
            "                  tokens in and out;\n"
            "  command family  the tool-output filter that matched (toolfilter's filters_hit,\n"
            "                  e.g. pytest, make); left out when no record carries one.\n"
            "A line that is not a stats object stops the command with one line naming it, exit 2.\n"
            "--topic reads the worker's stats topic instead (one row per engine run; a record's\n"
            "tokens before are its first engine's, its tokens after its last engine's)."
        ),
        epilog="examples:\n  ctxpress stats -i stats.jsonl --price-per-million 3 --chart\n"
        "  ctxpress stats --topic --chart   # what the workers published on <prefix>stats",
    )
    p.add_argument(
        "-i",
        "--input",
        default="-",
        metavar="FILE",
        help="the stats JSONL file ('ctxpress compress --stats FILE'); '-' or absent: stdin",
    )
    p.add_argument(
        "--topic",
        action="store_true",
        help="read the worker's stats topic (<prefix>stats, every partition from the "
        "beginning to its current end, read_committed) instead of a file",
    )
    p.add_argument(
        "--bootstrap",
        default=None,
        metavar="B",
        help="with --topic: bootstrap servers (default: CTXPRESS_KAFKA_BOOTSTRAP, else the "
        "local broker)",
    )
    p.add_argument(
        "--prefix",
        default=None,
        metavar="P",
        help="with --topic: topic prefix (default: CTXPRESS_TOPIC_PREFIX)",
    )
    p.add_argument(
        "--price-per-million",
        type=_price,
        default=None,
        metavar="USD",
        help="price of one million input tokens in US dollars; adds a 'USD saved' column and "
        "a total of money saved (default: no money column)",
    )
    p.add_argument(
        "--chart",
        action="store_true",
        help=f"also draw a terminal bar chart of tokens saved per engine ({CHART_WIDTH} cells "
        "for the largest saving)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print the same numbers as one JSON object instead of tables (keys: total, modes, "
        "engines, families when known, price_per_million_usd when given)",
    )
    p.set_defaults(func=run)


def _topic_rows(args: argparse.Namespace) -> list[bytes]:
    """Every row of the stats topic, oldest first per partition, as value bytes."""
    import asyncio

    from workers.cli._kafka import settings_of
    from workers.service.kafka.io import read_topic
    from workers.service.topics import TopicNames

    settings = settings_of(args)
    topic = TopicNames.from_settings(settings).stats

    async def read() -> list[bytes]:
        rows = read_topic(settings, topic, until_end=True, idle_timeout=30.0)
        return [r.value async for r in rows if r.value is not None]

    try:
        return asyncio.run(read())
    except LookupError as exc:  # no such topic
        raise UserError(str(exc)) from exc
    except Exception as exc:
        from workers.service.kafka.clients import kafka_error_hint

        hint = kafka_error_hint(exc, "stats")
        if hint is None:
            raise
        raise UserError(hint.removeprefix("ctxpress stats: ")) from exc


def run(args: argparse.Namespace) -> int:
    if args.topic:
        return _report(args, records_from_engine_rows(_topic_rows(args)), "the stats topic")
    stream, _size, _position = open_input(args.input)
    try:
        try:
            report = summarize(stream, args.price_per_million)
        except BadStatsLine as exc:
            name = "stdin" if args.input == "-" else args.input
            raise UserError(f"{name}: {exc}; expected the JSONL of 'compress --stats'") from exc
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()
    return _print(args, report)


def _report(args: argparse.Namespace, lines: Iterable[bytes], name: str) -> int:
    try:
        report = summarize(lines, args.price_per_million)
    except BadStatsLine as exc:
        raise UserError(f"{name}: {exc}") from exc
    return _print(args, report)


def _print(args: argparse.Namespace, report: Report) -> int:
    if args.json:
        sys.stdout.buffer.write(orjson.dumps(report.as_json()) + b"\n")
        sys.stdout.flush()
        return 0
    out = render_table(report)
    if args.chart:
        out += "\n" + render_chart(report)
    sys.stdout.write(out)
    return 0
