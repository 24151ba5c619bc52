"""``ctxpress bench`` prints the numbers the README quotes (on the small bundled sample),
and runs on the generated corpus by default."""

from __future__ import annotations

import orjson
import pytest

from tests.conftest import SAMPLE, Corpus
from workers.cli import main


def test_bench_prints_throughput_latency_memory_savings_and_facts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["bench", "-i", str(SAMPLE), "--modes", "lossless,standard", "--json"]) == 0
    rows = [orjson.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["mode"] for r in rows] == ["lossless", "standard"]
    for row in rows:
        assert row["mb_per_s"] > 0 and row["cpu_mb_per_s"] > 0 and row["records_per_s"] > 0
        assert 0 < row["p50_ms"] <= row["p99_ms"]
        assert 0 < row["p99_small_ms"] <= row["p99_ms"]  # the sample's records are all small
        assert row["peak_rss_mb"] > 10
        assert row["dead_letters"] == 2  # the sample carries two bad lines on purpose
        assert row["facts_visible"] == row["facts"] > 0
        assert row["tokenizer_ratio"] >= 1.0
    assert rows[1]["saved_pct"] > rows[0]["saved_pct"] > 0


def test_bench_rejects_unknown_modes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "-i", str(SAMPLE), "--modes", "fast"]) == 2
    assert (
        "unknown mode 'fast'; valid modes: off, lossless, standard, aggressive"
        in capsys.readouterr().err
    )


@pytest.mark.slow
def test_bench_defaults_to_the_generated_corpus_and_takes_any_other_with_i(
    corpus: Corpus, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["bench", "--repeat", "1", "--modes", "lossless", "--json"]
    if corpus.name != "generated":  # the outside corpus only when asked for
        argv += ["-i", str(corpus.path)]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert f"bench: {corpus.path} (" in captured.err
    (row,) = [orjson.loads(line) for line in captured.out.splitlines()]
    assert row["mode"] == "lossless"
    assert row["dead_letters"] == 0
    assert row["facts_visible"] == row["facts"] > 1000
    assert row["saved_pct"] >= 10.0


def test_the_small_record_p99_leaves_out_records_of_100_kb_and_more() -> None:
    from workers.bench.inprocess import SMALL_RECORD, bench_mode

    big = {"id": "big", "kind": "tool_output", "content": "x = 1\n" * (SMALL_RECORD // 6 + 10)}
    small = {"id": "small", "kind": "tool_output", "content": "short output\n"}
    lines = [orjson.dumps(big), *(orjson.dumps({**small, "id": f"s{i}"}) for i in range(20))]
    result = bench_mode(lines, "standard")
    assert result["p99_small_ms"] < result["p99_ms"]  # the big record is the slowest
