from __future__ import annotations

from pathlib import Path

import pytest

from workers.tokens import TokenCounter, UnknownEncoding, get_encoding

TEXT = "def f(x):\n    return x * 2  # 1.50 tokens?\n\n" * 20


def test_cl100k_counts_are_exact_and_cached() -> None:
    counter = TokenCounter("cl100k_base")
    exact = len(get_encoding("cl100k_base").encode_ordinary(TEXT))
    assert counter.count(TEXT) == exact == counter.count(TEXT)
    assert counter.misses == 1 and counter.calls == 2
    assert counter.count("") == 0
    # special-token text is counted as plain text, never rejected
    assert counter.count("<|endoftext|>") > 1


def test_o200k_loads_offline_from_the_bpe_openai_wheel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    get_encoding.cache_clear()
    try:
        counter = TokenCounter("o200k_base")
        assert counter.count("hello world, ctxpress") == 5
        assert any(tmp_path.iterdir())  # the rank file was installed into tiktoken's cache
        # o200k and cl100k tokenise differently: the setting matters
        mixed = "Größenordnung 東京都 ✓ naïve"
        assert counter.count(mixed) != TokenCounter("cl100k_base").count(mixed)
    finally:
        get_encoding.cache_clear()


def test_unknown_encoding_says_what_to_do() -> None:
    with pytest.raises(UnknownEncoding, match="CTXPRESS_ENCODING=cl100k_base"):
        get_encoding("p99k_imaginary")
