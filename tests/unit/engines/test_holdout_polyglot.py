"""Real program output of the polyglot held-out work (``tests/data/holdout-polyglot/``: small
excerpts of runs on this machine), each with the mechanism it showed wrong."""

from __future__ import annotations

import re
from itertools import pairwise
from pathlib import Path
from typing import Any

from workers.core.settings import Settings
from workers.engines.aging import AgingEngine, _json_document
from workers.fidelity.facts import critical_lines
from workers.pipeline.runner import Pipeline
from workers.testing import expanded_record, tool_output_record

DATA = Path(__file__).resolve().parents[2] / "data" / "holdout-polyglot"


def _aged(data: dict[str, Any]) -> Any:
    pipeline = Pipeline(Settings(mode="off"), engines={"aggressive": [AgingEngine()]})
    outcome = pipeline.run_raw(data)
    assert outcome.rejections == [], [r.as_dict() for r in outcome.rejections]
    return outcome


def test_cmake_progress_lines_are_build_output_not_a_json_document() -> None:
    # ``cmake --build`` (make) opens with ``[  2%] Building C object ...``: a bracket, but no
    # JSON value; read as a JSON document, the unanswered output stayed verbatim in aggressive
    text = (DATA / "cmake-build-progress.txt").read_text(encoding="utf-8")
    assert not _json_document(text)
    for doc in ("[\n  1,\n  2\n]", '[{"a": 1}]', '{\n  "a": 1\n}', "[]", '["x", 3]', "[-1.5e3]"):
        assert _json_document(doc), doc
    data = tool_output_record("cmake", text, command="cmake --build build")
    data["mode"] = "aggressive"
    outcome = _aged(data)
    aged = outcome.record["content"]
    aging = next(e for e in outcome.stats["engines"] if e["engine"] == "aging")
    assert aging["details"]["units_fresh"] == 1
    for _, line in critical_lines(text, "tool_result", "cmake --build build"):
        assert line in aged
    assert "unit_23.c:2:9: warning: unused variable" in aged
    assert "[ 40%] Building C object CMakeFiles/units.dir/unit_15.c.o" not in aged
    assert len(aged) < len(text) / 2
    assert expanded_record(outcome) == data


def test_a_user_frame_shared_by_two_leak_records_stays_under_each() -> None:
    # valgrind prints ``by 0x1091F6: alloc_2 (chain.c:14)`` under an indirect leak and again
    # under the definite leak below it; dropped there as a repeat of a kept line, the definite
    # leak showed ``make_2`` as where its block came from
    text = (DATA / "valgrind-shared-frame.txt").read_text(encoding="utf-8")
    command = "valgrind --leak-check=full --show-leak-kinds=all ./chain"
    for mode in ("standard", "aggressive"):
        data = tool_output_record("vg", text, command=command)
        data["mode"] = mode
        outcome = Pipeline(Settings(mode=mode)).run_raw(data)
        assert outcome.rejections == []
        out = outcome.record["content"].split("\n")
        definite = [i for i, line in enumerate(out) if "are definitely lost in loss record" in line]
        assert len(definite) == 8
        for i in definite:
            assert re.search(r"by 0x[0-9A-F]+: alloc_\d \(chain\.c:\d+\)$", out[i + 1]), (
                mode,
                out[i + 1],
            )


def test_aggressive_drops_a_frame_whose_leak_headline_went_when_it_stays_under_another() -> None:
    # the indirect leaks' headlines go in aggressive; their frames are kept by their text
    # (the same line is a definite leak's allocation site) and stood under ``… 3 lines
    # omitted``, as if they were frames of the leak above the marker
    text = (DATA / "valgrind-shared-frame.txt").read_text(encoding="utf-8")
    data = tool_output_record(
        "vg", text, command="valgrind --leak-check=full --show-leak-kinds=all ./chain"
    )
    data["mode"] = "aggressive"
    outcome = Pipeline(Settings(mode="aggressive")).run_raw(data)
    assert outcome.rejections == []
    out = outcome.record["content"].split("\n")
    orphans = [
        line
        for above, line in pairwise(out)
        if "lines omitted <<cx:" in above and "library frame" not in above and " by 0x" in line
    ]
    assert orphans == []
    for _, line in critical_lines(text, "tool_result", "valgrind"):
        assert line in outcome.record["content"]
    assert expanded_record(outcome) == data


def _lossy_outputs(name: str, command: str) -> list[tuple[str, list[str]]]:
    """The lines of a captured output compressed in standard and aggressive mode, each run
    checked: no gate rejection, and expand gives the record back."""
    text = (DATA / name).read_text(encoding="utf-8")
    outputs = []
    for mode in ("standard", "aggressive"):
        data = tool_output_record("t", text, command=command)
        data["mode"] = mode
        outcome = Pipeline(Settings(mode=mode)).run_raw(data)
        assert outcome.rejections == []
        assert expanded_record(outcome) == data
        outputs.append((mode, outcome.record["content"].split("\n")))
    return outputs


def test_two_rustc_errors_at_one_place_each_keep_their_location() -> None:
    # ``Point: Eq`` and ``Point: Hash`` are both reported at `` --> src/lib.rs:7:25``; the
    # second location was dropped as a repeat of the first one's, leaving its error unplaced
    for mode, out in _lossy_outputs("rustc-same-place.txt", "cargo build"):
        for headline in (
            "error[E0277]: the trait bound `Point: Eq` is not satisfied",
            "error[E0277]: the trait bound `Point: Hash` is not satisfied",
        ):
            assert out[out.index(headline) + 1] == " --> src/lib.rs:7:25", mode


def test_an_eslint_finding_under_another_file_is_no_repeat() -> None:
    # lib/d.js has two findings written like lib/a.js's, and one of its own; the two went as
    # ``… 2 repeated lines omitted (shown above)``: d.js's var and == problems were nowhere
    # visible under its name.  lib/c.js, all of whose findings are a.js's, still folds
    for _mode, out in _lossy_outputs("eslint-same-findings.txt", "npx eslint lib"):
        at = next(i for i, line in enumerate(out) if line.endswith("/lib/d.js"))
        assert out[at + 1] == "  1:1   error  Unexpected var, use let or const instead  no-var"
        assert out[at + 2].startswith("  3:44  error  Expected '===' and instead saw '=='")
        assert out[at + 3].startswith("  4:41  error  'h1' is not defined")
        at = next(i for i, line in enumerate(out) if line.endswith("/lib/c.js"))
        assert out[at + 1].startswith("… 2 repeated lines omitted (shown above)")


def test_a_budget_keeps_every_finding_standard_shows_not_one_copy_per_text() -> None:
    # under a budget the floor held one copy of each critical line: lib/d.js's two findings,
    # written like lib/a.js's, went into the stash while standard shows them under d.js
    text = (DATA / "eslint-same-findings.txt").read_text(encoding="utf-8")
    data = tool_output_record("es", text, command="npx eslint lib")
    data["mode"] = "aggressive"
    data["budget_tokens"] = 40
    outcome = Pipeline(Settings(mode="aggressive")).run_raw(data)
    assert outcome.rejections == []
    budget = next(e for e in outcome.stats["engines"] if e["engine"] == "budget")
    assert budget["details"]["budget_met"] is False
    out = outcome.record["content"].split("\n")
    at = next(i for i, line in enumerate(out) if line.endswith("/lib/d.js"))
    assert out[at + 1] == "  1:1   error  Unexpected var, use let or const instead  no-var"
    assert out[at + 2].startswith("  3:44  error  Expected '===' and instead saw '=='")
    assert expanded_record(outcome) == data
