"""``ctxpress stats``: savings per mode, engine and command family, money and a chart."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.conftest import SAMPLE
from workers.cli import main

CTXPRESS = Path(sys.executable).with_name("ctxpress")


def _step(
    engine: str, before: int, after: int, status: str = "applied", **details: object
) -> dict[str, object]:
    return {"engine": engine, "status": status, "tokens_before": before, "tokens_after": after,
            "details": details}  # fmt: skip


RECORDS = [
    {"id": "a", "mode": "standard", "tokens_before": 1000, "tokens_after": 200,
     "engines": [_step("dedup", 1000, 1000, "unchanged"),
                 _step("toolfilter", 1000, 200, filters_hit={"pytest": 3, "git": 1})]},
    {"id": "b", "mode": "standard", "tokens_before": 500, "tokens_after": 300,
     "engines": [_step("jsontable", 500, 300, tables=1)]},
    {"id": "c", "mode": "lossless", "tokens_before": 400, "tokens_after": 400, "engines": []},
    {"id": "d", "mode": "aggressive", "tokens_before": 2000, "tokens_after": 500,
     "engines": [_step("jsontable", 2000, 1500),
                 _step("smartcrush", 1500, 500),
                 _step("outline", 500, 480, "fidelity")]},
]  # fmt: skip


def _write(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    assert main(["stats", *argv, "--json"]) == 0
    data: dict[str, object] = orjson.loads(capsys.readouterr().out)
    return data


def test_sums_per_mode_engine_family_and_money(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stats = _write(tmp_path / "stats.jsonl", RECORDS)
    data = _json(capsys, "-i", str(stats), "--price-per-million", "3")
    assert data["total"] == {"records": 4, "tokens_before": 3900, "tokens_after": 1400,
                             "tokens_saved": 2500, "saved_pct": 64.1, "usd_saved": 0.0075}  # fmt: skip
    modes = data["modes"]
    assert isinstance(modes, dict)
    assert modes["standard"] == {"records": 2, "tokens_before": 1500, "tokens_after": 500,
                                 "tokens_saved": 1000, "saved_pct": 66.7, "usd_saved": 0.003}  # fmt: skip
    assert modes["lossless"]["tokens_saved"] == 0 and modes["lossless"]["records"] == 1
    assert modes["aggressive"]["usd_saved"] == 0.0045
    engines = data["engines"]
    assert isinstance(engines, dict)
    assert set(engines) == {"toolfilter", "jsontable", "smartcrush"}  # only applied steps count
    assert engines["jsontable"] == {"records": 2, "tokens_before": 2500, "tokens_after": 1800,
                                    "tokens_saved": 700, "saved_pct": 28.0, "usd_saved": 0.0021}  # fmt: skip
    assert engines["smartcrush"]["tokens_saved"] == 1000
    families = data["families"]
    assert isinstance(families, dict)
    # toolfilter's 800 saved tokens split 3:1 between pytest and git
    assert families["pytest"]["tokens_saved"] == 600 and families["git"]["tokens_saved"] == 200
    assert families["pytest"]["usd_saved"] == 0.0018
    assert data["price_per_million_usd"] == 3.0


def test_no_price_no_money_and_no_family_table_without_filters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stats = _write(tmp_path / "stats.jsonl", RECORDS[1:])
    data = _json(capsys, "-i", str(stats))
    assert "families" not in data and "price_per_million_usd" not in data
    assert "usd_saved" not in data["total"]  # type: ignore[operator]
    assert main(["stats", "-i", str(stats)]) == 0
    out = capsys.readouterr().out
    assert "USD saved" not in out and "command family" not in out
    assert "engine" in out and "jsontable" in out


def test_table_has_the_money_column_and_total(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stats = _write(tmp_path / "stats.jsonl", RECORDS)
    assert main(["stats", "-i", str(stats), "--price-per-million", "3"]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.strip()}
    assert rows["total"][1:] == ["4", "3,900", "1,400", "2,500", "64.1%", "0.0075"]
    assert rows["jsontable"][1:] == ["2", "2,500", "1,800", "700", "28.0%", "0.0021"]
    assert rows["pytest"][-1] == "0.0018"
    assert "2,500 tokens saved at $3 per million tokens: $0.0075" in out


def test_bad_line_is_one_line_naming_it_exit_2(tmp_path: Path) -> None:
    stats = tmp_path / "stats.jsonl"
    stats.write_bytes(orjson.dumps(RECORDS[0]) + b"\n" + b"{not json\n")
    done = subprocess.run([str(CTXPRESS), "stats", "-i", str(stats)], capture_output=True,
                          text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "line 2" in done.stderr and str(stats) in done.stderr
    _write(stats, [{"id": "x", "mode": "standard", "tokens_before": "many", "tokens_after": 1}])
    assert main(["stats", "-i", str(stats)]) == 2


def test_readme_command_over_a_real_compress_run(tmp_path: Path) -> None:
    """The README line: ``ctxpress stats -i stats.jsonl --price-per-million 3 --chart``."""
    code = main(["compress", "--mode", "standard", "-i", str(SAMPLE),
                 "-o", str(tmp_path / "small.jsonl"), "--stats", str(tmp_path / "stats.jsonl")])  # fmt: skip
    assert code == 0
    records = [orjson.loads(x) for x in (tmp_path / "stats.jsonl").read_bytes().splitlines()]
    saved: dict[str, int] = {}
    for r in records:
        for step in r["engines"]:
            if step["status"] == "applied":
                gain = step["tokens_before"] - step["tokens_after"]
                saved[step["engine"]] = saved.get(step["engine"], 0) + gain
    total = sum(r["tokens_before"] - r["tokens_after"] for r in records)
    assert total > 0 and saved
    done = subprocess.run(
        [str(CTXPRESS), "stats", "-i", "stats.jsonl", "--price-per-million", "3", "--chart"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert f"{total:,} tokens saved at $3 per million tokens: ${total * 3 / 1e6:,.4f}" in out
    chart = out.split("tokens saved per engine\n", 1)[1].splitlines()
    bars = {line.split()[0]: line for line in chart}
    assert set(bars) == {e for e, n in saved.items() if n > 0}
    top = max(saved, key=lambda e: saved[e])
    assert bars[top].count("█") == 40 and bars[top].endswith(f"{saved[top]:,}")
    for engine, line in bars.items():
        assert line.count("█") == max(1, round(40 * saved[engine] / saved[top]))


def test_help_explains_every_option() -> None:
    done = subprocess.run([str(CTXPRESS), "stats", "--help"], capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0
    for option in ("--input", "--price-per-million", "--chart", "--json"):
        assert option in done.stdout
    assert "command family" in done.stdout and "USD saved" in done.stdout


def test_stats_topic_rows_become_records() -> None:
    from workers.pipeline.stats_report import records_from_engine_rows, summarize

    def row(rid: str, engine: str, before: int, after: int, status: str = "applied") -> bytes:
        return orjson.dumps(
            {"record_id": rid, "mode": "standard", "engine": engine, "status": status,
             "tokens_before": before, "tokens_after": after, "details": {}}
        )  # fmt: skip

    rows = [
        row("a", "dedup", 100, 90),
        row("a", "toolfilter", 90, 40),
        row("b", "dedup", 50, 50, "unchanged"),
        row("b", "toolfilter", 50, 30),
        row("b", "dedup", 50, 50, "unchanged"),  # b processed again (a replay): a new record
        row("b", "toolfilter", 50, 30),
    ]
    records = [orjson.loads(r) for r in records_from_engine_rows(rows)]
    assert [(r["record_id"], r["tokens_before"], r["tokens_after"]) for r in records] == [
        ("a", 100, 40),
        ("b", 50, 30),
        ("b", 50, 30),
    ]
    report = summarize(orjson.dumps(r) for r in records).as_json()
    assert report["total"]["tokens_saved"] == 60 + 20 + 20
    assert report["engines"]["toolfilter"]["records"] == 3
    assert report["engines"]["dedup"]["tokens_saved"] == 10
