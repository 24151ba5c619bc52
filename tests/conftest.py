"""Shared fixtures: the public corpus and pipelines."""

from __future__ import annotations

from pathlib import Path

import pytest

# the shared engine checks assert inside the package: show their operands too
pytest.register_assert_rewrite("workers.testing")

from workers.core.tokens import TokenCounter  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus" / "public.jsonl"
SAMPLE = REPO / "samples" / "sample.jsonl"


@pytest.fixture(scope="session")
def corpus_lines() -> list[bytes]:
    assert CORPUS.is_file(), (
        f"corpus missing at {CORPUS} (../shared/corpus/public.jsonl next to the repo)"
    )
    return CORPUS.read_bytes().splitlines()


@pytest.fixture(scope="session")
def tokens() -> TokenCounter:
    return TokenCounter()
