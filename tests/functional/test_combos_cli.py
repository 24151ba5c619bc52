"""``ctxpress compress`` with combos and mode auto: which engines ran, said in the stats."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.conftest import REPO, SAMPLE
from workers.cli import main
from workers.core.catalog import LOSSLESS
from workers.pipeline.autotrigger import Thresholds

COMBOS = """
[combos.tables]
engines = ["jsontable"]

[combos.filters]
engines = ["dedup", "toolfilter"]

[select]
tenant_field = "metadata.tenant"
tenants = { acme = "filters" }
"""


def read(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def compress(tmp_path: Path, *args: str, src: Path = SAMPLE) -> tuple[int, list[dict[str, Any]]]:
    stats = tmp_path / "stats.jsonl"
    code = main(
        ["compress", "-i", str(src), "-o", str(tmp_path / "out.jsonl"), "--stats", str(stats),
         "--dead-letter", str(tmp_path / "dlq.jsonl"), "--quiet", *args]
    )  # fmt: skip
    return code, read(stats) if stats.exists() else []


@pytest.fixture
def combos(tmp_path: Path) -> Path:
    path = tmp_path / "combos.toml"
    path.write_text(COMBOS)
    return path


def test_a_combo_file_changes_which_engines_ran(tmp_path: Path, combos: Path) -> None:
    code, plain = compress(tmp_path, "--mode", "lossless")
    assert code == 0 and plain
    assert {tuple(e["engine"] for e in s["engines"]) for s in plain} == {LOSSLESS}
    assert all("combo" not in s and "route" not in s for s in plain)
    code, combo = compress(tmp_path, "--combos", str(combos), "--combo", "tables")
    assert code == 0
    assert [s["id"] for s in combo] == [s["id"] for s in plain]
    assert {tuple(e["engine"] for e in s["engines"]) for s in combo} == {("jsontable",)}
    assert {s["combo"] for s in combo} == {"tables"}
    assert {s["mode"] for s in combo} == {"lossless"}
    assert all(s["route"] == {"source": "default", "combo": "tables"} for s in combo)
    # jsontable's own savings are the same with or without the other engines around it
    assert any("jsontable" in s["engines_applied"] for s in combo)
    records = read(tmp_path / "out.jsonl")
    assert all(r["compression"]["combo"] == "tables" for r in records)


def test_a_record_field_and_a_tenant_pick_their_combo(tmp_path: Path, combos: Path) -> None:
    lines = SAMPLE.read_bytes().splitlines()
    mixed = []
    for n, line in enumerate(lines):
        try:
            record = json.loads(line)
        except ValueError:  # a sample line that is a dead letter on purpose
            mixed.append(line.decode())
            continue
        if not isinstance(record, dict):
            mixed.append(line.decode())
            continue
        if n % 3 == 0:
            record["combo"] = "tables"
        elif n % 3 == 1:
            record["metadata"] = {"tenant": "acme"}
        mixed.append(json.dumps(record))
    src = tmp_path / "mixed.jsonl"
    src.write_text("\n".join(mixed) + "\n")
    code, stats = compress(tmp_path, "--combos", str(combos), src=src)
    assert code == 0
    by_id = {s["id"]: s for s in stats}
    seen = set()
    for n, line in enumerate(mixed):
        try:
            rid = json.loads(line).get("id")
        except (ValueError, AttributeError):
            continue
        if rid not in by_id:
            continue
        s = by_id[rid]
        engines = [e["engine"] for e in s["engines"]]
        if n % 3 == 0:
            assert (engines, s["route"]["source"]) == (["jsontable"], "record field")
        elif n % 3 == 1:
            assert (engines, s["route"]) == (
                ["dedup", "toolfilter"],
                {"source": "tenant", "tenant": "acme", "combo": "filters"},
            )
            assert s["mode"] == "standard"
        else:
            assert engines == list(LOSSLESS) and "route" not in s
        seen.add(n % 3)
    assert seen == {0, 1, 2}


def test_a_lossless_combo_expands_back_byte_for_byte(tmp_path: Path, combos: Path) -> None:
    assert compress(tmp_path, "--combos", str(combos), "--combo", "tables")[0] == 0
    restored = tmp_path / "restored.jsonl"
    assert main(["expand", "-i", str(tmp_path / "out.jsonl"), "-o", str(restored)]) == 0
    good = [line for line in SAMPLE.read_bytes().splitlines() if line.strip()]
    written = restored.read_bytes().splitlines()
    assert written and all(line in good for line in written)
    assert len(written) == len(read(tmp_path / "out.jsonl"))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--combo", "nope"], "is not a combo of"),
        (["--combo", "nope"], "valid combos: tables, filters"),
        (["--combos", "missing.toml"], "combos file 'missing.toml' does not exist"),
        (["--combo", "tables", "--combos", ""], "needs CTXPRESS_COMBOS_FILE"),
    ],
)
def test_unknown_names_fail_at_start_up_with_the_valid_ones(
    tmp_path: Path, combos: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    if "--combos" not in args:
        args = ["--combos", str(combos), *args]
    code, _ = compress(tmp_path, *args)
    assert code == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.startswith("ctxpress compress: ") and "Traceback" not in err
    assert not (tmp_path / "out.jsonl").exists()


def test_a_bad_engine_option_fails_at_start_up(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[combos.b]\nengines = ["budget"]\noptions.budget = { tokens = 10 }\n')
    code, _ = compress(tmp_path, "--combos", str(path))
    assert code == 2
    err = capsys.readouterr().err
    assert "unknown option 'tokens'; valid options: language, budget_tokens" in err


def test_mode_auto_follows_the_token_count(tmp_path: Path) -> None:
    code, stats = compress(tmp_path, "--mode", "auto")
    assert code == 0 and stats
    rules = Thresholds()
    modes = set()
    for s in stats:
        assert s["route"]["source"] == "threshold"
        assert s["route"]["requested_by"] == "default"
        assert s["route"]["tokens"] == s["tokens_before"]
        assert s["mode"] == s["route"]["mode"] == rules.decide(s["tokens_before"]).mode
        modes.add(s["mode"])
    assert len(modes) >= 2  # the sample has small and large records


def test_auto_thresholds_come_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CTXPRESS_AUTO_OFF_BELOW", "0")
    monkeypatch.setenv("CTXPRESS_AUTO_LOSSLESS_BELOW", "10000000")
    code, stats = compress(tmp_path, "--mode", "auto")
    assert code == 0
    assert {s["mode"] for s in stats} == {"lossless"}


def test_help_documents_combos_and_auto(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["compress", "--help"])
    out = capsys.readouterr().out
    assert "--combos FILE" in out and "--combo NAME" in out and "auto" in out
    assert "CTXPRESS_AUTO_LOSSLESS_BELOW" in out
    with pytest.raises(SystemExit):
        main(["worker", "--help"])
    out = capsys.readouterr().out
    assert "ctxpress.combo header" in out and "CTXPRESS_COMBOS_FILE" in out
    assert "CTXPRESS_AUTO_AGGRESSIVE_SHARE" in out


def readme_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    section = text.split("## Pipelines as configuration", 1)[1].split("\n## ", 1)[0]
    block = section.split("```bash\n", 1)[1].split("```", 1)[0]
    return [line.split("  #", 1)[0].strip() for line in block.splitlines()]


def test_the_readme_commands_run_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commands = [c for c in readme_commands() if c.startswith("ctxpress compress")]
    assert len(commands) == 2
    (tmp_path / "samples").mkdir()
    os.symlink(SAMPLE, tmp_path / "samples" / "sample.jsonl")
    os.symlink(REPO / "combos.toml", tmp_path / "combos.toml")
    monkeypatch.chdir(tmp_path)
    for command in commands:
        argv = shlex.split(command)
        assert main([*argv[1:], "--quiet"]) == 0, command
    light = read(tmp_path / "light-stats.jsonl")
    assert light and {s["combo"] for s in light} == {"tool-outputs-light"}
    assert {e["engine"] for s in light for e in s["engines"]} == {
        "dedup", "ansi", "jsontable", "jsonminify", "toolfilter", "logtemplate"
    }  # fmt: skip
    auto = read(tmp_path / "auto-stats.jsonl")
    assert auto and all(s["route"]["source"] == "threshold" for s in auto)


def test_jobs_give_the_same_bytes_with_combos(tmp_path: Path, combos: Path) -> None:
    rows = [{"id": i, "name": f"n{i}", "ok": i % 2 == 0} for i in range(8)]
    src = tmp_path / "many.jsonl"
    lines = []
    for i in range(300):
        record: dict[str, Any] = {
            "id": f"r{i}",
            "kind": "tool_output",
            "content": json.dumps(rows, indent=2),
        }
        if i % 2:
            record["combo"] = "tables"
        if i % 5 == 0:
            record["metadata"] = {"tenant": "acme"}
        lines.append(json.dumps(record))
    src.write_text("\n".join(lines) + "\n")
    outs = []
    for jobs in ("1", "2"):
        (tmp_path / "out.jsonl").unlink(missing_ok=True)
        (tmp_path / "stats.jsonl").unlink(missing_ok=True)
        code, stats = compress(tmp_path, "--combos", str(combos), "--jobs", jobs, src=src)
        assert code == 0 and len(stats) == 300
        outs.append((tmp_path / "out.jsonl").read_bytes())
    assert outs[0] == outs[1]
    combos_seen = {r["compression"].get("combo") for r in read(tmp_path / "out.jsonl")}
    assert combos_seen == {"tables", "filters", None}


def test_topic_rules_follow_the_topic_produce_would_pick(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(
        '[combos.t]\nengines = ["jsontable"]\n[select]\ntopics = { tool-outputs = "t" }\n'
    )
    rows = json.dumps([{"id": i, "name": f"n{i}", "ok": True} for i in range(10)], indent=2)
    src = tmp_path / "in.jsonl"
    src.write_text(
        json.dumps({"id": "tool", "kind": "tool_output", "content": rows})
        + "\n"
        + json.dumps({"id": "chat", "messages": [{"role": "user", "content": rows}]})
        + "\n"
    )
    code, stats = compress(tmp_path, "--combos", str(path), src=src)
    assert code == 0
    tool, chat = stats
    assert tool["route"] == {"source": "topic", "topic": "tool-outputs", "combo": "t"}
    assert [e["engine"] for e in tool["engines"]] == ["jsontable"]
    assert "route" not in chat and chat["mode"] == "lossless"


def test_a_lossy_combo_without_offload_gets_the_note(
    tmp_path: Path, combos: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert compress(tmp_path, "--mode", "lossless")[0] == 0
    assert "no --offload DIR given" not in capsys.readouterr().err
    assert compress(tmp_path, "--combos", str(combos))[0] == 0  # 'filters' is lossy
    assert "no --offload DIR given" in capsys.readouterr().err
