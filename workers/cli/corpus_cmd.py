"""``ctxpress corpus build``: the project's own corpus of real program output.

The generator is ``workers.bench.corpus``; ``workers.cli`` and ``workers.bench``
are independent layers (the import-linter contract), so the command line runs it
as a program (``python -m workers.bench.corpus``) instead of importing it.
``ctxpress bench`` uses :func:`ensure_corpus` for its default input.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from workers.cli._common import UserError

__all__ = ["ensure_corpus", "register"]

GENERATOR = "workers.bench.corpus"
DEFAULT_LOCATION = ".cache/corpus/ctxpress-corpus-v<VERSION>.jsonl"


def ensure_corpus(output: str | None = None, *, force: bool = False, quiet: bool = False) -> Path:
    """The corpus file: built when missing, when the generator's version changed, or forced."""
    argv = [sys.executable, "-m", GENERATOR]
    if output is not None:
        argv += ["-o", output]
    if force:
        argv.append("--force")
    if quiet:
        argv.append("--quiet")
    done = subprocess.run(argv, stdout=subprocess.PIPE, check=False)
    if done.returncode != 0:
        raise UserError(
            f"the corpus generator failed (exit {done.returncode}); run "
            f"'python -m {GENERATOR} --force' to see why"
        )
    return Path(done.stdout.decode().strip().splitlines()[-1])


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "corpus",
        help="build the project's own corpus of real program output",
        description="Work with the corpus the tests and 'ctxpress bench' use by default.",
    )
    corpus_sub = p.add_subparsers(dest="corpus_command", metavar="ACTION")
    b = corpus_sub.add_parser(
        "build",
        help="generate the corpus (JSONL) from real program runs",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Run real programs in a temporary directory and write their captured output as\n"
            "OpenAI chat records, Anthropic records and tool-output records, one per line:\n"
            "git over this repository's history, pytest, ruff and mypy over a small generated\n"
            "project, pip list/show, ls and find, a JSON API served on 127.0.0.1, the log of a\n"
            "small program, and gcc, go, cargo and node on broken sources when they are on\n"
            "the PATH (skipped otherwise). Programs run with a timeout in a cleaned\n"
            "environment (PATH, HOME and locale only). Record ids are deterministic.\n\n"
            "Without --force, an existing file is kept: the default file name carries the\n"
            "generator's version, so a new version builds a new file. Prints the corpus path\n"
            "on stdout and a one-line summary (records, size, seconds) on stderr."
        ),
    )
    b.add_argument(
        "-o",
        "--output",
        metavar="PATH",
        default=None,
        help=f"where to write the corpus (default: {DEFAULT_LOCATION} under the repository root)",
    )
    b.add_argument(
        "--force",
        action="store_true",
        help="rebuild even when the file already exists",
    )
    b.add_argument(
        "--quiet",
        action="store_true",
        help="print only the path, not the summary line",
    )
    b.set_defaults(func=run_build)
    p.set_defaults(func=lambda args: _no_action(p))


def _no_action(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def run_build(args: argparse.Namespace) -> int:
    try:
        path = ensure_corpus(args.output, force=args.force, quiet=args.quiet)
    except UserError as exc:
        print(f"ctxpress corpus: {exc}", file=sys.stderr)
        return 2
    print(path)
    return 0
