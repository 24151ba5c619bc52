"""Coloured tool output through ``ctxpress compress --mode lossless`` and ``ctxpress expand``.

The samples are real program output with colour forced on
(:mod:`tests.support.ansi_samples`: ``tsc --pretty``, cargo, gcc, jest,
vitest, ``ls``, ``git log``, ``grep``).  Lossless mode takes their escape
sequences out of the visible text into the record's ``compression`` manifest
(the ``ansi`` engine), and expand gives every input line back byte for byte.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.support import ansi_samples
from workers.cli import main
from workers.markers import has_marker
from workers.pipeline.visibility import count_facts, lost_facts

SAMPLES = ansi_samples.load()
# measured on the checked-in samples: 38.4 % of the tokens (0 % without the ansi engine)
FLOOR_PCT = 30.0


def _run(tmp_path: Path, mode: str) -> tuple[Path, list[dict[str, object]], bytes]:
    src, out = tmp_path / "in.jsonl", tmp_path / f"{mode}.jsonl"
    back, stash = tmp_path / f"{mode}-back.jsonl", tmp_path / f"{mode}-stash"
    lines = [
        orjson.dumps(
            {
                "id": s["name"],
                "kind": "tool_output",
                "command": s["command"],
                "content": s["output"],
            }
        )
        for s in SAMPLES
    ]
    src.write_bytes(b"\n".join(lines) + b"\n")
    args = ["-i", str(src), "-o", str(out), "--offload", str(stash), "--quiet"]
    assert main(["compress", "--mode", mode, *args]) == 0
    assert main(["expand", "--offload", str(stash), "-i", str(out), "-o", str(back)]) == 0
    records = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert back.read_bytes() == src.read_bytes()
    return src, records, back.read_bytes()


def test_the_samples_are_coloured() -> None:
    names = {s["name"] for s in SAMPLES}
    assert len(SAMPLES) >= 8
    assert all("\x1b[" in s["output"] for s in SAMPLES)
    assert {"tsc-pretty", "gcc-color", "ls-color", "grep-color"} <= names


def test_lossless_takes_the_colour_out_of_band_and_expand_restores_the_bytes(
    tmp_path: Path,
) -> None:
    _, records, _ = _run(tmp_path, "lossless")
    before = after = 0
    for sample, record in zip(SAMPLES, records, strict=True):
        comp = record["compression"]
        before += comp["tokens_before"]
        after += comp["tokens_after"]
        if has_marker(sample["output"]):
            # marker-like input changes only where expand gives it back (checked by _run)
            continue
        assert "\x1b[" not in record["content"], sample["name"]
        # (dedup may come first: a repeat within the output, lossless mode only)
        assert "ansi" in comp["engines_applied"][:2], sample["name"]
        (entry,) = comp["markers"]["ansi"]
        assert entry.startswith(f"{comp['changed'][0]}="), entry[:20]
        assert comp["tokens_after"] < comp["tokens_before"], sample["name"]
    saved = 100.0 * (before - after) / before
    print(f"lossless on the coloured samples: {before} -> {after} tokens, {saved:.1f}% saved")
    assert saved >= FLOOR_PCT


def test_the_facts_of_coloured_lines_stay_visible_without_their_colour(tmp_path: Path) -> None:
    src, records, _ = _run(tmp_path, "lossless")
    inputs = [orjson.loads(line) for line in src.read_bytes().splitlines()]
    assert sum(count_facts(data) for data in inputs) >= 20
    assert [lost_facts(d, r) for d, r in zip(inputs, records, strict=True)] == [[]] * len(inputs)


def test_later_engines_read_the_plain_text(tmp_path: Path) -> None:
    """In standard mode the diagnostics of tsc --pretty are read as diagnostics."""
    src, records, _ = _run(tmp_path, "standard")
    inputs = [orjson.loads(line) for line in src.read_bytes().splitlines()]
    # diagnostics folded by the filters keep every fact (a coloured fact read as its plain text)
    assert [lost_facts(d, r) for d, r in zip(inputs, records, strict=True)] == [[]] * len(inputs)
    by_id = {r["id"]: r for r in records}
    gcc = by_id["gcc-color"]["content"]
    # gcc's repeated warnings read as diagnostics once the colour is out: folded, every
    # location listed (without the ansi engine standard mode saved 22.7% here, now over 75%;
    # a note of one file's repeats names the file once: ``… main.c: warning ... at 4:33``)
    assert "\x1b" not in gcc
    note = next(line for line in gcc.splitlines() if line.startswith("… warning"))
    assert " main.c:4:33" in note and " main.c:8:33" in note
    assert by_id["gcc-color"]["compression"]["saved_pct"] > 60
    tsc = by_id["tsc-pretty"]
    assert "\x1b" not in tsc["content"]
    assert "error TS2322" in tsc["content"]
    assert tsc["compression"]["tokens_after"] < tsc["compression"]["tokens_before"] * 0.6


@pytest.mark.parametrize("mode", ["aggressive"])
def test_aggressive_mode_gives_the_coloured_bytes_back(tmp_path: Path, mode: str) -> None:
    src, records, back = _run(tmp_path, mode)
    assert back == src.read_bytes()
    assert sum("ansi" in r["compression"]["engines_applied"] for r in records) >= 8


def test_standard_mode_keeps_the_colours_through_the_whitespace_normalisation() -> None:
    """Trailing blanks and runs of blank lines (what standard mode's whitespace engine
    normalises) around coloured lines: expand gives back every escape sequence."""
    from workers.core.offload import MemoryStore, stored_text
    from workers.core.settings import Settings
    from workers.fidelity.lossy import _ws_normal
    from workers.pipeline.expand import expand_record
    from workers.pipeline.runner import Pipeline

    pipeline = Pipeline(Settings(mode="standard"))
    checked = 0
    for sample in SAMPLES:
        if has_marker(sample["output"]):
            continue
        lines = sample["output"].split("\n")
        text = "\n".join(line + ("   " if i % 3 == 0 else "") for i, line in enumerate(lines))
        text = text.replace("\n\n", "\n\n\n\n\n")
        data = {"id": sample["name"], "kind": "tool_output", "command": sample["command"]}
        data["content"] = text
        outcome = pipeline.run_raw(data)
        assert "ansi" in outcome.stats["engines_applied"], sample["name"]
        store = MemoryStore()
        store.put_many({k: stored_text(v) for k, v in outcome.stash.items()})
        back = expand_record(orjson.loads(orjson.dumps(outcome.record)), store)["content"]
        assert _ws_normal(back) == _ws_normal(text), sample["name"]
        assert back.count("\x1b") == text.count("\x1b"), sample["name"]
        checked += 1
    assert checked >= 8


@pytest.mark.parametrize("mode", ["lossless", "aggressive"])
def test_reruns_of_coloured_output_dedup_and_expand_exactly(mode: str) -> None:
    """A coloured output run three times (the second with a line more): dedup points at the
    first copy as written, ansi takes the colour out of what is left, expand gives the
    conversation back byte for byte."""
    from workers.core.offload import MemoryStore, stored_text
    from workers.core.settings import Settings
    from workers.pipeline.expand import expand_record
    from workers.pipeline.runner import Pipeline

    pipeline = Pipeline(Settings(mode=mode))
    deduped = 0
    for sample in SAMPLES:
        out = sample["output"]
        data = {
            "id": sample["name"],
            "messages": [
                {"role": "user", "content": "build it"},
                {"role": "tool", "tool_call_id": "a", "content": out},
                {"role": "assistant", "content": "fixed, again"},
                {"role": "tool", "tool_call_id": "b", "content": out + "\nDone.\n"},
                {"role": "tool", "tool_call_id": "c", "content": out},
            ],
        }
        outcome = pipeline.run_raw(data)
        store = MemoryStore()
        store.put_many({k: stored_text(v) for k, v in outcome.stash.items()})
        assert expand_record(orjson.loads(orjson.dumps(outcome.record)), store) == data
        if not has_marker(out):
            # each copy keeps the lines the gate needs (a git log's commit lines, an error),
            # the references stand for the rest: 37.8 % on git-log-color, the least
            assert outcome.stats["saved_pct"] > 35, sample["name"]
            assert "ansi" in outcome.stats["engines_applied"], sample["name"]
            deduped += "dedup" in outcome.stats["engines_applied"]
    # a grep's coloured matches are all lines the gate needs (each names its file): no
    # reference pays between them; every other sample's copies refer to the first
    assert deduped >= len(SAMPLES) - 2
