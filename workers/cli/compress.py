"""``ctxpress compress``: JSONL in, compressed JSONL out, dead letters aside, a summary at the end."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import orjson

from workers.cli._common import (
    Progress,
    UserError,
    offload_dir,
    open_out,
    read_lines,
    refuse_overwrite,
)
from workers.cli._inputs import INPUT_FORMATS, Lines, open_input, open_output, ratio, verdict
from workers.core.catalog import MODES
from workers.core.offload import DirectoryStore, OffloadStore
from workers.core.settings import Settings, SettingsError
from workers.engines import UnknownEngine
from workers.pipeline.autotrigger import AUTO
from workers.pipeline.batch import Summary, redact_letter
from workers.pipeline.combos import RoutedPipeline
from workers.pipeline.parallel import compress_parallel, default_jobs
from workers.pipeline.runner import Pipeline

__all__ = ["register"]

EPILOG = """\
Every input line ends as exactly one output record or one dead-letter record.
Gate rejections (a message an engine was not allowed to change) are extra
dead-letter entries with stage "gate"; their record still goes to the output.

examples:
  ctxpress compress --mode lossless -i chats.jsonl -o small.jsonl
  ctxpress compress --mode standard -i chats.jsonl -o small.jsonl --offload stash/
  cat chats.jsonl | ctxpress compress --mode lossless > small.jsonl
  ctxpress compress --combos combos.toml --combo tool-outputs-light -i tools.jsonl -o small.jsonl
  ctxpress compress --mode auto -i chats.jsonl -o small.jsonl --stats stats.jsonl

combos (named engine chains, CTXPRESS_COMBOS_FILE or --combos FILE, TOML):
  [combos.NAME] engines = [...] in the catalog's order, options.ENGINE = {...} (constructor
  arguments); [select] tenant_field = "metadata.tenant", tenants = {acme = "NAME"}, topics =
  {tool-outputs = "NAME"}. A record runs the chain of its "combo" field, else of its "mode"
  field, else its tenant's, else its topic's (the one 'ctxpress produce' would send it to:
  tool-outputs for tool outputs, else transcripts), else --combo, else --mode. Unknown combos,
  engines and options stop the run at start-up, naming the valid ones. The record's compression
  object names the chain ("combo", "mode": the built-in mode that holds its engines) and the
  decision ("route": source = record field, tenant, topic, default).

mode auto: the record's token count picks the mode: off under CTXPRESS_AUTO_OFF_BELOW (2000),
  lossless under CTXPRESS_AUTO_LOSSLESS_BELOW (16000), aggressive from CTXPRESS_AUTO_AGGRESSIVE_SHARE
  (0.75) of CTXPRESS_CONTEXT_WINDOW (128000), else standard; "route" holds the mode, source
  "threshold", who asked for auto (requested_by), the tokens and the rule.
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "compress",
        help="compress a JSONL file of chat records or tool outputs",
        description="Compress JSONL records (OpenAI chats, Anthropic messages, tool outputs).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--mode",
        choices=[*MODES, AUTO],
        default=None,
        help="engine chain for records without a 'mode' field (default: CTXPRESS_MODE or "
        "lossless); auto: the record's token count picks it",
    )
    p.add_argument(
        "--combos",
        default=None,
        metavar="FILE",
        help="TOML file of named engine chains (default: CTXPRESS_COMBOS_FILE; see below)",
    )
    p.add_argument(
        "--combo",
        default=None,
        metavar="NAME",
        help="combo for records that no field, tenant or topic rule gives a combo or a mode "
        "(default: CTXPRESS_COMBO)",
    )
    p.add_argument(
        "-i",
        "--input",
        default="-",
        help="input JSONL file, or - for stdin (default: -); gzip and zstd input is "
        "decompressed (recognised by its first bytes, on stdin too)",
    )
    p.add_argument(
        "--input-format",
        choices=INPUT_FORMATS,
        default="jsonl",
        help="jsonl: one record per line (default); json-array: one JSON array of records, "
        "read as a stream (each element becomes one output line, compact)",
    )
    p.add_argument(
        "-o",
        "--output",
        default="-",
        help="output JSONL file, or - for stdout (default: -); a name ending in .gz or .zst "
        "is written compressed (so are --stats and --dead-letter files)",
    )
    p.add_argument(
        "--stats", default=None, help="write per-record statistics as JSONL to this file"
    )
    p.add_argument(
        "--dead-letter",
        default=None,
        help="write dead letters (bad lines, gate rejections) as JSONL to this file (default: stderr summary only)",
    )
    p.add_argument(
        "--offload",
        default=None,
        metavar="DIR",
        help="directory that stores stashed originals of lossy engines (needed later by expand)",
    )
    p.add_argument(
        "--budget-tokens",
        type=int,
        default=None,
        help="token budget per record for aggressive mode (records may set budget_tokens)",
    )
    p.add_argument(
        "--allow-lossy-structure",
        action="store_true",
        default=None,
        help="let the structured engine use lossy strategies (drop_nulls, round_numbers, ...)",
    )
    p.add_argument(
        "--encoding", default=None, help="tokenizer: cl100k_base (default) or o200k_base"
    )
    p.add_argument(
        "--progress",
        choices=("auto", "always", "never"),
        default="auto",
        help="progress bar on stderr (auto: only when stderr is a terminal)",
    )
    p.add_argument(
        "--max-dead-letter-ratio",
        type=ratio,
        default=None,
        metavar="R",
        help="exit 1 when more than this share of the input lines (0 to 1) became dead letters "
        "(a run in which no record came out exits 1 anyway)",
    )
    p.add_argument(
        "-j",
        "--jobs",
        type=_jobs,
        default=None,
        metavar="N",
        help="processes that compress (default: the cores this process may use); output stays "
        "in input order and memory bounded; an input of one chunk (128 lines or 256 KiB) runs in "
        "this process",
    )
    p.add_argument(
        "--timings",
        action="store_true",
        help="keep duration_ms and each engine's ms in the compressed records (default: 0, so "
        "the same input and settings give the same output bytes; --stats has the real timings)",
    )
    p.add_argument("--quiet", action="store_true", help="do not print the summary table")
    p.add_argument(
        "--explain",
        default=None,
        metavar="FILE",
        help="write one JSON line per tool output to FILE: the family it was recognised as "
        "(pytest, git-diff, log, file read, json, unknown...) and by what (command, tool, "
        "output signature, content, fallback), tokens before/after, and its non-blank lines "
        "counted as kept (visible), collapsed (stashed, a line of the same shape still "
        "visible), stashed, rewritten (re-encoded), plus markers and critical facts kept; the "
        "summary then adds the totals per family. The other outputs are unchanged",
    )
    p.set_defaults(func=run)


def _build(args: argparse.Namespace) -> tuple[Pipeline, OffloadStore | None]:
    try:
        settings = Settings.from_env(
            mode=args.mode,
            encoding=args.encoding,
            allow_lossy_structure=args.allow_lossy_structure,
            offload_dir=args.offload,
            combos_file=args.combos,
            combo=args.combo,
        )
        pipeline = RoutedPipeline(settings)
    except (SettingsError, UnknownEngine, ValueError) as exc:  # ValueError: bad filter files
        raise UserError(str(exc)) from exc
    store = None
    if settings.offload_dir:
        try:
            store = DirectoryStore(offload_dir(settings.offload_dir, create=True))
        except OSError as exc:
            raise UserError(f"--offload {settings.offload_dir!r}: {exc.strerror or exc}") from exc
    return pipeline, store


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except UserError as exc:
        print(f"ctxpress compress: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    pipeline, store = _build(args)
    lossy_combos = isinstance(pipeline, RoutedPipeline) and any(
        c.mode not in ("off", "lossless") for c in pipeline.combos.combos.values()
    )
    if store is None and (
        pipeline.settings.mode in ("standard", "aggressive", AUTO) or lossy_combos
    ):
        print(
            "ctxpress compress: note: no --offload DIR given; stashed originals are not kept, "
            "so 'expand' cannot restore what lossy engines dropped",
            file=sys.stderr,
        )
    source, size, position = open_input(args.input, args.input_format)
    outputs = (("-o", args.output), ("--stats", args.stats), ("--dead-letter", args.dead_letter))
    refuse_overwrite(source, outputs)
    enabled = {"always": True, "never": False}.get(args.progress)
    progress = Progress(size, enabled=enabled, position=position)
    summary = Summary()
    budget = args.budget_tokens
    with (
        open_output(args.output) as out,
        open_output(args.stats) as stats_out,
        open_output(args.dead_letter) as dlq,
        open_out(args.explain) as explain_out,
    ):
        head = Lines(read_lines(source, pipeline.settings.max_record_bytes))
        lines = head if budget is None else _with_budget(head, budget)
        explainer = None
        if explain_out is not None:
            from workers.cli.explain import Explainer

            explainer = Explainer(explain_out, pipeline)
            lines = explainer.watch(lines)
        jobs = args.jobs or default_jobs()
        results = compress_parallel(
            lines, pipeline, store, timings=args.timings, jobs=jobs, keep=explainer is not None
        )
        for result in results:
            summary.add(result)
            progress.update(result.size)
            if result.outcome is None:
                assert result.dead_letter is not None
                if dlq is not None:
                    dlq.write(orjson.dumps(result.dead_letter) + b"\n")
                continue
            outcome = result.outcome
            assert out is not None
            out.write(result.encoded() + b"\n")
            if explainer is not None:
                explainer.add(result)
            if stats_out is not None:
                stats_out.write(orjson.dumps({"id": outcome.record_id, **outcome.stats}) + b"\n")
            if dlq is not None:
                for rejection in outcome.rejections:
                    letter = redact_letter(rejection.as_dict(), done=("before", "after"))
                    dlq.write(orjson.dumps(letter) + b"\n")
    progress.close()
    if not args.quiet:
        print(f"ctxpress compress: {_chain(pipeline.settings)}" + summary.render(), file=sys.stderr)
        if explainer is not None:
            print(explainer.render(), file=sys.stderr)
        if summary.dead_letters and args.dead_letter is None:
            print(
                f"{summary.dead_letters} line(s) were dead-lettered; pass --dead-letter FILE to see why",
                file=sys.stderr,
            )
    done = verdict(
        summary.records,
        summary.dead_letters,
        head.head,
        args.max_dead_letter_ratio,
        summary.first_dead_letter,
        args.dead_letter if args.dead_letter not in (None, "-") else None,
    )
    if done.message:
        print(f"ctxpress compress: error: {done.message}", file=sys.stderr)
    return done.status


def _chain(settings: Settings) -> str:
    """What records that choose nothing run: the default combo, else the mode."""
    return f"combo {settings.combo}" if settings.combo else f"mode {settings.mode}"


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of processes") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"--jobs must be at least 1, got {value}")
    return value


def _with_budget(source: Any, budget: int) -> Any:
    """Lines with ``budget_tokens`` set where the record has none."""
    for raw in source:
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            yield raw
            continue
        if isinstance(value, dict) and "budget_tokens" not in value:
            value["budget_tokens"] = budget
            yield orjson.dumps(value)
        else:
            yield raw
