from __future__ import annotations

from dataclasses import replace

from workers.core.tokens import TokenCounter
from workers.engines.base import EngineContext
from workers.engines.dedup import DedupEngine, decode
from workers.messages import parse_record
from workers.testing import openai_record

BLOCK = "\n".join(f"    at com.example.Service.call{i}(Service.java:{10 + i})" for i in range(5))


def run(data: dict[str, object]) -> tuple[list[str], dict[str, str]]:
    units = parse_record(data).units
    out = DedupEngine().apply(units, EngineContext(tokens=TokenCounter()))
    return out.texts, {u.uid: u.text for u in units}


def test_cross_message_block_becomes_back_reference_and_decodes() -> None:
    data = openai_record(
        "r", ("user", "first"), ("tool", "head\n\n" + BLOCK), ("tool", BLOCK + "\n\ntail")
    )
    texts, originals = run(data)
    assert texts[2] == "head\n\n" + BLOCK  # first copy stays
    assert texts[3].startswith(
        f"[[dup:v1 src=m3 at=6 len={len(BLOCK)} | same 5 lines as message 3: "
    )
    assert texts[3].endswith("]]\n\ntail")
    assert decode(texts[3], originals) == BLOCK + "\n\ntail"


def test_same_message_repeat_uses_self() -> None:
    data = openai_record("r", ("tool", BLOCK + "\n\nmid\n\n" + BLOCK + "\n\n" + BLOCK))
    texts, originals = run(data)
    assert texts[1].count("[[dup:v1 src=self at=0 ") == 2
    assert decode(texts[1], originals) == BLOCK + "\n\nmid\n\n" + BLOCK + "\n\n" + BLOCK


def test_short_blocks_are_left_alone() -> None:
    data = openai_record("r", ("tool", "a\nb\nc\n\na\nb\nc"))
    texts, _ = run(data)
    assert texts[1] == "a\nb\nc\n\na\nb\nc"


# -- runs of lines: re-runs of a command, files read again (issue 13) --------------------

TESTS = [
    f"tests/test_orders.py::test_case_{i:02d} PASSED{' ' * (i % 3)}[{5 * i:3d}%]" for i in range(20)
]


def pytest_run(failing: int | None, seconds: str) -> str:
    lines = [
        "============================= test session starts ==============================",
        "platform linux -- Python 3.11.9, pytest-8.3.2, pluggy-1.5.0",
        f"collected {len(TESTS)} items",
        "",
        *[t.replace("PASSED", "FAILED") if i == failing else t for i, t in enumerate(TESTS)],
        "",
    ]
    if failing is not None:
        lines += [
            "=================================== FAILURES ===================================",
            f"____ test_case_{failing:02d} ____",
            "E       assert 41 == 42",
        ]
    summary = f"{len(TESTS) - (failing is not None)} passed"
    if failing is not None:
        summary = f"1 failed, {summary}"
    lines.append(f"========================= {summary} in {seconds}s =========================")
    return "\n".join(lines)


def test_a_rerun_points_at_the_earlier_run_and_keeps_what_changed() -> None:
    first, again = pytest_run(None, "0.53"), pytest_run(7, "0.61")
    data = openai_record("r", ("tool", first), ("user", "fix it"), ("tool", again))
    texts, originals = run(data)
    [i_first] = [i for i, t in enumerate(originals.values()) if t == first]
    [i_again] = [i for i, t in enumerate(originals.values()) if t == again]
    uid_first = list(originals)[i_first]
    out = texts[i_again]
    assert texts[i_first] == first  # the first run stays as it was
    # no blank-line block of the re-run is the same, yet both runs of lines around the
    # changed test line are back-references to the first run
    assert out.count(f"[[dup:v1 src={uid_first} ") == 2
    assert "tests/test_orders.py::test_case_07 FAILED" in out
    assert "E       assert 41 == 42" in out
    assert "1 failed, 19 passed in 0.61s" in out
    assert "test_case_03 PASSED" not in out and "test_case_12 PASSED" not in out
    assert len(out) < len(again) // 2
    assert decode(out, originals) == again


def test_an_output_repeated_across_blank_lines_is_one_back_reference() -> None:
    source = "\n\n".join(
        f"def price_{i}(qty: int) -> float:\n    base = {i}.50\n    return base * qty"
        for i in range(6)
    )
    data = openai_record("r", ("tool", source), ("user", "and now?"), ("tool", source))
    texts, originals = run(data)
    assert texts[-1].count("[[dup:v1 ") == 1
    assert texts[-1].startswith("[[dup:v1 src=") and texts[-1].endswith("]]")
    assert "same 23 lines as message 2: def price_0(qty: int) -> float:]]" in texts[-1]
    assert decode(texts[-1], originals) == source


def test_file_reads_and_repeats_inside_one_output_get_no_line_runs() -> None:
    again = pytest_run(7, "0.61")
    # a file read again is read-lifecycle's (the newest copy stays whole)
    data = openai_record(
        "r", ("tool", pytest_run(None, "0.53")), ("tool", again), command="cat log.txt"
    )
    texts, _ = run(data)
    assert texts[-1] == again  # a re-read stays whole: its older copy is read-lifecycle's
    # the same lines twice in one output are that output's own content
    joined = again.replace("collected 20 items\n\n", "collected 20 items\n")  # no same block
    twice = again + "\nretrying\n" + joined.replace("0.61", "0.70")
    texts, _ = run(openai_record("r", ("tool", twice)))
    assert texts[-1] == twice


def test_runs_that_save_too_little_and_frozen_units_are_left_alone() -> None:
    short = "alpha beta gamma delta one\nalpha beta gamma delta two\nalpha beta gamma delta three"
    data = openai_record("r", ("tool", short + "\nX"), ("tool", "Y\n" + short))
    texts, _ = run(data)
    assert len(short) >= 80 and texts[-1] == "Y\n" + short  # the marker would not halve it
    first = pytest_run(None, "0.53")
    units = parse_record(openai_record("r", ("tool", first), ("tool", first))).units
    frozen = [units[0], units[1], replace(units[2], frozen=True)]  # the re-run is frozen
    out = DedupEngine().apply(frozen, EngineContext(tokens=TokenCounter()))
    assert out.texts == [u.text for u in frozen]


def test_a_lossless_chain_refers_to_repeats_within_one_output() -> None:
    again = pytest_run(7, "0.61")
    joined = again.replace("collected 20 items\n\n", "collected 20 items\n")
    twice = again + "\nretrying\n" + joined.replace("0.61", "0.70")
    units = parse_record(openai_record("r", ("tool", twice))).units
    ctx = EngineContext(tokens=TokenCounter(), lossless_chain=True)
    out = DedupEngine().apply(units, ctx)
    text = out.texts[-1]
    assert "[[dup:v1 src=self at=" in text and "same " in text
    assert len(text) < len(twice) * 0.7
    assert decode(text, {}) == twice
    assert out.details["line_runs_replaced"] >= 1


def test_a_json_document_is_left_to_the_json_engines_within_itself() -> None:
    rows = ",\n".join(
        '  {\n    "sku": "SKU-0001",\n    "name": "same widget",\n    "price": 1.5\n  }'
        for _ in range(12)
    )
    doc = "[\n" + rows + "\n]"
    units = parse_record(openai_record("r", ("tool", doc))).units
    out = DedupEngine().apply(units, EngineContext(tokens=TokenCounter(), lossless_chain=True))
    assert out.texts[-1] == doc


def test_only_lossless_mode_refers_within_one_output() -> None:
    from workers.core.settings import Settings
    from workers.pipeline.expand import expand_record
    from workers.pipeline.runner import Pipeline

    frames = "\n".join(
        f'  File "/srv/app/worker_{i}.py", line {10 + i}, in step_{i}\n    run_step_{i}(job)'
        for i in range(4)
    )
    log = "\n".join(
        f"2026-12-02 10:00:{s:02d} ERROR job {s} failed\nTraceback (most recent call last):\n"
        f"{frames}\nRuntimeError: upstream returned 502 for job {s}"
        for s in range(5)
    )
    data = openai_record("r", ("user", "why?"), ("tool", log))
    lossless = Pipeline(Settings(mode="lossless")).run_raw(data)
    shown = lossless.record["messages"][-1]["content"]
    assert shown.count("[[dup:v1 src=self at=") == 4
    for s in range(5):  # what differs stays: the job and its error
        assert f"RuntimeError: upstream returned 502 for job {s}" in shown
    assert expand_record(lossless.record) == data
    standard = Pipeline(Settings(mode="standard")).run_raw(data)
    assert "[[dup:v1 " not in standard.record["messages"][-1]["content"]


def test_a_run_repeated_further_down_a_later_output_is_one_reference_whole() -> None:
    run_lines = "\n".join(f"step {i}: compiled module_{i}.rs in {i}.2s" for i in range(12))
    later = "\n".join(f"header line {k} of the second build" for k in range(8)) + "\n" + run_lines
    data = openai_record("r", ("tool", run_lines), ("user", "again"), ("tool", later))
    for lossless_chain in (False, True):
        units = parse_record(data).units
        ctx = EngineContext(tokens=TokenCounter(), lossless_chain=lossless_chain)
        out = DedupEngine().apply(units, ctx)
        assert out.texts[-1].count("[[dup:v1 ") == 1
        assert "same 12 lines as message" in out.texts[-1]


def test_blank_lines_start_no_run(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A long stretch of blank lines in one output is no run: no source is compared from
    each of its lines (that was quadratic: 16,000 blank lines took 19 s in lossless mode)."""
    from workers.engines import dedup

    calls = []
    real = dedup._LineIndex._end
    monkeypatch.setattr(
        dedup._LineIndex, "_end", lambda self, *a: calls.append(1) or real(self, *a)
    )
    text = "start of output line\n" + "\n" * 5000 + "end of output line"
    units = parse_record(openai_record("r", ("tool", text))).units
    ctx = EngineContext(tokens=TokenCounter(), lossless_chain=True)
    out = DedupEngine().apply(units, ctx)
    assert out.texts[-1] == text and len(calls) < 50


def test_a_preview_stops_before_a_closing_bracket() -> None:
    """Held-out set 29: ``TASK [common : Check disk)`` (a ``]`` written as ``)``) read as other
    text; the preview is cut before the bracket instead."""
    from workers.engines.dedup import _preview

    assert _preview("TASK [common : Require enough free space] ****\nok") == (
        "TASK [common : Require enough free space…"
    )
    assert _preview("ok: [web-02] => {}") == "ok: [web-02…"
    assert ")" not in _preview("TASK [x] ***")
