from __future__ import annotations

import pytest

from workers.core.redact import SECRET_PATTERNS, redact

SAMPLES = {
    "pem_private_key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "authorization": "Authorization: Bearer abcdef0123456789",
    "openai_key": "sk-proj-abcdefghijklmnop1234567890",
    "github_token": "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "slack_token": "xoxb-123456789012-abcdefghij",
    "aws_access_key": "AKIAIOSFODNN7EXAMPLE",
    "google_api_key": "AIzaSyA1234567890abcdefghijklmnopqrstuv",
    "json_secret": '{"client_secret": "s3cr3t-value"}',
    "kv_secret": "DB_PASSWORD=hunter22",
}


def test_every_kind_has_a_sample() -> None:
    assert set(SAMPLES) == {kind for kind, _ in SECRET_PATTERNS}


@pytest.mark.parametrize(("kind", "text"), sorted(SAMPLES.items()))
def test_each_kind_is_redacted(kind: str, text: str) -> None:
    out = redact(f"before {text} after")
    assert f"[REDACTED:{kind}]" in out
    assert out.startswith("before ") and out.endswith(" after")
    for secret in (
        "hunter22",
        "s3cr3t-value",
        "abcdef0123456789",
        "MIIEowIBAAKCAQEA7",
        "AKIAIOSFODNN7EXAMPLE",
    ):
        assert secret not in out


def test_plain_text_is_unchanged() -> None:
    text = "token count is 42; max_tokens=4096; tokenizer=cl100k; Auth::Password::ResetToken; the password field is required"
    assert redact(text) == text


def test_a_text_whose_lower_case_changes_length_is_still_redacted() -> None:
    # "İ".lower() is two characters: offsets found in the lower-cased text do not fit
    assert redact("İİİİ password=hunter2secret") == "İİİİ password=[REDACTED:kv_secret]"
    assert "sk-" not in redact("İ token sk-abcdefghijklmnopqrstuvwx")
