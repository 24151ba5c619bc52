"""Findings of Python tools that carry no error word are facts, so aggressive mode keeps them.

Captured on this machine from a small package written for the held-out Python set:

- ``bandit.txt``: ``bandit -q src/invtrack/admin.py`` (bandit 1.9): each issue's
  ``>> Issue: [B602:...]`` headline says what, its ``   Location: ./src/invtrack/admin.py:10:11``
  line says where;
- ``black-check.txt``: ``black --check src`` (black 26): each ``would reformat PATH`` line
  names a file that fails the check, ``8 files would be reformatted.`` counts them;
- ``pip-conflict.txt``: ``pip install 'urllib3<2' 'requests==2.32.3' 'botocore==1.35.0'
  'types-requests>=2.32.0.20240905'`` into a fresh venv (pip 25): the indented lines under
  ``The conflict is caused by:`` say why (``The user requested urllib3<2``), each of the 25
  ``types-requests X depends on urllib3>=2`` lines for another candidate (the gate reads them
  as one shape; aging and budget keep each: their versions differ);
- ``pytest-hypothesis-tb-line.txt``: ``pytest --tb=line -q tests/test_pricing.py`` with a
  hypothesis property that fails: ``Failing test case: test_line_total_monotonic(`` and its
  argument lines (``qty=200,``) are what reproduces the failure.

On the held-out set (holdout-d) aging condensed these outputs once answered, and with them
13 bandit locations, 13 ``would reformat`` lines, the falsifying arguments and pip's\n``The user requested urllib3<2``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from workers.core.settings import Settings
from workers.fidelity.facts import critical_lines
from workers.pipeline.runner import Pipeline
from workers.pipeline.visibility import lost_facts
from workers.testing import expanded_record

DATA = Path(__file__).resolve().parents[2] / "data" / "holdout-python"
CASES = {
    "bandit": ("bandit -q src/invtrack/admin.py", "Any security issues in admin.py?"),
    "black-check": ("black --check src", "Is the code formatted?"),
    "pip-conflict": (
        "pip install 'urllib3<2' 'requests==2.32.3' 'botocore==1.35.0' 'types-requests>=2.32.0.20240905'",
        "Pin urllib3 below 2 next to botocore and the requests stubs.",
    ),
    "pytest-hypothesis-tb-line": (
        "pytest --tb=line -q tests/test_pricing.py",
        "Run the pricing tests.",
    ),
}


def _text(name: str) -> str:
    return (DATA / f"{name}.txt").read_text(encoding="utf-8")


def _wanted(name: str) -> list[str]:
    text = _text(name)
    if name == "bandit":
        return [
            line.strip()
            for line in text.splitlines()
            if line.strip().startswith(("Location: ", ">> Issue: "))
        ]
    if name == "black-check":
        return [
            line
            for line in text.splitlines()
            if line.startswith("would reformat ") or line.endswith(" would be reformatted.")
        ]
    if name == "pip-conflict":  # the causes, and every candidate that conflicts
        return [
            "The user requested urllib3<2",
            "requests 2.32.3 depends on urllib3<3 and >=1.21.1",
            'botocore 1.35.0 depends on urllib3!=2.2.0, <3 and >=1.25.4; python_version >= "3.10"',
            *(line.strip() for line in text.splitlines() if " depends on urllib3>=2" in line),
        ]
    at = text.splitlines().index("    Failing test case: test_line_total_monotonic(")
    return [line.strip() for line in text.splitlines()[at : at + 3]]


def test_the_findings_are_facts() -> None:
    for name, (command, _) in CASES.items():
        facts = {line for _, line in critical_lines(_text(name), "tool_result", command)}
        wanted = _wanted(name)
        assert len(wanted) >= 3
        assert set(wanted) <= facts, name


def test_a_url_after_location_is_no_finding() -> None:
    text = "HTTP/1.1 301 Moved Permanently\nLocation: https://example.com:8443\n"
    assert not critical_lines(text, "tool_result", "curl -sI https://example.com")


def _answered(name: str) -> dict[str, Any]:
    command, ask = CASES[name]
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "bash", "arguments": json.dumps({"command": command})},
    }
    return {
        "id": name,
        "messages": [
            {"role": "user", "content": ask},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": _text(name)},
            {"role": "assistant", "content": "Reading the output now."},
        ],
    }


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_the_findings_stay_visible_once_answered(name: str, mode: str) -> None:
    record = _answered(name)
    outcome = Pipeline(Settings(mode=mode)).run_raw(record)
    assert outcome.rejections == []
    assert lost_facts(record, outcome.record) == []
    assert expanded_record(outcome) == record
    tool = outcome.record["messages"][2]["content"]
    for line in _wanted(name):
        assert line in tool
