"""Secrets a stash cannot show on its own never reach the store (issue 11, "Secrets").

A stashed span may have lost what made its secret recognisable: JSON-table rows hold
values without their key names (``[3,"bob","hunter2x"]`` under ``columns=[..,"password"]``),
a cut line holds the tail of ``aws_secret_access_key = ...`` without the key, one line cut
out of a key block holds neither its BEGIN nor its END line.  The record's own text says
they are secrets, so the store never gets them.
"""

from __future__ import annotations

import json
import random
import string
from pathlib import Path
from typing import Any

import orjson
import pytest

from workers.cli import main
from workers.core.offload import stored_text
from workers.core.redact import known_secrets, redact, secrets_of

_rng = random.Random(1111)
_ALNUM = string.ascii_letters + string.digits


def _word(n: int, alphabet: str = _ALNUM) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def _compress(tmp_path: Path, records: list[dict[str, Any]]) -> tuple[bytes, list[Any]]:
    src, out, st = tmp_path / "in.jsonl", tmp_path / "out.jsonl", tmp_path / "st"
    src.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    args = ["compress", "-i", str(src), "-o", str(out), "--offload", str(st), "--quiet"]
    assert main(args) == 0
    stored = b"".join(p.read_bytes() for p in st.rglob("*") if p.is_file())
    return stored, [orjson.loads(line) for line in out.read_bytes().splitlines()]


USERS = [
    {"id": i, "user": f"user{i}", "password": _word(12, "abcdefghkmnpqrstuvwxyz23456789")}
    for i in range(40)
]


@pytest.mark.parametrize("mode", ["standard", "aggressive"])
@pytest.mark.parametrize("indent", [None, 2])
def test_json_table_rows_keep_their_secrets_out_of_the_store(
    tmp_path: Path, mode: str, indent: int | None
) -> None:
    record = {
        "id": "users",
        "kind": "tool_output",
        "mode": mode,
        "command": "curl -s http://127.0.0.1:8080/api/users",
        "content": json.dumps(USERS, indent=indent),
    }
    stored, (out,) = _compress(tmp_path, [record])
    assert "jsontable" in out["compression"]["engines_applied"]
    assert len(stored) > 500  # the rows were stashed
    leaked = [u["password"] for u in USERS if u["password"].encode() in stored]
    assert leaked == []
    assert b"user17" in stored  # only the secrets went


def test_a_cut_line_keeps_the_tail_of_its_secret_out_of_the_store(tmp_path: Path) -> None:
    """toolfilter cuts a long line after about 240 characters: here inside the secret, so
    the stash starts with the secret's tail and no ``key =`` before it."""
    secret = _word(40, _ALNUM + "+/")
    log = "\n".join(f"2025-01-01 12:00:{i:02d} INFO step {i}" for i in range(50))
    records = []
    for pad in (180, 200, 210):
        line = "x" * pad + f" aws_secret_access_key = {secret} " + "y" * 3000
        content = f"{log}\n{line}\n{log}\n"
        records.append(
            {"id": f"cut{pad}", "kind": "tool_output", "mode": "standard", "content": content}
        )
    stored, _ = _compress(tmp_path, records)
    assert b"yyyyyyyyyy" in stored  # the cut lines were stashed
    pieces = [n for n in range(8, len(secret) + 1) if secret[-n:].encode() in stored]
    pieces += [n for n in range(8, len(secret) + 1) if secret[:n].encode() in stored]
    assert pieces == []


def _pem_body() -> list[str]:
    import base64

    return [base64.b64encode(_rng.randbytes(48)).decode() for _ in range(6)]


def test_a_lone_key_block_line_never_reaches_a_stash() -> None:
    """The runner's stash (what every store gets) for a record whose text shows the block:
    one body line cut out on its own is redacted there too."""
    body = _pem_body()
    block = "\n".join(["-----BEGIN RSA PRIVATE KEY-----", *body, "-----END RSA PRIVATE KEY-----"])
    found = secrets_of([f"key file:\n{block}\n"])
    assert all(line in {s for s, _ in found} for line in body)
    lone = f"2025-01-01 INFO middle of it\n{body[2]}\nnext"
    assert body[2] in redact(lone)  # on its own the line does not look like a secret
    with known_secrets(found):
        from workers.core.offload import stash_key

        key = stash_key(lone)
    with known_secrets(found):
        from workers.core.redact import redact_known

        held = redact_known(stored_text(lone))
    assert body[2] not in held and "middle of it" in held
    import hashlib

    assert key == hashlib.sha256(held.encode()).hexdigest()[:16]


def test_lone_key_block_lines_cut_out_by_budget_never_reach_the_store(tmp_path: Path) -> None:
    """Error lines between the lines of a key block stay visible (critical), so the budget
    engine stashes each body line on its own, without its BEGIN or END line."""
    body = _pem_body()
    lines = [f"2025-01-01 12:00:{i:02d} INFO worker {i} step {i * 7 % 900} ms" for i in range(60)]
    block = ["-----BEGIN PRIVATE KEY-----"]
    for k, line in enumerate(body):
        block += [line, f"2025-01-01 ERROR worker {k} failed: connection refused to db{k}:5432"]
    lines[30:30] = [*block, "-----END PRIVATE KEY-----"]
    record = {
        "id": "r",
        "kind": "tool_output",
        "mode": "aggressive",
        "content": "\n".join(lines),
        "budget_tokens": 200,
    }
    stored, (out,) = _compress(tmp_path, [record])
    assert "budget" in out["compression"]["engines_applied"]
    assert b"ERROR" in stored or b"INFO worker 33" in stored  # the log was stashed
    assert [line for line in body if line.encode() in stored] == []
    for line in body:  # nor are they in the output: the budget stashed them
        assert line not in out["content"]


def test_a_dead_letter_of_a_json_table_shows_no_secret_of_its_rows() -> None:
    """A gate rejection's before and after (dead-letter data) hold the JSON-table rows."""
    from workers.core.settings import Settings
    from workers.engines import resolve
    from workers.engines.base import Engine, EngineContext, EngineOutput
    from workers.messages.model import Unit
    from workers.pipeline.runner import Pipeline

    class HalfEngine(Engine):  # a lossy engine the gate rejects: it drops numbers
        name = "smartcrush"
        lossless = False

        def apply(self, units: Any, ctx: EngineContext) -> EngineOutput:
            texts = [u.text[: len(u.text) // 2] for u in units if isinstance(u, Unit)]
            return EngineOutput(texts=texts)

    data = {"id": "t", "kind": "tool_output", "mode": "standard", "content": json.dumps(USERS)}
    chain = [*resolve(("jsontable",)), HalfEngine()]
    outcome = Pipeline(Settings(mode="off"), engines={"standard": chain}).run_raw(data)
    (rejection,) = outcome.rejections
    letter = json.dumps(rejection.as_dict())
    assert "json-table" in letter and "user17" in letter
    assert [u["password"] for u in USERS if u["password"] in letter] == []
