"""User filter regexes run on RE2 (linear time): hostile patterns cannot hang compress.

Issue 11: ``x*x*x*y``, ``x*x*x*x*x*x*x*y``, ``(x{1,1000}){1,1000}y`` and
``x{0,1000}x{0,1000}x{0,1000}x{0,1000}y`` passed the load-time check and hung
``compress`` on a long line of ``x``.  A user file's regexes are now compiled by
RE2, and what RE2 cannot compile (or would make cost thousands of steps per
character) is rejected when the file loads, naming the file and the pattern.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from workers.core.settings import Settings
from workers.engines._filters import FilterError, clear_cache, load_file, load_filter_set
from workers.pipeline.runner import Pipeline
from workers.testing import tool_output_record

HOSTILE = [
    "x*x*x*y",
    "x*x*x*x*x*x*x*y",
    "(x{1,1000}){1,1000}y",
    "x{0,1000}x{0,1000}x{0,1000}x{0,1000}y",
]
# what load does with each: None = loads, else a word of the rejection
EXPECTED: dict[str, str | None] = {
    "x*x*x*y": None,
    "x*x*x*x*x*x*x*y": None,
    "(x{1,1000}){1,1000}y": "invalid repetition size",
    "x{0,1000}x{0,1000}x{0,1000}x{0,1000}y": "too large for linear-time matching",
}
TEXT = (
    "start\n"
    + "x" * 100_000
    + "\n"
    + "".join(f"uploading chunk {i}\n" for i in range(100))
    + "done\n"
)


def _doc(pattern: str) -> dict[str, Any]:
    return {
        "name": "hostile",
        "priority": 90,
        "head": 2,
        "tail": 1,
        "match": {"command": ["hostile\\b"], "output": [pattern], "lines": [pattern]},
        "keep": [pattern],
        "drop": [pattern, "^uploading "],
        "collapse": [pattern],
        "blocks": [{"start": pattern, "count": {"hits": pattern}}],
        "block_end": [pattern],
        "group": {"key": f"({pattern})"},
    }


def _write(tmp_path: Path, pattern: str) -> Path:
    path = tmp_path / "hostile.json"
    path.write_text(orjson.dumps(_doc(pattern)).decode())
    return path


def _compress(tmp_path: Path, command: str | None) -> tuple[str, dict[str, Any]]:
    clear_cache()
    try:
        pipeline = Pipeline(Settings(mode="standard", filters_dir=str(tmp_path)))
        outcome = pipeline.run_raw(tool_output_record("r1", TEXT, command=command))
    finally:
        clear_cache()
    stats = {s.engine: s.details for s in outcome.engine_stats}
    return str(outcome.record["content"]), stats.get("toolfilter", {})


@pytest.mark.parametrize("pattern", HOSTILE)
def test_hostile_pattern_loads_or_is_rejected_with_the_reason(tmp_path: Path, pattern: str) -> None:
    path = _write(tmp_path, pattern)
    expected = EXPECTED[pattern]
    if expected is None:
        filt = load_file(path)
        assert filt.name == "hostile" and filt.linear
        return
    with pytest.raises(FilterError) as info:
        load_file(path)
    message = str(info.value)
    assert "\n" not in message
    assert str(path) in message and repr(pattern) in message and expected in message, message


@pytest.mark.parametrize("pattern", [p for p in HOSTILE if EXPECTED[p] is None])
@pytest.mark.parametrize("command", ["hostile run", None])
def test_compress_over_a_hostile_line_finishes(
    tmp_path: Path, pattern: str, command: str | None
) -> None:
    _write(tmp_path, pattern)
    after, details = _compress(tmp_path, command)
    # the filter ran (by command; without one, the output signature never matches)
    if command is not None:
        assert details["filters_hit"] == {"hostile": 1}
        assert "x" * 100_000 in after or "omitted" in after
        assert after.startswith("start\n") and after.rstrip().endswith("done")
    else:
        assert "hostile" not in details.get("filters_hit", {})
        assert "x" * 100_000 in after


@pytest.mark.slow
@pytest.mark.parametrize("pattern", [p for p in HOSTILE if EXPECTED[p] is None])
def test_compress_over_a_hostile_line_is_fast(tmp_path: Path, pattern: str) -> None:
    _write(tmp_path, pattern)
    for command in ("hostile run", None):
        started = time.perf_counter()
        after, _ = _compress(tmp_path, command)
        assert time.perf_counter() - started < 10.0
        assert after.rstrip().endswith("done")


def test_rejected_user_file_fails_the_pipeline_not_the_run(tmp_path: Path) -> None:
    _write(tmp_path, "(x{1,1000}){1,1000}y")
    clear_cache()
    try:
        with pytest.raises(FilterError, match=r"hostile\.json"):
            load_filter_set(str(tmp_path))
    finally:
        clear_cache()


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        ("(\\w+)\\1", "backreferences"),
        ("(ab)x\\1", "backreferences"),
        ("foo(?=bar)", "lookaround"),
        ("(?<!x)y", "lookaround"),
        ("a\\Z", "RE2"),
    ],
)
def test_what_re2_cannot_compile_is_rejected_naming_the_file(
    tmp_path: Path, pattern: str, reason: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(
        orjson.dumps({"name": "bad", "match": {"command": ["bad"]}, "drop": [pattern]}).decode()
    )
    with pytest.raises(FilterError) as info:
        load_file(path)
    message = str(info.value)
    assert "\n" not in message
    assert str(path) in message and repr(pattern) in message and reason in message, message


def test_user_and_builtin_filters_are_both_selected(tmp_path: Path) -> None:
    # the union of built-in (re) and user (RE2) patterns: the right filter for each
    (tmp_path / "deploy.json").write_text(
        orjson.dumps(
            {"name": "deploy", "priority": 90, "match": {"command": ["deploy\\.sh\\b"],
             "output": ["^DEPLOY-SIGNATURE v\\d+$"]}, "drop": ["^uploading "]}
        ).decode()
    )  # fmt: skip
    clear_cache()
    try:
        filters = load_filter_set(str(tmp_path))
        assert filters.by_name["deploy"].linear
        assert not filters.by_name["generic"].linear
        assert filters.select("./deploy.sh prod", None, "x").name == "deploy"  # type: ignore[union-attr]
        by_output = filters.select(None, None, "hello\nDEPLOY-SIGNATURE v2\nmore\n")
        assert by_output is not None and by_output.name == "deploy"
        builtin = filters.select("pytest -q", None, "x")
        assert builtin is not None and builtin.name == "pytest"
    finally:
        clear_cache()
