"""smartcrush: long JSON arrays keep first/last, error items, outliers and the knee."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from workers.core.tokens import TokenCounter
from workers.engines.base import EngineContext
from workers.engines.smartcrush import SmartCrushEngine, crush_text
from workers.messages.model import Unit
from workers.testing import check_corpus_changes, expanded, make_unit

CTX = EngineContext(tokens=TokenCounter())
OMITTED = re.compile(
    r"… (\d+) of (\d+) (?:items|rows) omitted(?: \([^)\n]*\))? <<cx:[0-9a-f]{16}>>"
)


def tool(i: int, text: str, command: str | None = "curl -s api/items", **kw: Any) -> Unit:
    return make_unit(i, text, command=command, tool_name="bash", **kw)


def items(n: int = 200) -> list[dict[str, Any]]:
    return [
        {"id": i, "name": f"worker-{i}", "region": "eu-west", "latency_ms": 20 + i % 7}
        for i in range(n)
    ]


def omitted(text: str) -> int:
    return sum(int(m.group(1)) for m in OMITTED.finditer(text))


def test_keeps_first_last_error_and_outlier_items_and_restores() -> None:
    data = items()
    data[57]["error"] = "connection reset by peer"
    data[120]["latency_ms"] = 9000
    data[150]["status"] = 503
    text = json.dumps(data, indent=2)
    result = crush_text(text, CTX)
    assert result is not None
    new = result.text
    for kept in (0, 57, 120, 150, 199):
        assert json.dumps(data[kept], indent=2).replace("\n", "\n  ") in new
    assert '"name": "worker-100"' not in new
    assert result.total == 200
    assert result.kept == 200 - omitted(new)
    assert all(m.group(2) == "200" for m in OMITTED.finditer(new))
    assert expanded(new, result.stash) == text


def test_severity_and_false_success_flags_are_error_signals() -> None:
    data = items()
    data[10]["severity"] = "CRITICAL"
    data[20]["success"] = False
    data[30]["level"] = "fatal"
    new = crush_text(json.dumps(data), CTX)
    assert new is not None
    for kept in (10, 20, 30):
        assert json.dumps(data[kept]) in new.text


def test_string_arrays_stay_valid_json() -> None:
    paths = [f"src/module_{i:03d}/file_{i}.py" for i in range(300)]
    text = json.dumps({"files": paths})
    result = crush_text(text, CTX)
    assert result is not None
    value = json.loads(result.text)
    files = value["files"]
    assert files[0] == paths[0] and files[-1] == paths[-1]
    assert any(OMITTED.fullmatch(f) for f in files)
    assert expanded(result.text, result.stash) == text


def test_json_table_rows_are_crushed_with_one_marker_line_per_run() -> None:
    rows = [f'[{i},"node-{i}","Ready",{100 + i % 3}]' for i in range(120)]
    rows[60] = '[60,"node-60","NotReady: error pulling image",101]'
    header = '[[json-table:v1 columns=["id","name","status","cpu"] rows=120]]'
    text = "\n".join([header, *rows, "[[/json-table]]"])
    result = crush_text(text, CTX)
    assert result is not None
    lines = result.text.split("\n")
    assert lines[0] == header
    assert lines[1] == rows[0] and lines[-2] == rows[-1] and lines[-1] == "[[/json-table]]"
    assert rows[60] in lines
    assert all(OMITTED.fullmatch(ln) or ln in rows for ln in lines[1:-1])
    assert omitted(result.text) == 120 - result.kept
    assert expanded(result.text, result.stash) == text


def test_json_min_payload_is_crushed_in_place() -> None:
    payload = json.dumps(items(), separators=(",", ":"))
    text = f"[[json-min:v1 indent=2]]{payload}[[/json-min]]"
    result = crush_text(text, CTX)
    assert result is not None
    assert result.text.startswith("[[json-min:v1 indent=2]][{")
    assert result.text.endswith("}][[/json-min]]")
    assert expanded(result.text, result.stash) == text


def test_nested_arrays_inside_a_document() -> None:
    doc = {"total": 200, "page": 1, "data": items(), "meta": {"tags": ["a", "b"]}}
    text = json.dumps(doc, indent=2)
    result = crush_text(text, CTX)
    assert result is not None
    assert '"total": 200' in result.text and '"tags": [' in result.text
    assert expanded(result.text, result.stash) == text


def test_small_arrays_and_non_json_are_left_alone() -> None:
    assert crush_text(json.dumps(items(4), indent=2), CTX) is None  # fewer than 5 items
    assert crush_text(json.dumps([1, 2, 3, 4, 5, 6, 7]), CTX) is None  # fewer than 200 tokens
    assert crush_text("[INFO] started\n" * 100, CTX) is None


def test_knee_adapts_to_the_variety_of_the_array() -> None:
    def kept(categories: int) -> int:
        data = [{"id": i, "kind": f"kind-{chr(65 + i % categories)}", "x": 1} for i in range(300)]
        result = crush_text(json.dumps(data), CTX)
        assert result is not None
        return result.kept

    assert kept(2) < kept(12) < kept(26)


def test_engine_skips_frozen_prose_and_file_reads() -> None:
    text = json.dumps(items(), indent=2)
    units = [
        tool(1, text, frozen=True),
        make_unit(2, text, kind="text", role="user"),
        tool(3, text, command="cat data/items.json"),
        tool(4, text),
    ]
    out = SmartCrushEngine().apply(units, CTX)
    assert out.texts[:3] == [text, text, text]
    assert out.texts[3] != text
    assert out.details["arrays_crushed"] == 1
    assert out.details["items_total"] == 200
    assert expanded(out.texts[3], out.stash) == text


def test_error_item_deep_in_a_minified_line_is_kept() -> None:
    data = items(400)
    data[333]["result"] = {"conclusion": "failure", "log": "step 4"}
    text = json.dumps(data, separators=(",", ":"))
    result = crush_text(text, CTX)
    assert result is not None
    assert json.dumps(data[333], separators=(",", ":")) in result.text


@pytest.mark.slow
def test_corpus_every_change_expands_back_and_passes_the_gate(corpus_lines: list[bytes]) -> None:
    assert check_corpus_changes(SmartCrushEngine(), corpus_lines, CTX, chained=True)


def test_an_integer_beyond_float_range_does_not_stop_outlier_detection() -> None:
    from workers.engines.smartcrush import _outlier_indexes

    column = [1, 2, 3, 2, 1, 2, 3, 10**400, 1000, 2, 1, 2]  # 10**400: float() overflows
    assert _outlier_indexes(column, len(column)) == [8]


def test_a_linters_findings_as_json_all_stay() -> None:
    """golangci-lint's ``--out-format json`` (a rule, a message and a place in each item): every
    finding is a fact; held-out set 8 lost ``ineffectual assignment to err`` as ``… 1 of 9 items
    omitted`` while the list of enabled linters stayed."""
    issues = [
        {
            "FromLinter": ("errcheck", "ineffassign", "revive")[k % 3],
            "Text": f"finding number {k} in the handler",
            "Severity": "",
            "Pos": {"Filename": f"pkg/h{k % 4}.go", "Line": 10 + k, "Column": 2},
        }
        for k in range(30)
    ]
    linters = [
        {"Name": f"linter{k}", "Enabled": k % 2 == 0, "Presets": ["style"]} for k in range(120)
    ]
    text = json.dumps({"Issues": issues, "Report": {"Linters": linters}})
    result = crush_text(text, CTX)
    assert result is not None
    for issue in issues:
        assert json.dumps(issue) in result.text
    assert '"Name": "linter60"' not in result.text
    assert expanded(result.text, result.stash) == text


def test_an_omitted_run_names_its_items_by_their_ids() -> None:
    """Held-out set 23: a page of nine invoices kept four; the five others' ids
    (``inv_00002`` ...) were out of sight, and they are what the next request names."""
    data = [
        {
            "id": f"inv_{i:05d}",
            "customer": {"id": f"cus_{i % 4}", "name": "Initech", "country": "FR"},
            "lines": [{"sku": f"SKU-{100 + i}", "quantity": i % 5 + 1}],
            "total": 1000 + 37 * i,
        }
        for i in range(1, 41)
    ]
    text = json.dumps(data, indent=2)
    result = crush_text(text, CTX)
    assert result is not None
    named: list[str] = []
    for m in re.finditer(r"… (\d+) of 40 items omitted \(id ([^)]*)\) <<cx:", result.text):
        span = re.fullmatch(r"inv_(\d{5})–inv_(\d{5})", m.group(2))
        if span is not None:  # consecutive ids: a range
            ids = [f"inv_{k:05d}" for k in range(int(span.group(1)), int(span.group(2)) + 1)]
        else:
            ids = m.group(2).split(", ")
        assert all(re.fullmatch(r"inv_\d{5}", i) for i in ids)
        assert len(ids) == int(m.group(1))
        named += ids
    assert named and all(f'"id": "{i}"' not in result.text for i in named)
    assert expanded(result.text, result.stash) == text
