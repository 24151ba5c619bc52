"""``ctxpress stats --topic`` sums what the workers published on the stats topic."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.e2e._support import Run
from tests.kafka_broker import kafka_bootstrap  # noqa: F401
from workers.cli import main
from workers.core.settings import Settings
from workers.pipeline.stats_report import summarize
from workers.testing.worker import gate_rejecting_pipeline, mixed_stream

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(300)]


def test_stats_from_the_topic_match_the_in_process_pipeline(
    kafka_bootstrap: str,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    run = Run(kafka_bootstrap, tmp_path)
    run.create_topics()
    samples = [s for s in mixed_stream(80, seed=51, prefix="st-") if s.ok]
    worker = run.worker().start()
    try:
        run.produce(samples)
        run.wait_for_outputs(len(samples), worker, timeout=120)
    finally:
        worker.terminate(timeout=60)
    capsys.readouterr()
    code = main(
        ["stats", "--topic", "--json", "--prefix", run.prefix, "--bootstrap", kafka_bootstrap]
    )
    assert code == 0
    got = orjson.loads(capsys.readouterr().out)

    pipeline = gate_rejecting_pipeline(Settings())
    lines = [
        orjson.dumps(pipeline.run_raw(orjson.loads(s.line)).stats)
        for s in samples
        if pipeline.run_raw(orjson.loads(s.line)).engine_stats
    ]
    want = summarize(lines).as_json()
    assert got["engines"] == want["engines"]
    assert got["total"]["records"] == want["total"]["records"]
    assert got["total"]["tokens_before"] == want["total"]["tokens_before"]
    assert {m: r["records"] for m, r in got["modes"].items()} == {
        m: r["records"] for m, r in want["modes"].items()
    }
