"""Secret redaction applied before anything is persisted (offload store, dead letter).

Each kind has a name; a redacted secret becomes ``[REDACTED:kind]``.  Patterns
are bounded so a hostile input cannot make them backtrack.
"""

from __future__ import annotations

import re

__all__ = ["SECRET_PATTERNS", "redact"]

SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "pem_private_key",
        re.compile(
            r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----[\s\S]{1,20000}?-----END (?:[A-Z]+ )?PRIVATE KEY-----"
        ),
    ),
    (
        "jwt",
        re.compile(r"\beyJ[A-Za-z0-9_-]{5,4000}\.eyJ[A-Za-z0-9_-]{5,8000}\.[A-Za-z0-9_-]{5,4000}"),
    ),
    (
        "authorization",
        re.compile(
            r"(?i)\b(authorization\s*[:=]\s*[\"']?(?:bearer|basic|token)\s+)[A-Za-z0-9._~+/=-]{6,4000}"
        ),
    ),
    ("openai_key", re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,400}")),
    (
        "github_token",
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,255}|github_pat_[A-Za-z0-9_]{20,255})"),
    ),
    ("slack_token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,255}")),
    ("aws_access_key", re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b")),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    (
        "json_secret",
        re.compile(
            r"(?i)(\"[\w.-]{0,40}(?:password|passwd|secret|token|api_?key|access_?key|private_?key)[\w.-]{0,40}\"\s*:\s*\")[^\"\\\n]{1,2000}(?=\")"
        ),
    ),
    (
        "kv_secret",
        re.compile(
            r"(?i)\b([\w.-]{0,40}(?:password|passwd|secret|token|api_?key|access_?key)[\w.-]{0,40}\s*[=:]\s*)(?![\"\s\[]|REDACTED)[^\s\"',;]{3,2000}"
        ),
    ),
)


def redact(text: str) -> str:
    """``text`` with every known kind of secret replaced by ``[REDACTED:kind]``."""
    if not text:
        return text
    for kind, pattern in SECRET_PATTERNS:
        if pattern.groups:
            replacement = f"\\g<1>[REDACTED:{kind}]"
            text = pattern.sub(replacement, text)
        else:
            text = pattern.sub(f"[REDACTED:{kind}]", text)
    return text
