"""Secret redaction applied before anything is persisted (offload store, dead letter).

Each kind has a name; a redacted secret becomes ``[REDACTED:kind]``.  Two
families of rules:

- provider formats (AWS, GitHub, GitLab, Slack, Stripe, OpenAI, Anthropic,
  Google, PyPI, SendGrid, Twilio, npm, Hugging Face, private key blocks, JWTs,
  passwords in URLs, ...): a fixed prefix and a body of the format's alphabet;
- keyword values (``password=...``, ``"client_secret": "..."``, ``X-Api-Key:
  ...``): only where the key *ends* with the keyword (``token_budget`` and
  ``secretName`` are not secrets) and the value is a literal, not code: an
  identifier (``self.password = password``, ``token: bytes``), a call or
  subscript, a path, a number, a UUID or a template (``${DB_PASS}``) is left
  alone.

Measured against ``detect-secrets`` 1.5 on the labelled set in
``tests/unit/secrets_set.py``: it missed 28% of the true secrets, flagged 55 of
217 look-alikes (code identifiers and hashes) and took ~360x longer than these
rules, so the rules stay here (a dependency-free, bounded module) and the set
is what keeps them honest.  Patterns are bounded so a hostile input cannot make
them backtrack; every rule is tried only where one of its literals occurs, and one
Hyperscan pass (:mod:`workers.core.literals`) finds every literal of every rule at once.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from workers.core.literals import caseless_like_lower, scanner
from workers.core.memo import memo

__all__ = [
    "KINDS",
    "KnownSecrets",
    "known_secrets",
    "redact",
    "redact_count",
    "redact_known",
    "secrets_of",
]

_Span = tuple[int, int]


@dataclass(frozen=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]
    #: the pattern is tried only where one of these occurs
    literals: tuple[str, ...]
    #: literals are looked for in the lower-cased text (the pattern is case-insensitive)
    folded: bool = False
    #: the span to redact, or None to keep the match (default: group ``s`` or the match)
    accept: Callable[[re.Match[str]], _Span | None] | None = None


def _span(match: re.Match[str]) -> _Span:
    if "s" in match.re.groupindex and match.group("s") is not None:
        return match.span("s")
    return match.span()


def _mixed(value: str) -> bool:
    """Holds an upper-case letter, a lower-case letter and a digit (random keys do)."""
    return (
        any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and any(c.isdigit() for c in value)
    )


def _cased(value: str) -> bool:
    return any(c.isupper() for c in value) and any(c.islower() for c in value)


def _openai(match: re.Match[str]) -> _Span | None:
    # sk-proj-/sk-ant-/sk-svcacct-/sk-admin- are unambiguous; a bare sk- key is
    # 48 random characters, never the lower-case words of a branch name
    if match.group("p") or _mixed(match.group("s")):
        return match.span()
    return None


def _pem_b64(match: re.Match[str]) -> _Span | None:
    blob = match.group()
    try:
        head = base64.b64decode(blob[:64] + "=" * (-len(blob[:64]) % 4), validate=False)
    except (binascii.Error, ValueError):
        return None
    return match.span() if b"PRIVATE KEY" in head else None


_B64_LINE = re.compile(r"[A-Za-z0-9+/=]{16,120}\r?")


def _pem_tail(match: re.Match[str]) -> _Span | None:
    """An END line whose BEGIN is elsewhere (a block split across a marker): its base64 lines.

    Read backwards from the END line: base64 lines (or ones already redacted), then the
    base64 end of the line before them (a log prefix); lines may be JSON-escaped (``\\n``).
    """
    text = match.string
    end = match.start()
    back = _TAIL_REVERSED.match(text[max(0, end - 200_000) : end][::-1])
    if back is None or not back.group():
        return None
    sep = 2 if text.endswith("\\n", 0, end) else 1
    if text.endswith("\r", 0, end - 1) or text.endswith("\\r", 0, end - 2):
        sep += sep
    start = end - back.end()
    rest = text[start : end - sep].replace(_BODY_DONE, "")
    if not rest.replace("\\r", "").replace("\\n", "").strip():
        return None  # only bodies redacted already
    return (start, end - sep)


_BODY_DONE = "[REDACTED:pem_private_key]"
# read reversed: a line break, a base64 line (or a redacted body), repeated; then the
# base64 end of the line before them ("\\n" reversed reads "n\\")
_SEP = r"(?:\n\r?|n\\(?:r\\)?)"
_TAIL_REVERSED = re.compile(
    rf"(?:{_SEP}(?:[A-Za-z0-9+/=]{{16,120}}|{re.escape(_BODY_DONE[::-1])})(?=\n|n\\|$))*"
    rf"(?:{_SEP}[A-Za-z0-9+/=]{{16,120}})?"
)
# The body of a key block without its BEGIN and END lines (a block an engine split):
# two or more full 64-character base64 lines in a row, each holding both cases and a digit
# (a sha256 in hex never does), then maybe the block's shorter last line.
_BODY_LINE = re.compile(r"[A-Za-z0-9+/]{64}")
_LAST_LINE = re.compile(r"[A-Za-z0-9+/]{1,64}={0,2}(?![A-Za-z0-9+/=])")


def _body_line(line: str) -> bool:
    return len(line) == 64 and _BODY_LINE.fullmatch(line) is not None and _mixed(line)


def _pem_bodies(text: str) -> tuple[str, int]:
    total = 0
    for sep in ("\n", "\\n"):
        if sep not in text:
            continue
        cr = "\r" if sep == "\n" else "\\r"
        lines = text.split(sep)
        bare = [line.removesuffix(cr) for line in lines]
        out: list[str] = []
        i, n, found = 0, len(lines), 0
        while i < n:
            # a first line may carry a prefix (a log line's start) before its 64 characters
            head = bare[i][-64:]
            starts = (
                _body_line(head)
                and (len(bare[i]) == 64 or not bare[i][-65].isalnum())
                and i + 1 < n
                and _body_line(bare[i + 1])
            )
            if not starts:
                out.append(lines[i])
                i += 1
                continue
            j = i + 1
            while j < n and _body_line(bare[j]):
                j += 1
            tail = ""
            if j < n:  # the block's last line, maybe followed by other text (a quote)
                last = _LAST_LINE.match(bare[j])
                after = bare[j][last.end() : last.end() + 1] if last is not None else ""
                word = last.group() if last is not None else ""
                random_like = "=" in word or any(c.isdigit() or c.isupper() for c in word)
                if last is not None and after in ("", '"', "'", "\\") and random_like:
                    tail = lines[j][last.end() :]
                    j += 1
            out.append(bare[i][:-64] + _BODY_DONE + tail)
            found += 1
            i = j
        if found:
            text = sep.join(out)
            total += found
    return text, total


def _telegram(match: re.Match[str]) -> _Span | None:
    text = match.string
    start = match.start()
    while start > 0 and text[start - 1].isdigit() and match.start() - start < 10:
        start -= 1
    if start > 0 and text[start - 1].isdigit():
        return None
    return (start, match.end())


# An id made of words and a number (``auth_amex_19399``, ``order-2024-0042``): what a log
# writes under ``auth``/``token`` keys as a reference, not a secret (a token mixes letters and
# digits within its runs). Redacting it in a stash lost the value on expand (held-out set 5).
_READABLE_ID = re.compile(r"[A-Za-z][a-z]{0,15}(?:[_.-](?:[A-Za-z][a-z]{0,15}|\d{1,10}))+")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# code, not a literal: an identifier or dotted name without digits, a call,
# a subscript or a generic, a number, a path, a URL, a template or placeholder
_CODE = re.compile(
    r"[A-Za-z_]+(?:\.[A-Za-z_][A-Za-z_0-9]*)*"
    # code taking an address, dereferencing or building a struct (Go's ``&socks.Auth{User:``,
    # ``*secretStore.Lookup(``, C's ``&ctx->creds``, Rust's ``&mut``): an expression, not a
    # literal
    r"|&mut|[&*][A-Za-z_]\w*(?:(?:\.|->|::)[A-Za-z_]\w*)+|[&*]?[A-Za-z_][\w.]*[(\[<][\s\S]*"
    r"|&?[A-Za-z_][\w.]*\{(?:[A-Za-z_]\w*:)?"
    r"|[a-z]+(?:-[a-z]+)+"
    r"|[\d.]+[kKmMgG]?"
    r"|(?:~|\.{1,2})?/[\s\S]*"
    r"|[a-z][a-z0-9+.-]*://[\s\S]*"
)
_KEBAB = re.compile(r"[a-z]+(?:-[a-z]+)+")
_PASSPHRASE_KEYS = ("passw", "passp", "pwd")  # not ``PASS:`` (a test result's word)
_TEMPLATE = re.compile(
    r"^(?:\$|%\(|<[^<>]{1,80}>$|\*+$|x+$|X+$|\.\.\.$|\[REDACTED)|\{\{|\$\{|\{[\w.]*\}|REDACTED"
)
_PASSWORD_KEYS = ("pass", "pwd", "secret", "credential")


def _password_key(match: re.Match[str]) -> bool:
    return match.group("k").lower().startswith(_PASSWORD_KEYS)


_ESCAPED_BREAKS = ("\\n", "\\r", "\\t")


# a test runner's result line: go's ``--- PASS: TestName/case_0 (0.00s)``, automake's and
# meson's ``PASS: tests/test_parse`` (beside its ``FAIL:``/``SKIP:`` lines)
_RESULT_LINE = re.compile(
    r"PASS: (\S+?)( \([\d.]+m?s\))?(?:\]\])?[ \t]*(?:\r?\n|\\n|$)"
)  # ]]: a note quoting it
_OTHER_RESULT = re.compile(r"(?m)^(?:--- )?(?:FAIL|XFAIL|XPASS|SKIP|ERROR): \S")


def _test_result(text: str, match: re.Match[str]) -> bool:
    """Whether the ``PASS:`` ``match`` is a test result, not a password: the line is
    ``PASS: name`` alone (blanks and ``--- `` before it at most), and the name is a path, has a
    duration or stands among other results."""
    start = match.start()
    escaped = text.rfind("\\n", 0, start)  # a line break as JSON writes it
    line_start = max(text.rfind("\n", 0, start) + 1, escaped + 2 if escaped >= 0 else 0)
    before = text[line_start:start]
    before = before[before.rfind('"') + 1 :]  # in a JSON string: from its start (go test -json)
    if before.strip() not in ("", "---") and not before.endswith(" --- "):
        # DB_PASS: ..., - PASS: ...; a note quoting the line (``same 9 lines as message 9:
        # --- PASS: TestX/case (0.00s)``) is the line
        return False
    result = _RESULT_LINE.match(text, start)
    if result is None:
        return False
    name = result.group(1)
    return (
        "/" in name
        or "::" in name
        or result.group(2) is not None
        or bool(_OTHER_RESULT.search(text))
    )


def _keyword_value(match: re.Match[str]) -> _Span | None:
    """The value after ``key =`` / ``"key": `` when it is a literal that looks like a secret.

    An unquoted value ends at a JSON-escaped line break or tab (``\\n``: a raw JSON line, a
    dead letter's text); when what stands before it is no secret, the value runs on as before
    (a decoded ``password=C:\\new`` keeps its backslash)."""
    cut: list[bool] = [False]
    span = _keyword_value_at(match, cut)
    if span is None and cut[0]:
        span = _keyword_value_at(match, None)
    return span


def _keyword_value_at(match: re.Match[str], cut: list[bool] | None) -> _Span | None:
    text = match.string
    start = match.end()
    if match.group("k") == "PASS" and _test_result(text, match):
        return None
    end_limit = min(len(text), start + 2000)
    quote = ""
    for q in ('\\"', '"', "'", "`"):
        if text.startswith(q, start):
            quote = q
            break
    if quote:
        vstart = start + len(quote)
        pos = vstart
        while True:
            pos = text.find(quote, pos, end_limit)
            if pos == -1:
                return None
            if quote == '"' and text[pos - 1] == "\\" and (pos - vstart) > 0:
                # an escaped quote inside the value (an odd run of backslashes)
                run = len(text[vstart:pos]) - len(text[vstart:pos].rstrip("\\"))
                if run % 2:
                    pos += 1
                    continue
            break
        vend = pos
        value = text[vstart:vend]
        if "\n" in value:
            return None
    else:
        vstart = start
        vend = vstart
        while vend < end_limit and text[vend] not in " \t\r\n\"',;`":
            if cut is not None and text[vend] == "\\":
                if text.startswith("\\\\", vend):
                    vend += 2  # an escaped backslash is part of the value
                    continue
                if text.startswith(_ESCAPED_BREAKS, vend):
                    cut[0] = True
                    break
            vend += 1
        vend = min(vend, end_limit)
        while vend > vstart and text[vend - 1] in ")]}>":
            vend -= 1
        value = text[vstart:vend]
        if _CODE.fullmatch(value) and not (
            (value.isdigit() and len(value) >= 6 and _password_key(match))
            # a passphrase (``password=correct-horse-battery-staple``): kebab-case is a name
            # after any other key, not after a password's
            or (_KEBAB.fullmatch(value) and match.group("k").lower().startswith(_PASSPHRASE_KEYS))
        ):
            return None
    if _UUID.fullmatch(value) or _TEMPLATE.search(value):
        return None
    if _password_key(match):
        ok = len(value.strip()) >= 3
    else:  # token, key, auth: one run of token characters
        ok = (
            len(value) >= 8
            and not any(c.isspace() for c in value)
            and (any(c.isdigit() for c in value) or (len(value) >= 16 and _cased(value)))
            and not _READABLE_ID.fullmatch(value)
        )
    return (vstart, vend) if ok else None


_B = r"(?<![A-Za-z0-9_])"  # left boundary of a token
_PRIVATE = r"-----BEGIN (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----"
_PRIVATE_END = r"-----END (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----"

_RULES: tuple[_Rule, ...] = (
    _Rule(
        "pem_private_key",
        # a whole block; a BEGIN whose END is elsewhere runs to the end of its base64 lines
        re.compile(
            _PRIVATE
            + r"(?:[\s\S]{0,20000}?"
            + _PRIVATE_END
            + r"|(?:(?:\r?\n|(?:\\r)?\\n)[A-Za-z0-9+/=:\- ]{0,120}){0,500})"
        ),
        ("-----BEGIN ",),
    ),
    _Rule(
        "pem_private_key",
        # an END whose BEGIN is elsewhere (a block split across a marker)
        re.compile(r"(?:(?<=\n)|(?<=\\n))" + _PRIVATE_END),
        ("-----END ",),
        accept=_pem_tail,
    ),
    _Rule(
        "pem_private_key",  # base64 of a PEM block (Kubernetes secrets' tls.key)
        re.compile(_B + r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{20,40000}={0,2}"),
        ("LS0tLS1CRUdJT",),
        accept=_pem_b64,
    ),
    _Rule(
        "jwt",
        re.compile(r"\beyJ[A-Za-z0-9_-]{5,4000}\.eyJ[A-Za-z0-9_-]{5,8000}\.[A-Za-z0-9_-]{5,4000}"),
        ("eyJ",),
    ),
    _Rule(
        "openai_key",
        re.compile(
            r"\bsk-(?P<p>proj-|ant-(?:[a-z]{3,5}\d\d-)?|svcacct-|admin-)?(?P<s>[A-Za-z0-9_-]{20,400})"
        ),
        ("sk-",),
        accept=_openai,
    ),
    _Rule(
        "github_token",
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,255}|github_pat_[A-Za-z0-9_]{20,255})"),
        ("gh", "github_pat_"),
    ),
    _Rule(
        "gitlab_token",
        re.compile(r"\bgl(?:pat|dt|rt|ptt|ft|cbt|soat|oas)-[A-Za-z0-9_-]{20,255}"),
        ("gl",),
    ),
    _Rule("slack_token", re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{10,255}"), ("xox",)),
    _Rule(
        "slack_webhook",
        re.compile(
            r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9/_-]{20,300})"
        ),
        ("hooks.slack.com",),
    ),
    _Rule(
        "discord_webhook",
        re.compile(r"/api/webhooks/(?P<s>\d{5,30}/[A-Za-z0-9_-]{20,200})"),
        ("/api/webhooks/",),
    ),
    _Rule(
        "stripe_key",
        re.compile(r"\b(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,255}|whsec_[A-Za-z0-9]{24,255})"),
        ("sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_"),
    ),
    _Rule(
        "aws_access_key",
        re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
        ("AKIA", "ASIA", "ABIA", "ACCA"),
    ),
    _Rule("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}"), ("AIza",)),
    _Rule("google_oauth", re.compile(r"\bya29\.[0-9A-Za-z_-]{20,2000}"), ("ya29.",)),
    _Rule("pypi_token", re.compile(r"\bpypi-AgE[A-Za-z0-9_-]{40,400}"), ("pypi-AgE",)),
    _Rule(
        "sendgrid_key",
        re.compile(r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])"),
        ("SG.",),
    ),
    _Rule("twilio_sid", re.compile(_B + r"(?:AC|SK)[0-9a-f]{32}(?![0-9A-Za-z])"), ("AC", "SK")),
    _Rule("npm_token", re.compile(r"\bnpm_[A-Za-z0-9]{36}(?![A-Za-z0-9])"), ("npm_",)),
    _Rule("huggingface_token", re.compile(r"\bhf_[A-Za-z0-9]{30,40}(?![A-Za-z0-9])"), ("hf_",)),
    _Rule(
        "digitalocean_token",
        re.compile(r"\bdo[opr]_v1_[a-f0-9]{64}"),
        ("dop_v1_", "doo_v1_", "dor_v1_"),
    ),
    _Rule(
        "shopify_token",
        re.compile(r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}"),
        ("shpat_", "shpss_", "shpca_", "shppa_"),
    ),
    _Rule("databricks_token", re.compile(r"\bdapi[0-9a-f]{32}(?:-\d)?(?![0-9a-zA-Z])"), ("dapi",)),
    _Rule(
        "grafana_token",
        re.compile(r"\b(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,400}={0,2})"),
        ("gl",),
    ),
    _Rule(
        "square_token",
        re.compile(r"\b(?:sq0(?:atp|csp)-[0-9A-Za-z_-]{22,60}|EAAA[A-Za-z0-9_-]{60,200})"),
        ("sq0atp-", "sq0csp-", "EAAA"),
    ),
    _Rule(
        "mailchimp_key",
        re.compile(r"(?<=(?<![0-9a-f])[0-9a-f]{32})-us\d{1,2}(?![0-9])"),
        ("-us",),
        accept=lambda m: (m.start() - 32, m.end()),
    ),
    _Rule(
        "telegram_token",
        re.compile(r"(?<=\d{8}):AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])"),
        (":AA",),
        accept=_telegram,
    ),
    _Rule(
        "authorization",
        re.compile(
            r"(?i)(?:authorization[\"']?\s{0,5}[:=]\s{0,5}[\"']?\s{0,5}(?:bearer|basic|token|digest)"
            r"|bearer)\s{1,5}(?P<s>[A-Za-z0-9._~+/-]{6,4000}={0,2})"
        ),
        ("authorization", "bearer"),
        folded=True,
        accept=lambda m: (
            m.span("s")
            if m.group().lower().startswith("authorization")
            or (len(m.group("s")) >= 20 and any(c.isdigit() for c in m.group("s")))
            else None
        ),
    ),
    _Rule(
        "url_password",
        re.compile(r"://(?P<u>[^\s:/@?#\"'<>]{0,200}):(?P<s>[^\s@/?#\"'<>]{1,200})@"),
        ("://",),
        accept=lambda m: None if _TEMPLATE.search(m.group("s")) else m.span("s"),
    ),
    _Rule(
        "kv_secret",
        # the key ends with the keyword (token_budget, secretName are not keys of secrets)
        re.compile(
            r"(?i)(?P<k>passw(?:or)?d|passphrase|(?<![a-z])pass|(?<![a-z])pwd"
            r"|secret(?:[_.-]?(?:access[_.-]?)?key)?|credentials?|token|(?<![a-z])auth"
            r"|(?:(?<=api)|(?<=api[_-])|(?<=access)|(?<=access[_-])|(?<=private)|(?<=private[_-])"
            r"|(?<=account)|(?<=account[_-])|(?<=signing)|(?<=signing[_-])|(?<=encryption[_-])"
            r"|(?<=master[_-]))key)"
            r"(?:[_-]?(?:confirm(?:ation)?|b64|base64|value|plain|raw))?\d{0,3}"
            r"(?![a-z0-9_])(?:\\?[\"'])?[ \t]{0,5}(?::=|[=:](?![=:]))[ \t]{0,5}"
        ),
        ("pass", "pwd", "secret", "credential", "token", "auth", "key"),
        folded=True,
        accept=_keyword_value,
    ),
)
KINDS: tuple[str, ...] = tuple(dict.fromkeys(rule.kind for rule in _RULES))


def _apply(
    text: str, starts: list[int], rule: _Rule, found: list[tuple[str, str]] | None = None
) -> tuple[str, int]:
    """``text`` with every accepted match of ``rule`` tried at ``starts`` redacted, and how many.

    ``found``: gets ``(secret, kind)`` for every span redacted."""
    pattern = rule.pattern
    pieces: list[str] = []
    last = 0
    for pos in starts:
        if pos < last:
            continue
        match = pattern.match(text, pos)
        if match is None:
            continue
        span = rule.accept(match) if rule.accept is not None else _span(match)
        if span is None or span[0] < last:
            continue
        if found is not None:
            found.append((text[span[0] : span[1]], rule.kind))
        pieces.append(text[last : span[0]])
        pieces.append(f"[REDACTED:{rule.kind}]")
        last = span[1]
    if not pieces:
        return text, 0
    pieces.append(text[last:])
    return "".join(pieces), len(pieces) // 2


def _starts(haystack: str, literals: tuple[str, ...]) -> list[int]:
    """Every position where one of ``literals`` starts in ``haystack``, in order."""
    starts: list[int] = []
    for literal in literals:
        pos = haystack.find(literal)
        while pos != -1:
            starts.append(pos)
            pos = haystack.find(literal, pos + 1)
    if len(literals) > 1:
        starts = sorted(set(starts))
    return starts


def _lower(text: str) -> str:
    """``text.lower()`` with the same length (``"İ".lower()`` is two characters)."""
    folded = text.lower()
    if len(folded) == len(text):
        return folded
    # the literals are ASCII: any other character may stand as "?" (one code point each)
    return text.encode("ascii", "replace").lower().decode("ascii")


# Any literal of any rule, one scan each way: most texts hold none of them.
_CASED = tuple(sorted({lit for rule in _RULES if not rule.folded for lit in rule.literals}))
_CASED_LITERALS = re.compile("|".join(map(re.escape, _CASED)))
_FOLDED_LITERALS = tuple(
    sorted({lit for rule in _RULES if rule.folded for lit in rule.literals}, key=len)
)


def redact_count(text: str) -> tuple[str, int]:
    """``text`` with every known kind of secret replaced by ``[REDACTED:kind]``, and the count."""
    return _redact(text, None)


def _redact(text: str, found: list[tuple[str, str]] | None, bodies: bool = True) -> tuple[str, int]:
    if not text:
        return text, 0
    total = 0
    scanned = _literal_positions(text)
    folded: str | None = None
    if scanned is None:
        lowered = _lower(text)
        if _CASED_LITERALS.search(text) is None and not any(
            map(lowered.__contains__, _FOLDED_LITERALS)
        ):
            return _bodies(text, total) if bodies else (text, total)
        folded = lowered
    elif not scanned[0] and not scanned[1]:
        return _bodies(text, total) if bodies else (text, total)
    for rule in _RULES:
        if scanned is not None and not total:
            # the one scan's positions hold until a rule changes the text
            starts = _merged(scanned[1] if rule.folded else scanned[0], rule.literals)
        elif rule.folded:
            if folded is None:
                folded = _lower(text)
            starts = _starts(folded, rule.literals)
        else:
            starts = _starts(text, rule.literals)
        if not starts:
            continue
        text, count = _apply(text, starts, rule, found)
        if count:
            total += count
            folded = None
    return _bodies(text, total, found) if bodies else (text, total)


# One Hyperscan pass finds every rule's literals (in the text, and ASCII-caseless for the
# folded rules) where ``_starts`` would scan the text once per literal; the same positions,
# about 10x faster over the corpora's texts (tests/property/test_redact_literals.py).
_CASED_SCAN = scanner(_CASED)
_FOLDED_SCAN = scanner(sorted(_FOLDED_LITERALS), caseless=True)


def _literal_positions(text: str) -> tuple[dict[str, list[int]], dict[str, list[int]]] | None:
    """(cased, folded) literal -> positions of ``text``, or None: no scanner, or a text whose
    lower case moves an ASCII letter (``_lower``'s own scan then decides)."""
    if _CASED_SCAN is None or _FOLDED_SCAN is None or not caseless_like_lower(text):
        return None
    return _CASED_SCAN.positions(text), _FOLDED_SCAN.positions(text)


def _merged(positions: dict[str, list[int]], literals: tuple[str, ...]) -> list[int]:
    """The positions of ``literals``, in order, as ``_starts`` gives them."""
    if len(literals) == 1:
        return positions.get(literals[0], [])
    starts = [pos for literal in literals for pos in positions.get(literal, ())]
    return sorted(set(starts)) if starts else starts


def _bodies(text: str, total: int, found: list[tuple[str, str]] | None = None) -> tuple[str, int]:
    """Last: key block bodies that no rule saw whole (their BEGIN and END lines elsewhere)."""
    if len(text) >= 130 and _may_hold_body(text):
        before = text
        text, count = _pem_bodies(text)
        total += count
        if count and found is not None:
            kept = set(text.replace("\\n", "\n").split("\n"))
            found.extend(
                (line, "pem_private_key")
                for line in before.replace("\\n", "\n").split("\n")
                if line not in kept and _body_line(line.removesuffix("\r")[-64:])
            )
    return text, total


def _may_hold_body(text: str) -> bool:
    """Two lines in a row at least a key block's width (64): cheaper than looking closer."""
    for sep in ("\n", "\\n"):
        if sep not in text:
            continue
        previous = False
        for line in text.split(sep):
            width = len(line) >= 64
            if width and previous:
                return True
            previous = width
    return False


def redact(text: str) -> str:
    """``text`` with every known kind of secret replaced by ``[REDACTED:kind]``."""
    return redact_count(text)[0]


# --- secrets a stashed span cannot show on its own ------------------------------------
#
# A span an engine stashes may have lost what made its secret recognisable: JSON-table rows
# hold values without their key names, a cut line holds the tail of ``token = ...``, one
# line of a key block holds neither its BEGIN nor its END line.  The record's own texts
# do show them: ``secrets_of`` collects what the rules find there, and while
# ``known_secrets`` is active (the pipeline runs a record's engines in it) the stash key
# and the stashed text (``workers.core.offload.stash_key``) redact every occurrence of
# them too (``redact_known``).

_MIN_KNOWN = 3  # shorter values are not collected (every rule asks for more anyway)
_MIN_PIECE = 8  # a cut secret: its head or tail of at least this many characters
_KNOWN_TOKEN = re.compile(r"[A-Za-z0-9]")
_MARKER_KEY = re.compile(r"<<cx:[0-9a-f]{16}>>")


@dataclass(frozen=True)
class KnownSecrets:
    """The secrets of one record's texts (``secret -> kind``), collected on first use."""

    texts: tuple[str, ...]
    found: dict[str, str] = field(default_factory=dict, compare=False)
    done: list[bool] = field(default_factory=lambda: [False], compare=False)

    def secrets(self) -> dict[str, str]:
        if not self.done[0]:
            self.done[0] = True
            for secret, kind in secrets_of(self.texts):
                self.found.setdefault(secret, kind)
        return self.found


_KNOWN: ContextVar[KnownSecrets | None] = ContextVar("ctxpress_known_secrets", default=None)


def secrets_of(texts: Iterable[str]) -> list[tuple[str, str]]:
    """``(secret, kind)`` for every secret the rules find in ``texts``; a secret over
    several lines (a key block) also gives each of its lines that looks like key material."""
    out: list[tuple[str, str]] = []
    for text in texts:
        out.extend(_text_secrets(text))
    return out


# A pure function of one text: texts recur across records (a system prompt, the
# history an agent sends again with every request, one tool output in several
# shapes), so a record's secrets are collected from each distinct text once.
@memo(entries=1024, chars=4_000_000)
def _text_secrets(text: str) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    found: list[tuple[str, str]] = []
    # key block bodies without their BEGIN and END lines are looked for only where
    # one of those lines is (a block cut in this text); elsewhere they are rare, and
    # the store's own redaction sees two body lines in a row
    _redact(text, found, bodies="PRIVATE KEY" in text)
    for secret, kind in found:
        if "[REDACTED:" in secret:
            secret = secret.split("[REDACTED:", 1)[0]
        if len(secret.strip()) < _MIN_KNOWN:
            continue
        out.append((secret, kind))
        if "\n" in secret or "\\n" in secret:
            for line in secret.replace("\\n", "\n").split("\n"):
                line = line.strip().removesuffix("\\r")
                if len(line) >= 16 and not line.startswith("-----"):
                    out.append((line, kind))
    return tuple(out)


@contextmanager
def known_secrets(
    source: Iterable[str] | Iterable[tuple[str, str]] | KnownSecrets,
) -> Iterator[None]:
    """Within the block, :func:`redact_known` also redacts these secrets.

    ``source``: a :class:`KnownSecrets` (collected lazily), or ``(secret, kind)`` pairs.
    """
    if not isinstance(source, KnownSecrets):
        pairs = list(source)
        known = KnownSecrets(())
        known.done[0] = True
        for pair in pairs:
            if isinstance(pair, tuple):
                known.found.setdefault(pair[0], pair[1])
        source = known
    token = _KNOWN.set(source)
    try:
        yield
    finally:
        _KNOWN.reset(token)


def redact_known(text: str) -> str:
    """``text`` with every secret of the active :func:`known_secrets` redacted wherever it
    stands (not inside a ``<<cx:KEY>>``), also the head or the tail of one cut at the
    start or the end of ``text`` (a line an engine cut in two)."""
    known = _KNOWN.get()
    if known is None or not text:
        return text
    secrets = known.secrets()
    if not secrets:
        return text
    spans: list[tuple[int, int, str]] = []
    for secret, kind in secrets.items():
        pos = text.find(secret)
        while pos != -1:
            end = pos + len(secret)
            if _bounded(text, pos, end):
                spans.append((pos, end, kind))
            pos = text.find(secret, end)
        if len(secret) > _MIN_PIECE and len(text) >= _MIN_PIECE:
            cut = _cut_piece(text, secret)
            if cut is not None:
                spans.append((*cut, kind))
            cut = _cut_piece(text, secret, tail=False)
            if cut is not None:
                spans.append((*cut, kind))
    if not spans:
        return text
    keys = [m.span() for m in _MARKER_KEY.finditer(text)] if "<<cx:" in text else []
    spans.sort(key=lambda s: (s[0], -s[1]))
    pieces: list[str] = []
    last = 0
    for start, end, kind in spans:
        if start < last or any(a < end and start < b for a, b in keys):
            continue
        pieces += (text[last:start], f"[REDACTED:{kind}]")
        last = end
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


def _cut_piece(text: str, secret: str, tail: bool = True) -> tuple[int, int] | None:
    """The longest piece of ``secret`` (``_MIN_PIECE`` characters or more, not all of it)
    that ``text`` starts with (its tail: ``tail``) or ends with (its head), as a span.

    A piece that long starts (ends) with the text's first (last) ``_MIN_PIECE``
    characters, so only where those occur in the secret is there anything to compare:
    one ``str.find`` per occurrence instead of one comparison per length.
    """
    size = len(secret)
    if tail:  # text starts with secret[p:] for some 0 < p <= size - _MIN_PIECE
        probe = text[:_MIN_PIECE]
        p = secret.find(probe, 1)
        while p != -1:  # smallest p first: the longest piece
            if text.startswith(secret[p:]) and _bounded(text, 0, size - p):
                return 0, size - p
            p = secret.find(probe, p + 1)
        return None
    probe = text[-_MIN_PIECE:]  # text ends with secret[:n] for some _MIN_PIECE <= n < size
    q = secret.rfind(probe, 0, size - 1)
    while q != -1:  # largest end first: the longest piece
        n = q + _MIN_PIECE
        if text.endswith(secret[:n]) and _bounded(text, len(text) - n, len(text)):
            return len(text) - n, len(text)
        q = secret.rfind(probe, 0, n - 1)
    return None


def _bounded(text: str, start: int, end: int) -> bool:
    """Not part of a longer token on either side."""
    return (start == 0 or not _KNOWN_TOKEN.match(text[start - 1])) and (
        end == len(text) or not _KNOWN_TOKEN.match(text[end])
    )
