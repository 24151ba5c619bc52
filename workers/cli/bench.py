"""``ctxpress bench``: throughput, latency and memory of the pipeline per mode.

Prints, per mode: MB/s and records/s of input (the median of ``--repeat``
passes, each with empty caches), p50/p99 per-record latency (``<100K``: the p99 of
records under 100 KB),
peak memory (max RSS), tokens saved, and the ratio to one tokenizer pass over
the same text (the floor for exact token accounting).  Then, unless
``--no-families``, the savings per output family (the filter each tool output
was recognised as: pytest, git-diff, cargo, log, file read, json, unknown
...): outputs, tokens before, and per mode tokens after, saved % and critical
facts kept.  Targets live here, not in timed tests.  The measuring is
:mod:`workers.bench.inprocess`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from workers.cli._common import UserError

__all__ = ["register"]

# None: the generated corpus (``ctxpress corpus build``), built on demand
DEFAULT_CORPUS: str | None = None


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "bench",
        help="measure pipeline throughput, latency and memory per mode",
        description="Run the pipeline over a JSONL file once per mode (in-process, one core) and "
        "print MB/s, records/s, p50/p99 latency per record, peak memory and savings.",
    )
    p.add_argument(
        "-i",
        "--input",
        default=DEFAULT_CORPUS,
        help="JSONL file to run (default: the generated corpus, "
        ".cache/corpus/ctxpress-corpus-v<VERSION>.jsonl, built first when missing; "
        "see 'ctxpress corpus build')",
    )
    p.add_argument(
        "--modes",
        default="lossless,standard,aggressive",
        help="comma-separated modes to run (default: lossless,standard,aggressive)",
    )
    p.add_argument(
        "--repeat",
        type=int,
        default=5,
        help="cold passes over the file per mode; MB/s and records/s are the median pass "
        "(default: 5)",
    )
    p.add_argument(
        "--json", action="store_true", help="print one JSON object per mode instead of a table"
    )
    p.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help="also run each mode on one core and on N processes (compress --jobs N) over the "
        "same input repeated to --jobs-mb MB, and print both MB/s, their ratio and the load "
        "average (default: off)",
    )
    p.add_argument(
        "--jobs-mb",
        type=float,
        default=32.0,
        metavar="MB",
        help="input size of the --jobs comparison: the file repeated up to this size (default: 32)",
    )
    p.add_argument(
        "--families",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="after the mode table, print the savings per output family (the filter a tool "
        "output was recognised as; '(messages)' is every other text): outputs, tokens before, "
        "and per mode tokens after, saved %% and critical facts kept (default: on; in --json "
        "output the 'families' field)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import orjson

    from workers.bench.inprocess import bench_mode, tokenizer_floor_seconds, unit_texts
    from workers.cli.corpus_cmd import ensure_corpus
    from workers.core.catalog import MODES
    from workers.core.settings import Settings
    from workers.core.tokens import TokenCounter
    from workers.engines import UnknownEngine

    try:
        path = Path(args.input) if args.input is not None else ensure_corpus()
        if not path.is_file():
            raise UserError(f"bench input {str(path)!r} not found; pass -i FILE.jsonl")
        lines = path.read_bytes().splitlines()
        if args.repeat < 1:
            raise UserError("--repeat must be at least 1")
        modes = [m.strip() for m in args.modes.split(",") if m.strip()]
        for mode in modes:
            if mode not in MODES:
                raise UserError(f"unknown mode {mode!r}; valid modes: {', '.join(MODES)}")
        env_settings = Settings.from_env()
        counter = TokenCounter(env_settings.encoding, backend=env_settings.token_backend)
        print(
            f"bench: {path} ({sum(map(len, lines)) / 1e6:.2f} MB, {len(lines)} lines), one core, "
            f"median of {args.repeat} cold passes, tokens: {counter.encoding_name} counted by {counter.backend}",
            file=sys.stderr,
        )
        header = f"{'mode':<11}{'MB/s':>8}{'CPU MB/s':>10}{'rec/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'<100K':>8}{'peak MB':>9}{'saved %':>9}{'facts kept':>16}{'x tokenizer':>13}"
        if not args.json:
            print(header)
        results = []
        for mode in modes:
            try:
                result = bench_mode(lines, mode, args.repeat)
            except UnknownEngine as exc:
                print(f"{mode:<11} not available: {exc}")
                continue
            results.append(result)
            if args.json:
                shown = {k: v for k, v in result.items() if args.families or k != "families"}
                print(orjson.dumps(shown).decode())
            else:
                print(
                    f"{mode:<11}{result['mb_per_s']:>8.2f}{result['cpu_mb_per_s']:>10.2f}"
                    f"{result['records_per_s']:>9.1f}"
                    f"{result['p50_ms']:>9.2f}{result['p99_ms']:>9.2f}{result['p99_small_ms']:>8.2f}"
                    f"{result['peak_rss_mb']:>9.1f}"
                    f"{result['saved_pct']:>9.2f}"
                    f"{str(result['facts_visible']) + '/' + str(result['facts']):>16}"
                    f"{result['tokenizer_ratio']:>13.2f}"
                )
        if args.families and not args.json and results:
            print()
            print("\n".join(family_table(results)))
        if args.jobs is not None:
            _multicore(lines, modes, args)
        texts = unit_texts(lines)
        text_mb = sum(len(t.encode("utf-8", "surrogatepass")) for t in texts) / 1e6
        speeds = [
            f"{backend} {text_mb / max(tokenizer_floor_seconds(texts, c), 1e-9):.1f} MB/s"
            for backend in ("bpe-openai", "tiktoken")
            for c in [TokenCounter(env_settings.encoding, backend=backend)]
        ]
        print(
            f"one tokenizer pass over the {text_mb:.2f} MB of texts: {', '.join(speeds)}",
            file=sys.stderr,
        )
        return 0
    except UserError as exc:
        print(f"ctxpress bench: {exc}", file=sys.stderr)
        return 2


def _multicore(lines: list[bytes], modes: list[str], args: argparse.Namespace) -> None:
    """One core and ``--jobs`` processes over the same lines, in this run."""
    import orjson

    from workers.bench.multicore import bench_jobs, scaled

    if args.jobs < 2:
        raise UserError("--jobs must be at least 2 (one core is the first column)")
    big = scaled(lines, args.jobs_mb)
    passes = min(args.repeat, 3)
    if not args.json:
        print()
        print(
            f"multi-core: {sum(len(x) + 1 for x in big) / 1e6:.1f} MB (the input x"
            f"{len(big) // max(len(lines), 1)}), median of {passes} passes each, "
            f"{os.cpu_count()} cores; CPU x: CPU time of the jobs pass over one core's "
            "(on idle cores the ratio is about jobs / CPU x); machine x: the ratio of a loop "
            "of arithmetic in the same run, what the cores gave work that shares nothing then"
        )
        print(
            f"{'mode':<11}{'1 core MB/s':>12}{f'{args.jobs} jobs MB/s':>14}{'ratio':>8}"
            f"{'CPU x':>7}{'machine x':>11}  load average"
        )
    for mode in modes:
        row = bench_jobs(big, mode, args.jobs, passes)
        if args.json:
            print(orjson.dumps({"multicore": row}).decode())
            continue
        load = " ".join(f"{x:.2f}" for x in row["load_average"])
        print(
            f"{mode:<11}{row['one_core_mb_per_s']:>12.2f}{row['jobs_mb_per_s']:>14.2f}"
            f"{row['ratio']:>7.2f}x{row['cpu_overhead']:>7.2f}{row['machine_ratio']:>10.2f}x  {load}"
        )


def family_table(results: Sequence[Mapping[str, Any]]) -> list[str]:
    """Savings per output family: one row per family, one block of columns per mode."""
    first = results[0]["families"]
    head = f"{'family':<18}{'outputs':>8}{'tokens':>10}"
    sub = f"{'':<18}{'':>8}{'before':>10}"
    for result in results:
        head += f" | {result['mode']:^29}"
        sub += f" | {'after':>9}{'saved %':>9}{'facts':>11}"
    out = ["savings per output family", head, sub]
    for family, row in first.items():
        line = f"{family[:17]:<18}{row['outputs']:>8}{row['tokens_before']:>10,}"
        for result in results:
            r = result["families"].get(family)
            if r is None:
                line += f" | {'-':>29}"
                continue
            before, after = r["tokens_before"], r["tokens_after"]
            pct = 100.0 * (before - after) / before if before else 0.0
            facts = f"{r['facts_kept']}/{r['facts']}" if r["facts"] else "-"
            line += f" | {after:>9,}{pct:>9.1f}{facts:>11}"
        out.append(line)
    return out
