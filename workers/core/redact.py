"""Secret redaction applied before anything is persisted (offload store, dead letter).

Each kind has a name; a redacted secret becomes ``[REDACTED:kind]``.  Patterns
are bounded so a hostile input cannot make them backtrack.
"""

from __future__ import annotations

import re

__all__ = ["SECRET_PATTERNS", "redact"]

_KEYWORD = r"(?:password|passwd|secret|token(?!s\b|iz|ize)|api_?key|access_?key|private_?key)"
_VALUE_OK = r"(?!\d+\b)(?!REDACTED)"  # not a plain number (max_tokens=4096), not done already

_KEYWORDS = (
    "passw",
    "secret",
    "token",
    "api_key",
    "apikey",
    "access_key",
    "accesskey",
    "private_key",
    "privatekey",
)

# (kind, pattern, literal pre-checks: the pattern runs only if one occurs in the text)
_RULES: tuple[tuple[str, re.Pattern[str], tuple[str, ...], bool], ...] = (
    (
        "pem_private_key",
        re.compile(
            r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----[\s\S]{1,20000}?-----END (?:[A-Z]+ )?PRIVATE KEY-----"
        ),
        ("-----BEGIN ",),
        False,
    ),
    (
        "jwt",
        re.compile(r"\beyJ[A-Za-z0-9_-]{5,4000}\.eyJ[A-Za-z0-9_-]{5,8000}\.[A-Za-z0-9_-]{5,4000}"),
        ("eyJ",),
        False,
    ),
    (
        "authorization",
        re.compile(
            r"(?i)\b(authorization\s*[:=]\s*[\"']?(?:bearer|basic|token)\s+)[A-Za-z0-9._~+/=-]{6,4000}"
        ),
        ("authorization",),
        True,
    ),
    ("openai_key", re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,400}"), ("sk-",), False),
    (
        "github_token",
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,255}|github_pat_[A-Za-z0-9_]{20,255})"),
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        False,
    ),
    ("slack_token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,255}"), ("xox",), False),
    ("aws_access_key", re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), ("AKIA", "ASIA"), False),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}"), ("AIza",), False),
    (
        "json_secret",
        re.compile(
            r"(?i)("
            + _KEYWORD
            + r"[\w.-]{0,40}\"\s*:\s*\")"
            + _VALUE_OK
            + r"[^\"\\\n]{3,2000}(?=\")"
        ),
        _KEYWORDS,
        True,
    ),
    (
        "kv_secret",
        re.compile(
            r"(?i)("
            + _KEYWORD
            + r"[\w.-]{0,40}\s*[=:](?![=:])\s*)(?![\"\s\[{])"
            + _VALUE_OK
            + r"[^\s\"',;]{3,2000}"
        ),
        _KEYWORDS,
        True,
    ),
)
SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((k, p) for k, p, _, _ in _RULES)


def _literal_sub(
    text: str, haystack: str, literals: tuple[str, ...], pattern: re.Pattern[str], kind: str
) -> str:
    """``pattern.sub``, tried only where one of its start literals occurs (str.find is far faster than re).

    ``haystack`` is ``text`` or its lower-cased form; when lowering changed the
    length (``"İ".lower()`` is two characters) its offsets do not fit ``text``,
    and the plain substitution runs instead.
    """
    if len(haystack) != len(text):
        return pattern.sub(
            lambda m: f"{m.group(1) if pattern.groups else ''}[REDACTED:{kind}]", text
        )
    starts: set[int] = set()
    for keyword in literals:
        pos = haystack.find(keyword)
        while pos != -1:
            starts.add(pos)
            pos = haystack.find(keyword, pos + 1)
    pieces: list[str] = []
    last = 0
    for pos in sorted(starts):
        if pos < last:
            continue
        match = pattern.match(text, pos)
        if match is None:
            continue
        pieces.append(text[last : match.start()])
        kept = match.group(1) if pattern.groups else ""
        pieces.append(f"{kept}[REDACTED:{kind}]")
        last = match.end()
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


# Any start literal of any rule, one scan each way: most texts hold none of them.
_CASED_LITERALS = re.compile(
    "|".join(re.escape(lit) for _, _, lits, folded in _RULES if not folded for lit in lits)
)
_FOLDED_LITERALS = tuple(
    sorted({lit for _, _, lits, folded in _RULES if folded for lit in lits}, key=len)
)


def redact(text: str) -> str:
    """``text`` with every known kind of secret replaced by ``[REDACTED:kind]``."""
    if not text:
        return text
    folded = text.lower()
    if _CASED_LITERALS.search(text) is None and not any(map(folded.__contains__, _FOLDED_LITERALS)):
        return text
    lowered: str | None = folded
    for kind, pattern, literals, case_insensitive in _RULES:
        if case_insensitive:
            if lowered is None:
                lowered = text.lower()
            haystack = lowered
        else:
            haystack = text
        if not any(map(haystack.__contains__, literals)):
            continue
        text = _literal_sub(text, haystack, literals, pattern, kind)
        lowered = None
    return text
