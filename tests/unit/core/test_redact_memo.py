"""secrets_of collects each distinct text's secrets once, with the same result."""

from __future__ import annotations

from workers.core import redact
from workers.core.memo import clear_all

TEXTS = [
    "deploy with password=hunter2-very-secret and token: abcdef123456",
    "curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl' https://x",
    "no secret in here, just words and a key ring",
    "aws AKIAIOSFODNN7EXAMPLE and sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 2,
]


def _plain(texts: list[str]) -> list[tuple[str, str]]:
    return [pair for text in texts for pair in redact._text_secrets.fn(text)]


def test_memoised_secrets_are_the_plain_ones_in_order() -> None:
    clear_all()
    texts = [*TEXTS, TEXTS[0], TEXTS[1], TEXTS[0]]
    first = redact.secrets_of(texts)
    assert first == _plain(texts)
    assert ("hunter2-very-secret", "kv_secret") in first
    assert len(redact._text_secrets) == len(TEXTS)  # one entry per distinct text
    assert redact.secrets_of(texts) == first  # from the memo


def test_clear_all_empties_the_secrets_memo() -> None:
    redact.secrets_of(TEXTS)
    assert len(redact._text_secrets) > 0
    clear_all()
    assert len(redact._text_secrets) == 0
