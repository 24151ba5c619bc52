"""A text's token count is the sum of its pieces' counts, for both encodings.

``workers.core.tokens.pieces`` cuts after a line break whose following run of
horizontal whitespace ends in a non-space character (for o200k, not a "/"
right after the break).  These tests hold that rule against tiktoken itself:
the token list of the whole text is the concatenation of its pieces' token
lists (stronger than equal counts: the pre-tokens are the same), on random
text over the characters the pre-tokenisers treat specially, arbitrary
unicode, lone surrogates, every space-like and control code point, and the
corpus; they also show that each part of the rule is needed.
"""

from __future__ import annotations

import random
import sys
import unicodedata

import orjson
import pytest
import regex
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.conftest import Corpus
from workers.core.tokens import PIECE_THRESHOLD, TokenCounter, get_encoding, pieces
from workers.messages import parse_record

ENCODINGS = ("cl100k_base", "o200k_base")
SPECIAL = [
    "\n", "\n", "\n", "\r\n", "\r", " ", " ", "  ", "\t", "/", "//", ".", ",", ")", "'s", "'LL",
    "a", "Z", "é", "\u0301", "中", "한", "1", "42", "1234", "😀", "👍🏽", "\u200d", "\u00a0",
    "\x0b", "\x0c", "\x85", "\u2028", "\u2029", "\u3000", "\u1680", "\x1c", "\x1f", "\x00",
    "\ud800", "\udfff", "\ud83d", "\ude00", "<|endoftext|>", "{", "}", "\":", "-", "_", "#",
]  # fmt: skip
TEXTS = st.one_of(
    st.lists(st.sampled_from(SPECIAL), max_size=60).map("".join),
    st.lists(st.lists(st.sampled_from(SPECIAL), max_size=8).map("".join), max_size=12).map(
        "\n".join
    ),
    st.lists(st.text(max_size=10), max_size=10).map("\n".join),
    st.text(max_size=80),
)
EXAMPLES = [
    "x.\n/usr/bin\n",  # o200k: ".\n/" is one pre-token
    "a\n \nb",  # one whitespace run over two line breaks
    "a\n  ",  # whitespace to the end of the text
    "a\r\nb\n  c\n\td\n\u00a0e\n\x1cf\n\x85g",
    '{\n  "k": [\n    1,\n    2\n  ]\n}\n',
    "line\ud83d\n\ude00 split pair\n",
]


def _tokens(encoding: str, text: str) -> list[int]:
    return list(get_encoding(encoding).encode_ordinary(text))


def _check(encoding: str, text: str) -> None:
    cut = pieces(text, encoding)
    assert cut is not None
    assert "".join(cut) == text
    assert all(cut), "no empty piece"
    assert all(p.endswith("\n") for p in cut[:-1])
    whole = _tokens(encoding, text)
    assert [t for p in cut for t in _tokens(encoding, p)] == whole, (text, cut)
    counter = TokenCounter(encoding, piece_threshold=1)
    assert counter.count(text) == len(whole)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_pieces_tokenise_exactly_like_the_whole_text(encoding: str) -> None:
    @settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
    @given(TEXTS)
    def check(text: str) -> None:
        _check(encoding, text)

    for text in EXAMPLES:
        _check(encoding, text)
    check()


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_the_cuts_are_every_place_the_rule_allows(encoding: str) -> None:
    @settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
    @given(TEXTS)
    @example("a\nb\n c\n\n d\n/e\n \nf\n  ")
    def check(text: str) -> None:
        cut = pieces(text, encoding)
        assert cut is not None
        ends = set()
        at = 0
        for piece in cut[:-1]:
            at += len(piece)
            ends.add(at)
        expected = set()
        for i, ch in enumerate(text[:-1]):
            if ch != "\n":
                continue
            rest = text[i + 1 :]
            run = len(rest) - len(rest.lstrip(" \t\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2028\u2029"
                                               "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
                                               "\u2008\u2009\u200a\u202f\u205f\u3000"))  # fmt: skip
            if run == len(rest) or rest[run].isspace():
                continue  # whitespace to the end, or on to a line break
            if encoding == "o200k_base" and run == 0 and rest[0] == "/":
                continue
            expected.add(i + 1)
        assert ends == expected

    check()


@pytest.mark.parametrize(
    ("encoding", "left", "right", "tokens_differ"),
    [
        ("cl100k_base", "a\n", " \nb", True),  # the run goes on to another line break
        ("o200k_base", "a\n", " \nb", True),
        ("cl100k_base", ")\n", "\n/", True),
        ("o200k_base", "x.\n", "/", True),  # o200k's ".\n/"
        ("cl100k_base", "a\r", "\nb", True),  # inside "\r\n"
        # cl100k's \s++$ makes "\n  " one pre-token at the end of the text
        # (its tokens happen to be those of "\n" and "  ")
        ("cl100k_base", "a\n", "  ", False),
    ],
)
def test_each_exclusion_of_the_rule_is_needed(
    encoding: str, left: str, right: str, tokens_differ: bool
) -> None:
    whole = left + right
    pattern = regex.compile(get_encoding(encoding)._pat_str)
    assert pattern.findall(left) + pattern.findall(right) != pattern.findall(whole)
    split = _tokens(encoding, left) + _tokens(encoding, right)
    assert (split != _tokens(encoding, whole)) is tokens_differ
    cut = pieces(whole, encoding) or []
    boundaries = {sum(len(p) for p in cut[:k]) for k in range(1, len(cut))}
    assert len(left) not in boundaries


def _code_points() -> list[str]:
    """Every code point that is space-like, a control or a format character, and a
    sample of every other category (which the pre-tokenisers treat alike)."""
    rng = random.Random(15)
    by_category: dict[str, list[str]] = {}
    chosen: list[str] = []
    for cp in range(sys.maxunicode + 1):
        ch = chr(cp)
        category = unicodedata.category(ch)
        if ch.isspace() or category in {"Cc", "Cf", "Zs", "Zl", "Zp"} or ch in "/'":
            chosen.append(ch)
        else:
            by_category.setdefault(category, []).append(ch)
    for members in by_category.values():
        chosen.extend(rng.sample(members, min(12, len(members))))
    return chosen


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_every_kind_of_code_point_after_a_line_break(encoding: str) -> None:
    """The character after the break (and after a horizontal run) decides a cut."""
    lefts = ["x\n", "x.\n", "x \n", "\n\n", "1\r\n", "'\n"]
    failures = []
    for ch in _code_points():
        for left in lefts:
            for right in (ch + "b", " " + ch + "\n", "\t" + ch, ch + "\n/", ch + "\n \n"):
                text = left + right
                cut = pieces(text, encoding)
                assert cut is not None and "".join(cut) == text
                if [t for p in cut for t in _tokens(encoding, p)] != _tokens(encoding, text):
                    failures.append(text)
    assert failures == []


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_long_text_changed_in_a_few_lines_is_counted_only_where_it_changed(
    encoding: str,
) -> None:
    lines = [f'  {{"id": {i}, "path": "/srv/app/module_{i % 37}.py", "ok": {i % 3 == 0}}},' for i in range(900)]  # fmt: skip
    text = "[\n" + "\n".join(lines) + "\n]\n"
    assert len(text) > 50_000
    counter = TokenCounter(encoding)
    assert counter.count(text) == len(_tokens(encoding, text))
    counted = counter.counted_chars
    assert counted <= len(text)
    changed = list(lines)
    changed[10] = changed[10].replace("module", "MODULE")
    del changed[500:503]
    changed.insert(700, '  {"id": -1},')
    after = "[\n" + "\n".join(changed) + "\n]\n"
    assert counter.count(after) == len(_tokens(encoding, after))
    assert counter.counted_chars - counted < 200  # the two new lines, not 50 KB
    assert counter.piece_misses <= len(lines) + 4


def test_a_short_text_is_counted_whole_and_the_piece_memo_is_bounded() -> None:
    counter = TokenCounter(piece_threshold=PIECE_THRESHOLD, piece_cache_size=50)
    short = "a\nb\n" * (PIECE_THRESHOLD // 8)
    assert counter.count(short) == len(_tokens("cl100k_base", short))
    assert counter.piece_misses == 0
    long = "".join(f"line {i}\n" for i in range(400))
    assert counter.count(long) == len(_tokens("cl100k_base", long))
    assert counter.piece_misses == 400
    assert len(counter._pieces_young) + len(counter._pieces_old) <= 100
    # an encoding without a known cut rule is counted whole
    assert pieces(long, "r50k_base") is None


@pytest.mark.slow
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_piece_counts_equal_whole_counts_on_every_corpus_text(
    encoding: str, corpus: Corpus, corpus_lines: list[bytes]
) -> None:
    texts = [unit.text for line in corpus_lines for unit in parse_record(orjson.loads(line)).units]
    counter = TokenCounter(encoding, piece_threshold=1)
    reference = TokenCounter(encoding, piece_threshold=sys.maxsize, cache_size=1)
    assert [counter.count(t) for t in texts] == [reference.uncached_count(t) for t in texts]
    assert counter.piece_misses > len(texts)  # texts were really cut
