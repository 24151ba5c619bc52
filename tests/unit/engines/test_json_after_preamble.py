"""A JSON report after a few lines of something else is the JSON engines', not a log's.

Held-out set 35 (Django): ``bandit -f json`` prints four ``[main]\\tINFO`` lines, then its
report; the tool filter read it as lines and kept its first 40 and last 10, so the findings
between (``"test_id": "B602"``, shell=True; ``"B608"``, SQL built from strings) went to the
stash.  Now the filter leaves it to the crusher, which reads the document after the preamble.
"""

from __future__ import annotations

import json

from tests.support.sound import compress_soundly, tool_output
from workers.engines._text import json_tail

PREAMBLE = "".join(
    f"[main]\tINFO\t{what}: None\n"
    for what in ("profile include tests", "profile exclude tests", "cli include tests")
)


def _report(items: int) -> str:
    results = [
        {
            "filename": f"catalog/views_{k % 7}.py",
            "issue_severity": "HIGH" if k == items // 2 else "LOW",
            "issue_text": "subprocess call with shell=True identified, security issue."
            if k == items // 2
            else "Consider possible security implications associated with the subprocess module.",
            "line_number": 10 + k,
            "test_id": "B602" if k == items // 2 else "B404",
        }
        for k in range(items)
    ]
    return PREAMBLE + json.dumps({"errors": [], "results": results}, indent=2) + "\n"


def test_the_document_after_the_preamble_is_found() -> None:
    text = _report(3)
    assert json_tail(text) == len(PREAMBLE)
    assert json_tail(text[len(PREAMBLE) :]) is None  # a whole document is no tail
    assert json_tail("a log line\n" * 50 + '{\n  "a": 1\n}\n') is None  # mostly not JSON


def test_a_small_report_keeps_every_findings_id_in_sight() -> None:
    text = _report(8)
    out, _ = compress_soundly(tool_output(text, "bandit -f json catalog/views.py"), "standard")
    assert '"test_id": "B602"' in out  # the HIGH finding whole
    assert out.count("B404") == 7  # the others whole or named in a note (``test_id B404, ...``)


def test_a_long_report_is_crushed_around_its_findings() -> None:
    text = _report(300)
    out, saved = compress_soundly(tool_output(text, "bandit -f json -r catalog"), "standard")
    assert out.startswith(PREAMBLE)
    assert "shell=True" in out  # the one HIGH finding stays
    assert saved > 0.5
