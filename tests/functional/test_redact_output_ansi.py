"""CTXPRESS_REDACT_OUTPUT also covers the escape sequences the ``ansi`` engine keeps out of band.

A terminal hyperlink (OSC 8) carries its URL inside the escape sequence, so the
plain text never shows it: without redacting the ``compression.markers.ansi``
entry, a token in that URL went to the output as it came.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from workers.cli import main
from workers.markers import ansi

TOKEN = "ghp_" + "Zq3vT9wXk2LmN8pR4sYb7cJdQ1eF5gH6iJ7k"
KEY_VALUE = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
LINK = f"\x1b]8;;https://example.com/build?token={TOKEN}\x1b\\build log\x1b]8;;\x1b\\"


def _compress(tmp_path: Path, content: str) -> dict[str, object]:
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    record = {"id": "r1", "kind": "tool_output", "command": "make", "content": content}
    src.write_bytes(orjson.dumps(record) + b"\n")
    assert main(["compress", "--mode", "lossless", "-i", str(src), "-o", str(out), "--quiet"]) == 0
    value = orjson.loads(out.read_bytes())
    assert isinstance(value, dict)
    return value


def _ansi_entries(record: dict[str, object]) -> list[str]:
    comp = record["compression"]
    assert isinstance(comp, dict)
    return list(comp.get("markers", {}).get("ansi", []))


def test_a_token_in_a_hyperlink_is_redacted_out_of_band(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CTXPRESS_REDACT_OUTPUT", "true")
    content = f"see {LINK} for details\n\x1b[32mok\x1b[0m done\n"
    record = _compress(tmp_path, content)
    assert record["content"] == "see build log for details\nok done\n"
    entries = _ansi_entries(record)
    assert len(entries) == 1 and TOKEN not in entries[0]
    assert "[REDACTED" in entries[0]
    # the entry still parses: expand puts the colours (and the redacted link) back
    assert ansi.parse(entries[0].partition("=")[2]) is not None
    assert TOKEN.encode() not in orjson.dumps(record)
    comp = record["compression"]
    assert isinstance(comp, dict) and comp["secrets_redacted"] == 1


def test_a_unit_whose_visible_secret_was_redacted_loses_its_colours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the entry counts the secret's characters: on the redacted text the colours would
    # land on other characters, so the unit keeps none
    monkeypatch.setenv("CTXPRESS_REDACT_OUTPUT", "true")
    content = f"AWS_SECRET_ACCESS_KEY={KEY_VALUE}\n\x1b[31merror\x1b[0m: failed\n"
    record = _compress(tmp_path, content)
    assert record["content"] == "AWS_SECRET_ACCESS_KEY=[REDACTED:kv_secret]\nerror: failed\n"
    assert _ansi_entries(record) == []


def test_the_entry_is_kept_as_written_by_default(tmp_path: Path) -> None:
    record = _compress(tmp_path, f"see {LINK} for details\n")
    entries = _ansi_entries(record)
    assert len(entries) == 1 and TOKEN in entries[0]
