"""Shared fixtures: the public corpus and pipelines."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

# the shared engine checks assert inside the package: show their operands too
pytest.register_assert_rewrite("workers.testing")

from workers.core.tokens import TokenCounter  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHARED_CORPUS = REPO.parent / "shared" / "corpus" / "public.jsonl"  # an extra, when present
SAMPLE = REPO / "samples" / "sample.jsonl"
CORPORA = ("generated", "shared") if SHARED_CORPUS.is_file() else ("generated",)


@dataclass(frozen=True)
class Corpus:
    """One corpus file: ``generated`` (built from real program runs) or ``shared``."""

    name: str
    path: Path

    def lines(self) -> list[bytes]:
        return self.path.read_bytes().splitlines()


@pytest.fixture(scope="session")
def generated_corpus() -> Path:
    """The project's own corpus, built once into .cache/corpus (kept while its version holds)."""
    from workers.bench.corpus import ensure

    return ensure(log=print)


@pytest.fixture(scope="session", params=CORPORA)
def corpus(request: pytest.FixtureRequest) -> Corpus:
    """The corpus files: the generated corpus always, ../shared/corpus/public.jsonl when it
    exists. Tests that take it (or ``corpus_lines``) run once per corpus."""
    if request.param == "generated":
        return Corpus("generated", request.getfixturevalue("generated_corpus"))
    return Corpus("shared", SHARED_CORPUS)


@pytest.fixture(scope="session")
def corpus_lines(corpus: Corpus) -> list[bytes]:
    return corpus.lines()


@pytest.fixture(scope="session")
def tokens() -> TokenCounter:
    return TokenCounter()
