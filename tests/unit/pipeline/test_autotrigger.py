"""Mode auto: thresholds from the settings, the decision and its source in the stats."""

from __future__ import annotations

import pytest

from workers.core.catalog import LOSSLESS
from workers.core.settings import Settings, SettingsError
from workers.pipeline.autotrigger import Thresholds
from workers.pipeline.combos import RoutedPipeline
from workers.testing import tool_output_record


@pytest.mark.parametrize(
    ("tokens", "mode"),
    [
        (0, "off"),
        (1999, "off"),
        (2000, "lossless"),
        (15999, "lossless"),
        (16000, "standard"),
        (95999, "standard"),
        (96000, "aggressive"),
        (10**7, "aggressive"),
    ],
)
def test_default_thresholds(tokens: int, mode: str) -> None:
    assert Thresholds().decide(tokens).mode == mode


def test_aggressive_wins_over_lossless_with_a_small_window() -> None:
    small = Thresholds(off_below=10, lossless_below=1000, context_window=400, aggressive_share=0.5)
    assert small.decide(150).mode == "lossless"
    decision = small.decide(200)
    assert decision.mode == "aggressive"
    assert decision.rule == "tokens >= 200 (0.5 of the context window 400)"


def test_thresholds_come_from_the_environment() -> None:
    settings = Settings.from_env(
        {
            "CTXPRESS_MODE": "auto",
            "CTXPRESS_AUTO_OFF_BELOW": "5",
            "CTXPRESS_AUTO_LOSSLESS_BELOW": "50",
            "CTXPRESS_CONTEXT_WINDOW": "1000",
            "CTXPRESS_AUTO_AGGRESSIVE_SHARE": "0.5",
        }
    )
    assert Thresholds.from_settings(settings) == Thresholds(5, 50, 1000, 0.5)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"CTXPRESS_AUTO_OFF_BELOW": "20000"}, "CTXPRESS_AUTO_OFF_BELOW must be between 0 and"),
        ({"CTXPRESS_AUTO_AGGRESSIVE_SHARE": "1.5"}, "CTXPRESS_AUTO_AGGRESSIVE_SHARE a share"),
        ({"CTXPRESS_CONTEXT_WINDOW": "0"}, "CTXPRESS_CONTEXT_WINDOW must be a positive"),
        ({"CTXPRESS_MODE": "automatic"}, "valid modes: off, lossless, standard, aggressive, auto"),
    ],
)
def test_bad_thresholds_fail_at_start_up(env: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError, match=message.replace("(", r"\(")):
        Settings.from_env(env)


def _words(n: int) -> str:
    return "\n".join(f"line {i}: the build step {i} finished" for i in range(n))


def test_auto_as_the_default_mode_follows_the_token_count() -> None:
    pipeline = RoutedPipeline(
        Settings(mode="auto", auto_off_below=50, auto_lossless_below=400, context_window=100_000)
    )
    small = pipeline.run_raw(tool_output_record("s", "hello world"))
    assert small.stats["mode"] == small.mode == "off"
    assert small.stats["engines"] == []
    assert small.stats["route"] == {
        "source": "threshold",
        "mode": "off",
        "requested_by": "default",
        "tokens": small.stats["tokens_before"],
        "rule": "tokens < 50 (CTXPRESS_AUTO_OFF_BELOW)",
    }
    middle = pipeline.run_raw(tool_output_record("m", _words(10)))
    assert 50 <= middle.stats["tokens_before"] < 400
    assert middle.stats["mode"] == "lossless"
    assert [e["engine"] for e in middle.stats["engines"]] == list(LOSSLESS)
    big = pipeline.run_raw(tool_output_record("b", _words(200)))
    assert big.stats["tokens_before"] >= 400
    assert big.stats["mode"] == "standard"
    assert big.stats["route"]["rule"].startswith("400 <= tokens < 75000")


def test_a_record_field_or_header_may_ask_for_auto() -> None:
    pipeline = RoutedPipeline(Settings())  # default mode lossless
    record = tool_output_record("f", "hello world")
    record["mode"] = "auto"
    out = pipeline.run_raw(record)
    assert (out.stats["mode"], out.stats["route"]["requested_by"]) == ("off", "record field")
    out = pipeline.run_raw(tool_output_record("h", "hi"), "auto")
    assert (out.stats["mode"], out.stats["route"]["requested_by"]) == ("off", "header")
