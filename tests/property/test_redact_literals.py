"""The one-pass literal scan (Hyperscan) gives what the per-literal ``str.find`` loops gave.

``workers.core.literals`` finds every rule literal of ``workers.core.redact`` in one scan; the
plain rules find them with one ``str.find`` loop per literal, in the text (cased rules) or in
its lower case (folded rules).  For any text, the positions agree, and so does everything
``_redact`` returns (text, count, secrets found) with the scanner and without it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workers.core import literals as L
from workers.core import redact as R

pytestmark = pytest.mark.skipif(
    R._CASED_SCAN is None or R._FOLDED_SCAN is None, reason="hyperscan is not installed here"
)

_LITERALS = sorted({lit for rule in R._RULES for lit in rule.literals})
_SECRETS = [
    "ghp_" + "aB3" * 12,
    "password = hunter2x",
    '"api_key": "Zk9xQ2LmP0aB7cD4eF1g"',
    "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJl",
    "postgres://admin:s3cr3t@db.internal:5432/app",
    "AKIAABCDEFGHIJKLMNOP",
    "sk-proj-" + "Ab1" * 10,
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEow==\n-----END RSA PRIVATE KEY-----",
    "xoxb-1234567890-abcdefghij",
    "AC" + "0123456789abcdef" * 2,
]
# characters whose lower case moves or changes the text: the Kelvin sign lowers to "k",
# "İ" lowers to two characters; others outside ASCII, a lone surrogate, line breaks
_ODD = [
    "\u212a",
    "\u212aEY",
    "İ",
    "é",
    "ß",
    "\ud800",
    "Σ",
    "\n",
    "\r\n",
    "\\n",
    " ",
    "\t",
    "'",
    '"',
]


def _case(draw: st.DrawFn, text: str) -> str:
    return "".join(c.upper() if draw(st.booleans()) else c for c in text)


@st.composite
def _texts(draw: st.DrawFn) -> str:
    parts: list[str] = []
    for _ in range(draw(st.integers(min_value=0, max_value=12))):
        kind = draw(st.integers(min_value=0, max_value=4))
        if kind == 0:
            parts.append(_case(draw, draw(st.sampled_from(_LITERALS))))
        elif kind == 1:
            parts.append(draw(st.sampled_from(_SECRETS)))
        elif kind == 2:
            parts.append(draw(st.sampled_from(_ODD)))
        elif kind == 3:
            parts.append(draw(st.text(max_size=12)))
        else:
            parts.append(draw(st.text(st.sampled_from("aAkKeEyY-_:/.= 0123456789"), max_size=12)))
    return "".join(parts)


def _find_all(haystack: str, literal: str) -> list[int]:
    out = []
    pos = haystack.find(literal)
    while pos != -1:
        out.append(pos)
        pos = haystack.find(literal, pos + 1)
    return out


@settings(max_examples=400, deadline=None)
@given(_texts())
def test_positions_are_the_find_loops_positions(text: str) -> None:
    cased, folded = R._CASED, sorted(R._FOLDED_LITERALS)
    scanned = R._literal_positions(text)
    if not L.caseless_like_lower(text):
        assert scanned is None
        return
    assert scanned is not None
    lowered = R._lower(text)
    assert scanned[0] == {lit: p for lit in cased if (p := _find_all(text, lit))}
    assert scanned[1] == {lit: p for lit in folded if (p := _find_all(lowered, lit))}


@contextmanager
def _plain_rules() -> Iterator[None]:
    saved = R._CASED_SCAN, R._FOLDED_SCAN
    R._CASED_SCAN = R._FOLDED_SCAN = None
    try:
        yield
    finally:
        R._CASED_SCAN, R._FOLDED_SCAN = saved


@settings(max_examples=400, deadline=None)
@given(_texts(), st.booleans(), st.booleans())
def test_redact_is_the_same_with_and_without_the_scanner(
    text: str, collect: bool, bodies: bool
) -> None:
    found_fast: list[tuple[str, str]] | None = [] if collect else None
    fast = R._redact(text, found_fast, bodies)
    found_plain: list[tuple[str, str]] | None = [] if collect else None
    with _plain_rules():
        plain = R._redact(text, found_plain, bodies)
    assert fast == plain
    assert found_fast == found_plain


def test_the_secrets_above_are_found_and_byte_offsets_map_to_characters() -> None:
    """Not only agreement: real secrets after multi-byte characters are redacted in place."""
    text = "é\u00e9ü " + " · ".join(_SECRETS[:7])
    redacted, count = R._redact(text, None)
    assert count >= 7
    for secret in ("aB3aB3", "hunter2x", "Zk9xQ2LmP0", "s3cr3t@", "AKIAABCDEF", "Ab1Ab1"):
        assert secret not in redacted
    assert redacted.startswith("é\u00e9ü ")
    positions = L.scanner(["ghp_"]).positions("ü" * 3 + "ghp_x ghp_")  # type: ignore[union-attr]
    assert positions == {"ghp_": [3, 9]}
