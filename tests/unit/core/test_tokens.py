from __future__ import annotations

from pathlib import Path

import pytest

from workers.core.tokens import TokenCounter, TokenizerFailed, UnknownEncoding, get_encoding

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
    import tiktoken.registry

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    # forget o200k wherever an earlier test may have loaded it
    monkeypatch.delitem(tiktoken.registry.ENCODINGS, "o200k_base", raising=False)
    get_encoding.cache_clear()
    try:
        counter = TokenCounter("o200k_base", backend="tiktoken")
        assert counter.count("hello world, ctxpress") == 5
        assert TokenCounter("o200k_base").count("hello world, ctxpress") == 5
        assert any(tmp_path.iterdir())  # the rank file was installed into tiktoken's cache
        # o200k and cl100k tokenise differently: the setting matters
        mixed = "Größenordnung 東京都 ✓ naïve"
        assert counter.count(mixed) != TokenCounter("cl100k_base").count(mixed)
    finally:
        get_encoding.cache_clear()


def test_unknown_encoding_says_what_to_do() -> None:
    with pytest.raises(UnknownEncoding, match="CTXPRESS_ENCODING=cl100k_base"):
        get_encoding("p99k_imaginary")


def test_backends_agree_and_auto_picks_the_fast_counter() -> None:
    assert TokenCounter().backend == "bpe-openai"
    assert TokenCounter(backend="tiktoken").backend == "tiktoken"
    assert TokenCounter(backend="bpe-openai").count(TEXT) == TokenCounter(backend="tiktoken").count(
        TEXT
    )
    with pytest.raises(ValueError, match="valid: auto, bpe-openai, tiktoken"):
        TokenCounter(backend="chars/4")


def test_lone_surrogates_are_counted_like_tiktoken_does() -> None:
    text = "ok \ud800 then"
    expected = len(get_encoding("cl100k_base").encode_ordinary(text))
    assert TokenCounter().count(text) == expected == TokenCounter(backend="tiktoken").count(text)


def test_a_huge_whitespace_run_is_counted_even_with_the_tiktoken_backend() -> None:
    # tiktoken's regex overflows its stack on this and panics (a BaseException);
    # the counter falls back to bpe-openai instead of crashing the worker.
    text = " " * 1_000_000 + "a"
    with pytest.raises(BaseException, match="StackOverflow"):
        get_encoding("cl100k_base").encode_ordinary(text)  # tiktoken alone panics
    assert TokenCounter(backend="tiktoken").count(text) == TokenCounter().count(text) == 7814


def test_a_text_no_tokenizer_can_count_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from workers.core import tokens as tokens_module

    class PanicException(BaseException):
        pass

    class Panicking:
        def encode_ordinary(self, text: str) -> list[int]:
            raise PanicException("called `Result::unwrap()` on an `Err` value: StackOverflow")

    counter = TokenCounter(backend="tiktoken")
    monkeypatch.setattr(counter, "_tiktoken", Panicking())
    monkeypatch.setattr(tokens_module, "fast_counter", lambda name: None)
    with pytest.raises(TokenizerFailed, match="no tokenizer could count a text of 3 characters"):
        counter.count("abc")


def test_tiktoken_tables_load_only_when_tiktoken_has_to_count() -> None:
    counter = TokenCounter()
    counter.count(TEXT)
    assert counter._tiktoken is None  # bpe-openai counted: 40 MB not loaded
    counter.count("lone \ud800 surrogate")  # replaced like tiktoken does, still bpe-openai
    assert counter._tiktoken is None
    counter._reference()
    assert counter._tiktoken is not None


def test_lone_surrogates_next_to_a_huge_whitespace_run_are_still_counted() -> None:
    text = "\ud800" + " " * 1_000_000 + "a"
    cleaned = "\ufffd" + " " * 1_000_000 + "a"
    assert TokenCounter().count(text) == TokenCounter().count(cleaned)
    assert TokenCounter(backend="tiktoken").count(text) == TokenCounter().count(cleaned)


@pytest.mark.parametrize("backend", ["bpe-openai", "tiktoken"])
def test_a_long_text_is_counted_in_pieces_with_either_backend(backend: str) -> None:
    from workers.core.tokens import PIECE_THRESHOLD

    text = "".join(f"row {i}: ok \ud800 {'x' * (i % 300)}\n  indented\n" for i in range(200))
    assert len(text) > PIECE_THRESHOLD
    counter = TokenCounter(backend=backend)
    expected = len(get_encoding("cl100k_base").encode_ordinary(text))
    assert counter.count(text) == expected
    assert counter.piece_misses > 100  # it was cut, lone surrogates and all
    assert (counter.calls, counter.misses) == (1, 1)
    again = counter.piece_misses
    assert counter.count(text + "tail\n") == len(
        get_encoding("cl100k_base").encode_ordinary(text + "tail\n")
    )
    assert counter.piece_misses == again + 1  # only the new line was counted


def test_the_fast_counter_loads_without_the_packages_python_side() -> None:
    """bpe_openai's ``__init__`` loads every encoding's ranks in Python (1.1 s of start-up
    per CLI call and worker); ctxpress loads only its Rust extension, and counts the same."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from workers.core.tokens import TokenCounter, get_encoding\n"
        "counter = TokenCounter('cl100k_base')\n"
        "text = 'def f(x):\\n    return x  # 1.50 ünïcode\\n' * 3\n"
        "print(counter.backend, 'bpe_openai.compat' in sys.modules,\n"
        "      counter.count(text) == len(get_encoding('cl100k_base').encode(text)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.split() == ["bpe-openai", "False", "True"]
