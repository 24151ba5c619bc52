"""Secrets the held-out hostile set (holdout-e) found unredacted in stored spans.

- a fine-grained GitHub token (``github_pat_...``) on its own: the rule's literal prefilter
  only looked for ``gh``, so the pattern never ran on it;
- ``KEY=value`` in a raw JSON line (a dead letter's text), where the next line starts after a
  ``\\n`` escape, not a line break: the value ran on into the next line and was refused.
"""

import random
import string

from workers.core.redact import redact
from workers.pipeline.batch import redact_bytes

_R = random.Random(7)


def _token(alphabet: str, n: int) -> str:
    return "".join(_R.choice(alphabet) for _ in range(n))


ALNUM = string.ascii_letters + string.digits
PAT = "github_pat_11" + _token(ALNUM, 20) + "_" + _token(ALNUM, 59)
AWS_SECRET = _token(ALNUM + "/+", 40)
GHP = "ghp_" + _token(ALNUM, 36)


def test_fine_grained_github_token_alone_is_redacted() -> None:
    assert redact(f"remote: {PAT} rejected") == "remote: [REDACTED:github_token] rejected"
    assert PAT not in redact(PAT)


def test_value_ends_at_an_escaped_line_break_of_a_raw_json_line() -> None:
    raw = (
        '{"id":"x","kind":"tool_output","content":"export AWS_SECRET_ACCESS_KEY='
        + AWS_SECRET
        + "\\nGITHUB_TOKEN="
        + GHP
        + "\\ntoken: "
        + PAT
        + '\\n" BROKEN'
    )
    out = redact(raw)
    assert AWS_SECRET not in out and GHP not in out and PAT not in out
    assert "AWS_SECRET_ACCESS_KEY=[REDACTED:kv_secret]\\nGITHUB_TOKEN=[REDACTED:" in out
    # the dead letter's stored text of such a line
    stored = redact_bytes(raw.encode())
    assert AWS_SECRET.encode() not in stored and PAT.encode() not in stored


def test_escaped_tab_ends_a_value_and_an_escaped_backslash_does_not() -> None:
    assert redact(r"token=abcdefgh12\tnext") == r"token=[REDACTED:kv_secret]\tnext"
    assert redact(r"password=abc\\new!x") == "password=[REDACTED:kv_secret]"


def test_a_decoded_backslash_in_a_password_still_redacts_the_whole_value() -> None:
    # before the escape stands no secret (too short, code-like): the value runs on as before
    assert redact(r"password=abc\new!x") == "password=[REDACTED:kv_secret]"
