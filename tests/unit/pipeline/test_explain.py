"""``compress --explain`` and ``bench``'s family table: family, line fates, facts per tool output."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.conftest import SAMPLE
from tests.unit.engines.test_content_detection import _PYTEST_V
from workers.cli import main
from workers.cli.bench import family_table

_RECORDS = [
    {"id": "t1", "kind": "tool_output", "command": "python -m pytest -v", "content": _PYTEST_V},
    {"id": "t2", "kind": "tool_output", "command": "bash -c ./ci.sh", "content": _PYTEST_V},
    {"id": "t3", "kind": "tool_output", "command": "echo hi", "content": "hi\n"},
]


def _write(tmp_path: Path) -> Path:
    path = tmp_path / "in.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in _RECORDS))
    return path


def test_explain_names_family_and_line_fates_and_changes_nothing_else(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _write(tmp_path)
    plain, explained, report = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "x.jsonl"
    base = ["compress", "--mode", "standard", "-i", str(src)]
    assert main([*base, "-o", str(plain), "--quiet"]) == 0
    assert main([*base, "-o", str(explained), "--explain", str(report)]) == 0
    strip = [
        {k: v for k, v in orjson.loads(x).items() if k != "compression"}
        for x in plain.read_bytes().splitlines()
    ]
    assert strip == [
        {k: v for k, v in orjson.loads(x).items() if k != "compression"}
        for x in explained.read_bytes().splitlines()
    ]
    rows = [orjson.loads(x) for x in report.read_bytes().splitlines()]
    assert [(r["id"], r["family"], r["detected_by"]) for r in rows] == [
        ("t1", "pytest", "command"),
        ("t2", "pytest", "output"),
        ("t3", "unknown", "none"),
    ]
    first = rows[0]
    assert first["lines"] == 67  # non-blank input lines
    assert first["kept"] + first["collapsed"] + first["stashed"] + first["rewritten"] == 67
    assert first["kept"] >= 7  # header, failures, summary lines
    assert first["collapsed"] + first["stashed"] >= 40  # PASSED lines
    assert first["markers"] >= 1
    assert first["facts"] == first["facts_kept"] > 0
    assert first["tokens_after"] < first["tokens_before"] and first["saved_pct"] > 30
    assert rows[1]["tokens_after"] == first["tokens_after"]  # same output, same compression
    assert rows[2]["note"] == "shorter than 400 characters: not filtered"
    assert (rows[2]["kept"], rows[2]["markers"], rows[2]["saved_pct"]) == (1, 0, 0.0)
    err = capsys.readouterr().err
    assert "family" in err and "detected by" in err
    assert "pytest                   2" in err


def test_bench_reports_savings_per_family(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            ["bench", "-i", str(SAMPLE), "--modes", "lossless,standard", "--json", "--repeat", "1"]
        )
        == 0
    )
    rows = [orjson.loads(line) for line in capsys.readouterr().out.splitlines()]
    for row in rows:
        families = row["families"]
        assert sum(f["tokens_before"] for f in families.values()) == row["tokens_before"]
        assert sum(f["tokens_after"] for f in families.values()) == row["tokens_after"]
        assert sum(f["facts"] for f in families.values()) == row["facts"]
        assert sum(f["facts_kept"] for f in families.values()) == row["facts_visible"]
    table = family_table(rows)
    assert table[0] == "savings per output family"
    assert "lossless" in table[1] and "standard" in table[1]
    assert len(table) == 3 + len(rows[0]["families"])
    assert (
        main(
            [
                "bench",
                "-i",
                str(SAMPLE),
                "--modes",
                "lossless",
                "--json",
                "--repeat",
                "1",
                "--no-families",
            ]
        )
        == 0
    )
    assert "families" not in orjson.loads(capsys.readouterr().out)


def test_coloured_lines_that_stay_count_as_kept(tmp_path: Path) -> None:
    # tsc --pretty with colours: the ansi engine keeps the escapes out of band, so the
    # headlines stay as they were written once the colours are taken off, and the code
    # frames are in the view's stash
    tsc = (
        Path(__file__).resolve().parents[2] / "data" / "toolfilter" / "tsc-pretty.txt"
    ).read_text(encoding="utf-8")
    src, report = tmp_path / "in.jsonl", tmp_path / "x.jsonl"
    record = {"id": "c", "kind": "tool_output", "command": "npx tsc --pretty", "content": tsc}
    src.write_bytes(orjson.dumps(record) + b"\n")
    out = tmp_path / "out.jsonl"
    argv = ["compress", "--mode", "standard", "-i", str(src), "-o", str(out), "--quiet"]
    assert main([*argv, "--explain", str(report)]) == 0
    row = orjson.loads(report.read_bytes().splitlines()[0])
    assert row["rewritten"] == 0
    assert row["kept"] >= 17 and row["stashed"] >= 30


def test_a_read_another_engine_shortened_is_not_called_left_alone(tmp_path: Path) -> None:
    # a big .jsonl read: the tool filter leaves file reads alone, smartcrush shortens it
    rows = [
        orjson.dumps({"path": f"/api/orders/{k}", "code": 503 if k % 97 == 7 else 200}).decode()
        for k in range(2000)
    ]
    record = {"id": "r1", "kind": "tool_output", "command": "cat out/access.jsonl"}
    record["content"] = "\n".join(rows) + "\n"
    small = {"id": "r2", "kind": "tool_output", "command": "cat notes.txt", "content": "x\n" * 300}
    path = tmp_path / "in.jsonl"
    path.write_bytes(orjson.dumps(record) + b"\n" + orjson.dumps(small) + b"\n")
    explain = tmp_path / "explain.jsonl"
    args = ["compress", "-i", str(path), "-o", str(tmp_path / "out.jsonl"), "--mode", "standard"]
    assert main([*args, "--explain", str(explain), "--quiet"]) == 0
    rows_out = [orjson.loads(line) for line in explain.read_bytes().splitlines()]
    big = next(r for r in rows_out if r["id"] == "r1")
    assert big["tokens_after"] < big["tokens_before"] / 3
    assert big["note"] == "the tool filter leaves it; other engines shortened it"
    left = next(r for r in rows_out if r["id"] == "r2")
    assert left["tokens_after"] == left["tokens_before"] and left["note"] == "left alone"
