"""The fast counter (bpe-openai) gives tiktoken's counts, for any text.

ctxpress counts with bpe-openai when it is installed; these tests are what
lets it: random text over the characters that matter to the pre-tokeniser
(whitespace runs, contractions, digits, punctuation, combining marks, emoji,
CJK), arbitrary unicode, and every text of the corpus.
"""

from __future__ import annotations

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import Corpus
from workers.core.tokens import TokenCounter, fast_counter, get_encoding
from workers.messages import parse_record

TEXTS_FLOOR = {"generated": 250, "shared": 500}  # text slots per corpus (298 and 2,000+)
ENCODINGS = ("cl100k_base", "o200k_base")
TRICKY = list(
    " \t\n\r\x0b\x0c\u00a0\u2028\u3000abcXYZ019SDTMLRVE'\"sdtmlrve.,;:!?-_/\\{}[]()<>|@#$%^&*+=~`"
    "éüßçñ中文日本語한국어😀👍🏽\u200d\u0301\u0300ΑΩабв١٢"
)
TEXTS = st.one_of(
    st.text(st.sampled_from(TRICKY), max_size=80),
    st.text(max_size=60),
    st.lists(st.sampled_from(["  ", "\n", "\n\n  ", "'s", "'LL", "1234567", " x", "\t}", "é"])).map(
        "".join
    ),
)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_fast_counts_equal_tiktoken_for_any_text(encoding: str) -> None:
    fast = fast_counter(encoding)
    assert fast is not None, "bpe-openai is a dependency of ctxpress"
    reference = get_encoding(encoding)

    @settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
    @given(TEXTS)
    def check(text: str) -> None:
        assert fast.count(text) == len(reference.encode_ordinary(text)), repr(text)

    check()


@pytest.mark.slow
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_fast_counts_equal_tiktoken_on_every_corpus_text(
    encoding: str, corpus: Corpus, corpus_lines: list[bytes]
) -> None:
    fast = TokenCounter(encoding, backend="bpe-openai")
    slow = TokenCounter(encoding, backend="tiktoken")
    texts = [unit.text for line in corpus_lines for unit in parse_record(orjson.loads(line)).units]
    assert len(texts) > TEXTS_FLOOR[corpus.name]
    assert [fast.uncached_count(t) for t in texts] == [slow.uncached_count(t) for t in texts]


@settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.text(st.one_of(st.sampled_from(TRICKY), st.characters(categories=["Cs"])), max_size=40))
def test_counter_equals_tiktoken_with_lone_surrogates_too(text: str) -> None:
    reference = get_encoding("cl100k_base")
    assert TokenCounter().uncached_count(text) == len(reference.encode_ordinary(text))
