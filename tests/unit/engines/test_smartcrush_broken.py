"""smartcrush on JSON documents that do not load: cut short (``head -c``, a harness that
truncates long outputs) or broken by other output written into them (curl's stderr in
its body).  The items that load are crushed; the partial or broken ones stay as written."""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from workers.core.settings import Settings
from workers.core.tokens import TokenCounter
from workers.engines.base import EngineContext
from workers.engines.smartcrush import crush_text
from workers.pipeline.runner import Pipeline
from workers.testing import expanded, expanded_record, openai_record

CTX = EngineContext(tokens=TokenCounter())
OMITTED = re.compile(
    r"… (\d+) of (\d+) (?:items|rows) omitted(?: \([^)\n]*\))? <<cx:[0-9a-f]{16}>>"
)


def tickets(n: int = 120) -> list[dict[str, Any]]:
    return [
        {
            "id": 88000 + i,
            "title": f"ticket {i}, queue [{i % 4}]",
            "status": "open",
            "requester": {"id": 5000 + i % 50, "email": f"user{i % 50}@example.org"},
            "tags": ["billing", "mail"][: i % 3],
        }
        for i in range(n)
    ]


def omitted(text: str) -> int:
    return sum(int(m.group(1)) for m in OMITTED.finditer(text))


def _tool_text(question: str, command: str, content: str, mode: str = "standard") -> str:
    """The compressed tool output of a one-call conversation, checked to expand back exactly."""
    data = openai_record("t", ("user", question), ("tool", content), command=command)
    outcome = Pipeline(Settings(mode=mode)).run_raw(json.loads(json.dumps(data)))
    assert expanded_record(outcome) == data
    return str(outcome.record["messages"][-1]["content"])


def test_minified_document_cut_short_keeps_its_partial_item() -> None:
    doc = json.dumps({"tickets": tickets(), "count": 120})
    text = doc[: len(doc) * 2 // 3]  # cut inside an item, inside a string
    assert json.loads(doc) and text[-1] != "}"
    result = crush_text(text, CTX)
    assert result is not None
    new = result.text
    assert omitted(new) >= 50
    tail = text[text.rindex(", {") :]  # the partial item after the last comma
    assert new.endswith(tail)
    assert new.startswith('{"tickets": [{"id": 88000, ')
    assert expanded(new, result.stash) == text


def test_pretty_document_cut_by_head_n() -> None:
    doc = json.dumps({"tickets": tickets()}, indent=2)
    text = "\n".join(doc.split("\n")[:700])
    result = crush_text(
        text, CTX, command="curl -s http://127.0.0.1:8080/api/tickets | head -n 700"
    )
    assert result is not None
    assert omitted(result.text) >= 40
    assert result.text.endswith(text[text.rindex("},") + 2 :])
    assert expanded(result.text, result.stash) == text


def test_curl_stderr_inside_the_body_stays_and_the_rest_is_crushed() -> None:
    body = json.dumps({"tickets": tickets()})
    cut = body.index('"email": "user30@example.org"') + 5
    verbose = (
        "*   Trying 127.0.0.1:7491...\n"
        "> GET /api/v2/tickets HTTP/1.1\r\n"
        "< HTTP/1.0 200 OK\r\n"
        "< Content-Type: application/json\r\n"
        "{ [102182 bytes data]\n"
    )
    text = verbose + body[:cut] + "* Closing connection 0\n" + body[cut:]
    result = crush_text(text, CTX, command="curl -v -s http://127.0.0.1:7491/api/v2/tickets")
    assert result is not None
    new = result.text
    assert new.startswith(verbose)
    broken = body[body.rindex("{", 0, cut) : cut] + "* Closing connection 0\n"
    assert broken in new  # the item curl wrote into stays as written
    assert omitted(new) >= 60
    assert expanded(new, result.stash) == text


def test_json_lines_and_bracketed_logs_are_no_broken_document() -> None:
    rows = [json.dumps({"ts": i, "msg": "tick", "ids": list(range(60))}) for i in range(40)]
    lines = "\n".join(rows)
    # JSON lines are crushed line by line (test_smartcrush_json_lines), never as a cut document
    result = crush_text(lines, CTX)
    assert result is not None
    assert expanded(result.text, result.stash) == lines
    for line in result.text.split("\n"):
        assert line in rows or re.fullmatch(
            r"… \d+ of 40 lines omitted(?: \([^)\n]*\))? <<cx:[0-9a-f]{16}>>", line
        )
    log = "\n".join(f"[INFO] worker {i}, queue {i % 3}, done [{i}, {i + 1}]" for i in range(300))
    assert crush_text(log, CTX) is None


@settings(max_examples=60, deadline=None)
@given(
    cut=st.floats(min_value=0.05, max_value=1.0),
    indent=st.sampled_from([None, 1, 2, 4]),
    noise=st.sampled_from(["", "* Closing connection 0\n", "\x00]}{,\n", '"\\']),
)
def test_any_cut_of_any_layout_expands_to_the_input(
    cut: float, indent: int | None, noise: str
) -> None:
    doc = json.dumps({"tickets": tickets(60), "next": None}, indent=indent, ensure_ascii=False)
    at = int(len(doc) * cut)
    text = doc[:at] + noise + doc[at:] if noise else doc[:at]
    result = crush_text(text, CTX)
    if result is not None:
        assert expanded(result.text, result.stash) == text
        assert len(result.text) < len(text)


def test_error_item_of_a_cut_document_stays_visible() -> None:
    data = tickets()
    data[33]["error"] = "upstream timeout after 30s"
    doc = json.dumps(data)
    text = doc[: len(doc) - 40]
    result = crush_text(text, CTX)
    assert result is not None
    assert json.dumps(data[33]) in result.text
    assert expanded(result.text, result.stash) == text


def test_the_pipeline_crushes_a_cut_response_and_expands_it_back() -> None:
    content = json.dumps({"tickets": tickets(200)})[:30000]
    command = "curl -s http://127.0.0.1:7491/api/v2/tickets | head -c 30000"
    counter = TokenCounter()
    for mode in ("standard", "aggressive"):
        visible = _tool_text("which tickets are open?", command, content, mode)
        assert counter.count(visible) < counter.count(content) * 0.2, mode


def test_items_the_request_names_stay() -> None:
    data = tickets()
    text = json.dumps({"tickets": data}, indent=2)
    plain = crush_text(text, CTX)
    assert plain is not None and '"id": 88057' not in plain.text
    asked = crush_text(text, CTX, terms=frozenset({"88057", "title", "ticket"}))
    assert asked is not None
    assert '"id": 88057' in asked.text  # one item holds it
    assert omitted(asked.text) == omitted(plain.text) - 1  # a word every item holds names none
    assert expanded(asked.text, asked.stash) == text


def test_a_document_behind_a_label_on_one_long_line() -> None:
    """``DATA [{...}]``: 377 KB on one line in held-out set 7; the tool filter capped the line
    at its start and the item the user asked about went with the rest."""
    rows = [
        {"id": k, "sku": f"SKU-{k:05d}", "qty": k % 9, "note": "x" * (k % 30)} for k in range(3000)
    ]
    rows[2400]["note"] = "ERROR: reservation expired for warehouse WH-D"
    content = "DATA " + json.dumps(rows, separators=(",", ":")) + "\n"
    result = crush_text(content, CTX)
    assert result is not None and result.text.startswith('DATA [{"id":0,')
    assert json.dumps(rows[2400], separators=(",", ":")) in result.text
    visible = _tool_text("Which item has the ERROR note?", "python3 dump_reservations.py", content)
    assert "ERROR: reservation expired for warehouse WH-D" in visible
    assert len(visible) < len(content) // 20


def test_a_big_data_file_read_is_crushed_and_a_document_before_other_output_too() -> None:
    """``cat out/pallets.json`` of 671 KB (held-out set 8): one JSON line, then the program's
    ``exit status 3`` line; a file read stays whole, except a data file this big, and the
    document before the other output is crushed by its items (the failed one stays)."""
    pallets = [{"i": k, "sku": f"SKU-{k}", "qty": k % 97} for k in range(3000)]
    pallets[2222]["error"] = "ERR-LINE-9921 checksum mismatch for pallet PAL-55102"
    content = json.dumps(pallets, separators=(",", ":")) + "\nexit status 3: 1 record(s) failed\n"
    assert _tool_text("Which pallet failed?", "cat src/pallets.py", content) == content  # code
    visible = _tool_text("Which pallet failed?", "cat out/pallets.json", content)
    assert "ERR-LINE-9921 checksum mismatch for pallet PAL-55102" in visible
    assert visible.endswith("exit status 3: 1 record(s) failed\n")
    counter = TokenCounter()
    assert counter.count(visible) < counter.count(content) * 0.05


def test_a_big_read_of_a_non_code_file_holding_json_is_crushed() -> None:
    """Set 7's ``cat out/reservations.txt``: 377 KB, ``DATA [{...}]`` on one line.  A read of a
    file that is no source code and holds a JSON document from its first line is shortened when
    it is big; a read of a source file stays whole whatever it holds."""
    rows = [{"id": k, "sku": f"SKU-{k:05d}", "note": "x" * (k % 30)} for k in range(2000)]
    rows[1500]["note"] = "ERROR: reservation expired for warehouse WH-D"
    content = "DATA " + json.dumps(rows, separators=(",", ":")) + "\n"
    visible = _tool_text("Which item has the ERROR note?", "cat out/reservations.txt", content)
    assert "ERROR: reservation expired for warehouse WH-D" in visible
    assert len(visible) < len(content) // 20
    assert _tool_text("Which item?", "cat src/reservations.py", content) == content
