from __future__ import annotations

import pytest

from tests.support.secrets_set import LOOKALIKES, SECRETS
from workers.core.redact import KINDS, redact, redact_count


def test_the_labelled_set_is_large_enough() -> None:
    assert len(SECRETS) >= 60
    assert len({kind for kind, _, _ in SECRETS}) >= 30
    assert len(LOOKALIKES) >= 200
    groups = {group for group, _ in LOOKALIKES}
    assert {"code", "uuid", "identifier", "branch", "hash"} <= groups


def test_recall_is_total_on_the_labelled_set() -> None:
    missed = [(kind, text) for kind, text, secret in SECRETS if secret in redact(text)]
    assert missed == []


def test_no_look_alike_is_changed() -> None:
    # code identifiers, type annotations, UUIDs, hashes, branch names, prose
    changed = [(group, text, redact(text)) for group, text in LOOKALIKES if redact(text) != text]
    assert changed == []


def test_every_kind_is_reached_by_the_set() -> None:
    seen = {
        kind for kind in KINDS for _, text, _ in SECRETS if f"[REDACTED:{kind}]" in redact(text)
    }
    assert seen == set(KINDS)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("DB_PASSWORD=hunter22", "DB_PASSWORD=[REDACTED:kv_secret]"),
        ('{"client_secret": "s3cr3t-value"}', '{"client_secret": "[REDACTED:kv_secret]"}'),
        ("f(password=hunter22)", "f(password=[REDACTED:kv_secret])"),
        ('"password": "ab\\"cd"', '"password": "[REDACTED:kv_secret]"'),
        ('{\\"password\\": \\"hunter2x\\"}', '{\\"password\\": \\"[REDACTED:kv_secret]\\"}'),
        ("PASSWORD=12345678", "PASSWORD=[REDACTED:kv_secret]"),
        (
            "Authorization: Bearer abcdef0123456789",
            "Authorization: Bearer [REDACTED:authorization]",
        ),
        ("postgres://app:pw9@db/x", "postgres://app:[REDACTED:url_password]@db/x"),
        ("api_key=sk-proj-abcdefghijklmnopqrstuvwx", "api_key=[REDACTED:openai_key]"),
        # code and metadata about secrets stay as written
        ("self.password = password", "self.password = password"),
        ("password: bytes | str", "password: bytes | str"),
        ("token_budget=high", "token_budget=high"),
        ("feature/sk-1234-implement-login-flow", "feature/sk-1234-implement-login-flow"),
        ("max_tokens=4096", "max_tokens=4096"),
        # Go, C and Rust expressions are code; a literal that starts with & or * is a secret
        ('auth := &socks.Auth{User: "u"}', 'auth := &socks.Auth{User: "u"}'),
        ("creds = &ctx->creds;", "creds = &ctx->creds;"),
        ("password: *Sekr3t", "password: [REDACTED:kv_secret]"),
        ("password=&Hunter2!x", "password=[REDACTED:kv_secret]"),
    ],
)
def test_examples(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_redaction_is_idempotent_and_counted() -> None:
    for _, text, _ in SECRETS:
        once, count = redact_count(text)
        assert count >= 1
        assert redact_count(once) == (once, 0)


def test_plain_text_is_unchanged() -> None:
    text = "token count is 42; max_tokens=4096; tokenizer=cl100k; Auth::Password::ResetToken; the password field is required"
    assert redact(text) == text


def test_a_text_whose_lower_case_changes_length_is_still_redacted() -> None:
    # "İ".lower() is two characters: offsets found in the lower-cased text do not fit
    assert redact("İİİİ password=hunter2secret") == "İİİİ password=[REDACTED:kv_secret]"
    key = "sk-" + "Ab3" * 16
    assert redact(f"İ token {key}") == "İ token [REDACTED:openai_key]"


def _body(lines: int = 3) -> str:
    import base64
    import random

    rng = random.Random(7)
    return "\n".join(base64.b64encode(rng.randbytes(48)).decode() for _ in range(lines))


def test_a_key_body_split_from_its_begin_and_end_lines_is_redacted() -> None:
    body = _body()
    assert redact(f"x\n{body}\nQUJD==\nnext") == "x\n[REDACTED:pem_private_key]\nnext"
    assert redact(f"log ms: {body}\nnext") == "log ms: [REDACTED:pem_private_key]\nnext"
    escaped = body.replace("\n", "\\n")  # inside a JSON line (a dead letter's original)
    assert redact(f'{{"a": "{escaped}", ') == '{"a": "[REDACTED:pem_private_key]", '
    tail = f"log: {body}\n-----END PRIVATE KEY-----\n"
    assert redact(tail) == "log: [REDACTED:pem_private_key]\n-----END PRIVATE KEY-----\n"
    hexes = "\n".join(f"{n:064x}" for n in range(10**70, 10**70 + 3))  # sha256s: not keys
    assert redact(hexes) == hexes
