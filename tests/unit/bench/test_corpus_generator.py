"""The corpus generator's pieces, on a small variant: git over this repository, pytest over
the generated project, the JSON API, and the records made of them."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.conftest import REPO
from workers.bench import corpus as gen
from workers.messages import parse_record

# runs real programs (git, pytest, ruff, mypy, pip, compilers): seconds, so the full tier
pytestmark = pytest.mark.slow

IS_GIT = (REPO / ".git").exists()


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[gen.Capture], gen.Runner]:
    work = tmp_path_factory.mktemp("corpus")
    project = work / "inventory"
    gen.write_project(project)
    run = gen.Runner(work, timeout=60)
    found = gen.git_repo_captures(run, REPO) + gen.project_git_captures(run, project)
    found += [c for c in gen.python_captures(run, project) if c.key.startswith("pytest")]
    with gen.json_api() as base:
        found += gen.api_captures(base)
    found.append(gen.Capture("cat-pricing", "cat src/inventory/pricing.py", "x = 1\n" * 40, "", ""))
    return found, run


@pytest.fixture(scope="module")
def rows(small: tuple[list[gen.Capture], gen.Runner]) -> list[dict[str, Any]]:
    # through JSON and back, as the file holds them
    return [orjson.loads(json.dumps(r)) for r in gen.records(small[0])]


def test_every_record_parses_and_ids_are_unique_and_versioned(rows: list[dict[str, Any]]) -> None:
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids))
    assert all(i.startswith(f"ctxcorpus-v{gen.VERSION}-") for i in ids)
    formats = {parse_record(r).format for r in rows}
    assert formats == {"openai", "anthropic", "tool_output"}
    for r in rows:
        units = parse_record(r).units
        assert any(u.kind == "tool_result" for u in units), r["id"]


def test_ids_do_not_depend_on_the_run(
    small: tuple[list[gen.Capture], gen.Runner], rows: list[dict[str, Any]]
) -> None:
    again = gen.records(small[0])
    assert [r["id"] for r in again] == [r["id"] for r in rows]
    assert json.dumps(again) == json.dumps(gen.records(small[0]))  # tool-call ids too


def test_the_pytest_record_names_the_failing_tests(rows: list[dict[str, Any]]) -> None:
    record = next(r for r in rows if r["id"].endswith("-tool-pytest-verbose"))
    text = record["content"]
    for name in (
        "tests/test_pricing.py::test_discount_rounds_half_up",
        "tests/test_pricing.py::test_order_total_with_vat",
        "tests/test_models.py::test_ship_unknown_sku",
        "tests/test_models.py::test_load_missing_file",
    ):
        assert f"FAILED {name}" in text
    assert "Traceback" in text or "KeyError: 'SKU-99999'" in text
    assert "5 failed, 108 passed" in text
    chat = next(r for r in rows if r["id"].endswith("-chat-pytest-verbose"))
    assert "tests/test_models.py::test_ship_unknown_sku" in chat["messages"][-1]["content"]


@pytest.mark.skipif(not IS_GIT, reason="not a git checkout")
def test_the_git_records_show_real_commits_of_this_repository(
    small: tuple[list[gen.Capture], gen.Runner],
) -> None:
    by_key = {c.key: c for c in small[0]}
    log = by_key["git-log"].output
    assert log.startswith("commit ")
    newest = log.split("\n", 1)[0].removeprefix("commit ")
    # the newest commit of the log is a real commit of this repository (HEAD, or an ancestor
    # of HEAD when a commit lands while the corpus is built)
    ancestor = subprocess.run(
        ["git", "merge-base", "--is-ancestor", newest, "HEAD"], cwd=REPO, capture_output=True
    )
    assert len(newest) == 40 and ancestor.returncode == 0
    shown = by_key["git-show"].meta["commit"]
    assert len(shown) == 40
    assert by_key["git-show"].output.startswith(f"commit {shown}\n")
    assert "diff --git a/" in by_key["git-diff"].output
    assert "\tmodified:   src/inventory/pricing.py" in by_key["git-status-project"].output
    assert "src/inventory/discounts.py" in by_key["git-status-project"].output
    assert "-    return (gross * (1 - discount)).quantize(" in by_key["git-diff-project"].output


def test_the_api_records_are_the_served_json(rows: list[dict[str, Any]]) -> None:
    items = next(r for r in rows if r["id"].endswith("-tool-api-items"))
    assert items["command"].startswith("curl -s 'http://127.0.0.1:")
    data = json.loads(items["content"])
    assert data == gen.api_items(300)
    assert data[17]["status"] == "error: sync failed (upstream 502)"


def test_the_read_twice_session_reads_the_same_file_twice(rows: list[dict[str, Any]]) -> None:
    session = next(r for r in rows if r["id"].endswith("-session-read-twice"))
    reads = [
        m["content"]
        for m, call in zip(session["messages"][1:], session["messages"], strict=False)
        if m["role"] == "tool" and "cat src/inventory/pricing.py" in json.dumps(call)
    ]
    assert len(reads) == 2 and reads[0] == reads[1]


def test_programs_get_a_clean_environment(tmp_path: Path) -> None:
    os.environ["CTXPRESS_CORPUS_TEST_SECRET"] = "s3cr3t"
    try:
        env = gen.clean_env(tmp_path)
        out = gen.Runner(tmp_path).run(["env"], tmp_path)
    finally:
        del os.environ["CTXPRESS_CORPUS_TEST_SECRET"]
    assert "CTXPRESS_CORPUS_TEST_SECRET" not in env
    assert out is not None and "s3cr3t" not in out
    assert "LC_ALL=C.UTF-8" in out


def test_a_missing_program_or_a_hang_is_skipped(tmp_path: Path) -> None:
    run = gen.Runner(tmp_path, timeout=0.5)
    assert run.run(["no-such-program-ctxpress"], tmp_path) is None
    assert run.run(["sleep", "5"], tmp_path) is None
    assert run.skipped == ["no-such-program-ctxpress: not found", "sleep 5: timed out"]


def test_default_path_carries_the_version() -> None:
    assert (
        gen.default_path() == REPO / ".cache" / "corpus" / f"ctxpress-corpus-v{gen.VERSION}.jsonl"
    )
