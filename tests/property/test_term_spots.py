"""``term_spots`` (the literal searched at C speed, the word's start checked after) finds the
places the plain rule finds: the term as a whole word, ``(?<!\\w)term(?!\\w)``."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from workers.engines._text import term_spots

ALPHABET = st.sampled_from(list("ab1_/.-: \né\u0301x"))


def _plain(text: str, term: str, cap: int) -> list[int]:
    rx = re.compile(rf"(?<![\w]){re.escape(term)}(?![\w])")
    return [m.start() for m in rx.finditer(text)][:cap]


@settings(max_examples=400, deadline=None)
@given(
    text=st.text(ALPHABET, max_size=60),
    term=st.text(ALPHABET, min_size=1, max_size=4),
    cap=st.integers(min_value=1, max_value=8),
)
def test_term_spots_are_the_plain_rules_places(text: str, term: str, cap: int) -> None:
    assert term_spots(text, term, cap) == _plain(text, term, cap)


def test_a_word_starting_inside_a_rejected_one_is_found() -> None:
    assert term_spots("xa/a/a", "a/a", 5) == [3]
    assert term_spots("requester x-request-id", "request", 5) == [12]
