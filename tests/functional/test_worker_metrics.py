"""The labelled counters the dashboards read start at 0 for every known label value (issue 14).

Without that, a series appears with its first event and ``increase()`` misses the event:
the first dead letter of each reason never showed on the dashboards.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from workers.core.catalog import MODES
from workers.service.metrics import DEAD_LETTER_REASONS, GATE_KINDS


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    from workers.core.offload import MemoryStore
    from workers.core.settings import Settings
    from workers.service.app import create_app
    from workers.service.publish import ListPublisher

    settings = Settings(data_dir=str(tmp_path / "data"))
    app = create_app(settings, publisher=ListPublisher(), offload=MemoryStore(), source=None)
    return app.ctxpress.registry


def test_counters_start_at_zero_for_every_known_label(registry) -> None:  # type: ignore[no-untyped-def]
    for reason in DEAD_LETTER_REASONS:
        assert registry.get_sample_value("ctxpress_dead_letters_total", {"reason": reason}) == 0
    for mode in MODES:
        for outcome in ("compressed", "dead_letter"):
            labels = {"mode": mode, "outcome": outcome}
            assert registry.get_sample_value("ctxpress_records_out_total", labels) == 0
    labels = {"mode": "unknown", "outcome": "dead_letter"}
    assert registry.get_sample_value("ctxpress_records_out_total", labels) == 0
    engines = {name for names in MODES.values() for name in names}
    assert engines
    for engine in engines:
        for kind in GATE_KINDS:
            labels = {"engine": engine, "kind": kind}
            assert registry.get_sample_value("ctxpress_gate_rejections_total", labels) == 0
