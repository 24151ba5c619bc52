"""redact_known finds a cut secret's head or tail exactly as the plain per-length loop did."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from workers.core import redact as R


def reference_cut(text: str, secret: str, tail: bool) -> tuple[int, int] | None:
    """The plain loop: every length from the longest down, one comparison each."""
    if len(secret) <= R._MIN_PIECE or len(text) < R._MIN_PIECE:
        return None
    for n in range(len(secret) - 1, R._MIN_PIECE - 1, -1):
        if tail and text.startswith(secret[-n:]) and R._bounded(text, 0, n):
            return 0, n
        if not tail and text.endswith(secret[:n]) and R._bounded(text, len(text) - n, len(text)):
            return len(text) - n, len(text)
    return None


# small alphabets make repeats inside a secret (``abab...``) and boundary characters common
_chars = st.sampled_from("ab1-_ .Z")
_secret = st.text(_chars, min_size=9, max_size=40)


@st.composite
def _text_around(draw: st.DrawFn) -> tuple[str, str]:
    secret = draw(_secret)
    cut = draw(st.integers(min_value=1, max_value=len(secret) - 1))
    before = draw(st.text(_chars, max_size=12))
    after = draw(st.text(_chars, max_size=12))
    shape = draw(st.sampled_from(["tail-first", "head-last", "free"]))
    if shape == "tail-first":
        text = secret[cut:] + after
    elif shape == "head-last":
        text = before + secret[:cut]
    else:
        text = draw(st.text(_chars, max_size=50))
    return text, secret


@settings(max_examples=600, deadline=None)
@given(_text_around())
def test_the_cut_piece_is_the_plain_loops(pair: tuple[str, str]) -> None:
    text, secret = pair
    for tail in (True, False):
        if len(secret) > R._MIN_PIECE and len(text) >= R._MIN_PIECE:
            assert R._cut_piece(text, secret, tail=tail) == reference_cut(text, secret, tail)


def test_a_line_cut_in_the_middle_of_a_secret_is_redacted_on_both_sides() -> None:
    secret = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
    with R.known_secrets([(secret, "stripe_key")]):
        assert R.redact_known(secret[10:] + " rest") == "[REDACTED:stripe_key] rest"
        assert R.redact_known("key=" + secret[:12]) == "key=[REDACTED:stripe_key]"
        assert R.redact_known("no secret here at all") == "no secret here at all"
