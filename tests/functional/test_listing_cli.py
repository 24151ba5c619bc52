"""Listings through the batch CLI (issue 13): compress saves, every path stays visible, expand is exact."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from workers.cli import main
from workers.engines.listing import tree_paths
from workers.markers import prefix, template

REPO = Path(__file__).resolve().parents[2]


def _records() -> list[dict[str, str]]:
    if shutil.which("find") is None or shutil.which("ls") is None:
        pytest.skip("find and ls are needed")

    def run(*argv: str) -> str:
        return subprocess.run(argv, cwd=REPO, capture_output=True, text=True, check=True).stdout

    prune = ["-name", "__pycache__", "-prune", "-o"]
    return [
        {"id": "find", "command": "find workers", "content": run("find", "workers", *prune, "-print")},
        {"id": "ls-la", "command": "ls -la workers/engines", "content": run("ls", "-la", "workers/engines")},
        {
            "id": "find-ls",
            "command": "find workers/core -ls",
            "content": run("find", "workers/core", *prune, "-ls"),
        },
    ]  # fmt: skip


@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_listings_compress_keep_every_path_and_expand_exactly(tmp_path: Path, mode: str) -> None:
    records = [{"kind": "tool_output", **r} for r in _records()]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in records))
    out, back, stash = tmp_path / "out.jsonl", tmp_path / "back.jsonl", tmp_path / "stash"
    assert main(["compress", "--mode", mode, "-i", str(src), "-o", str(out), "--offload", str(stash), "--quiet"]) == 0  # fmt: skip
    assert main(["expand", "--offload", str(stash), "-i", str(out), "-o", str(back)]) == 0
    assert back.read_bytes() == src.read_bytes()
    outputs = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    for record in records:
        got = outputs[record["id"]]
        assert got["compression"]["saved_pct"] > 30, (record["id"], got["compression"])
    find_in = records[0]["content"].splitlines()
    shown = {p.rstrip("/") for p in tree_paths(outputs["find"]["content"])}
    assert set(find_in) <= shown
    view = outputs["ls-la"]["content"]
    names = {line.split(" ")[0].rstrip("/*") for line in view.splitlines()}
    for line in records[1]["content"].splitlines()[1:]:
        assert line.split()[-1] in names


def test_lossless_keeps_every_cell_of_a_listing_and_expands_byte_exact(tmp_path: Path) -> None:
    records = [{"kind": "tool_output", **r} for r in _records()]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in records))
    out, back = tmp_path / "out.jsonl", tmp_path / "back.jsonl"
    assert main(["compress", "--mode", "lossless", "-i", str(src), "-o", str(out), "--quiet"]) == 0
    for got, record in zip(map(json.loads, out.read_text().splitlines()), records, strict=True):
        # the column padding may go out of band (align), a run of rows of one template may be
        # a table of their values (template), and a run of rows that start alike may show its
        # start once, in its block's header (prefix); every cell stays
        content = template.decode(prefix.decode(got["content"]))
        shown = [line.split() for line in content.splitlines()]
        assert shown == [line.split() for line in record["content"].splitlines()]
    assert main(["expand", "-i", str(out), "-o", str(back)]) == 0
    assert back.read_bytes() == src.read_bytes()
