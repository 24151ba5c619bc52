"""Combos: loading and validation of the TOML file, and which chain a record gets."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from workers.core.settings import Settings, SettingsError
from workers.pipeline.combos import (
    Combo,
    RoutedPipeline,
    engine_options,
    load_combos,
    parse_combos,
    route_fields,
)
from workers.pipeline.runner import Pipeline, RecordError
from workers.testing import openai_record, tool_output_record

REPO = Path(__file__).resolve().parents[3]

TABLE = """
[combos.json-only]
engines = ["jsontable", "jsonminify"]

[combos.tight]
engines = ["dedup", "relevance", "budget"]
options.relevance = { keep_turns = 3, min_share = 1 }
options.budget = { budget_tokens = 50 }

[select]
tenant_header = "tenant"
tenant_field = "metadata.tenant"
topics = { tool-outputs = "json-only", transcripts = "standard" }
tenants = { acme = "tight", beta = "auto" }
"""

NO_TOPICS = TABLE.replace('topics = { tool-outputs = "json-only", transcripts = "standard" }', "")

ROWS = json.dumps(
    [{"id": i, "name": f"item-{i}", "price": i * 1.5, "tags": ["a", "b"]} for i in range(20)],
    indent=2,
)


def parse(text: str) -> Any:
    return parse_combos(tomllib.loads(text), "test.toml")


@pytest.fixture(scope="module")
def routed() -> RoutedPipeline:
    return RoutedPipeline(Settings(), combos=parse(TABLE))


def engines_of(stats: dict[str, Any]) -> list[str]:
    return [e["engine"] for e in stats["engines"]]


# -- loading -------------------------------------------------------------------


def test_the_repository_file_loads_and_every_combo_builds() -> None:
    table = load_combos(REPO / "combos.toml")
    assert set(table.combos) == {"tool-outputs-light", "json-only", "chat-tight"}
    assert table.combos["chat-tight"].options["budget"] == {"budget_tokens": 8000}
    for combo in table.combos.values():
        assert [e.name for e in combo.build()] == list(combo.engines)
    built = table.combos["chat-tight"].build()
    assert next(e for e in built if e.name == "relevance").keep_turns == 4  # type: ignore[attr-defined]


def test_options_are_the_scalar_constructor_arguments() -> None:
    assert engine_options("dedup") == {}
    assert engine_options("relevance") == {"language": str, "keep_turns": int, "min_share": float}
    assert "scorer" not in engine_options("relevance")  # an object, not a TOML value
    assert engine_options("budget") == {"language": str, "budget_tokens": int}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[combos.x]\nengines = ["dedup", "zip"]', "unknown engine 'zip'; valid engines: dedup, "),
        (
            '[combos.x]\nengines = ["budget"]\noptions.budget = { budget = 3 }',
            "unknown option 'budget'; valid options: language, budget_tokens",
        ),
        (
            '[combos.x]\nengines = ["dedup"]\noptions.dedup = { level = 3 }',
            "valid options: (none: this engine takes no options)",
        ),
        (
            '[combos.x]\nengines = ["budget"]\noptions.budget = { budget_tokens = "9" }',
            "option 'budget_tokens' of engine 'budget' must be a int, got '9'",
        ),
        (
            '[combos.x]\nengines = ["relevance"]\noptions.relevance = { keep_turns = true }',
            "must be a int, got True",
        ),
        (
            '[combos.x]\nengines = ["filler"]\noptions.filler = { language = "xx" }',
            "has no language pack 'xx'; valid: en",
        ),
        (
            '[combos.x]\nengines = ["dedup"]\noptions.budget = { budget_tokens = 3 }',
            "'budget' is not an engine of this combo",
        ),
        (
            '[combos.x]\nengines = ["jsonminify", "dedup"]',
            "write ['dedup', 'jsonminify']",
        ),
        ('[combos.x]\nengines = ["dedup", "dedup"]', "an engine is listed twice"),
        ('[combos.standard]\nengines = ["dedup"]', "'standard' is a mode"),
        ('[combos.x]\nengine = ["dedup"]', "unknown key 'engine'; valid keys: engines"),
        ("[combo.x]\n", "unknown table 'combo'; valid tables: combos, select"),
        (
            '[combos.x]\nengines = []\n[select]\ntopics = { transcripts = "y" }',
            "select.topics.transcripts: unknown combo or mode 'y'; valid combos: x; "
            "valid modes: off, lossless, standard, aggressive, auto",
        ),
        ('[select]\ntenants = { a = "off" }', "select.tenants needs select.tenant_header"),
        ("[select]\ntopic = {}", "unknown key 'topic'"),
    ],
)
def test_a_bad_file_fails_at_load_naming_the_valid_choices(text: str, message: str) -> None:
    with pytest.raises(SettingsError) as caught:
        parse(text)
    assert message in str(caught.value)
    assert str(caught.value).startswith("test.toml")


def test_file_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="does not exist"):
        load_combos(tmp_path / "none.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[combos.x\n")
    with pytest.raises(SettingsError, match=r"bad\.toml' is not valid TOML"):
        load_combos(bad)


def test_the_default_combo_must_exist(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(NO_TOPICS)
    with pytest.raises(SettingsError, match="valid combos: json-only, tight"):
        RoutedPipeline(Settings(combos_file=str(path), combo="nope"))
    with pytest.raises(SettingsError, match="needs CTXPRESS_COMBOS_FILE"):
        Settings.from_env({}, combo="tight")
    pipeline = RoutedPipeline(Settings(combos_file=str(path), combo="tight"))
    out = pipeline.run_raw(openai_record("d", ("user", "hello there")))
    assert out.stats["combo"] == "tight"
    assert out.stats["route"] == {"source": "default", "combo": "tight"}


def test_a_combos_mode_is_the_smallest_mode_that_holds_it() -> None:
    assert Combo("a", ()).mode == "off"
    assert Combo("a", ("jsontable",)).mode == "lossless"
    assert Combo("a", ("dedup", "toolfilter")).mode == "standard"
    assert Combo("a", ("dedup", "budget")).mode == "aggressive"


# -- selection -----------------------------------------------------------------


def test_record_field_picks_the_combo_and_the_stats_name_it(routed: RoutedPipeline) -> None:
    record = tool_output_record("t1", ROWS, command="cat items.json")
    record["combo"] = "json-only"
    out = routed.run_raw(record)
    assert engines_of(out.stats) == ["jsontable", "jsonminify"]
    assert out.stats["engines_applied"] == ["jsontable"]
    assert out.stats["combo"] == "json-only"
    assert out.stats["mode"] == out.mode == "lossless"
    assert out.stats["route"] == {"source": "record field", "combo": "json-only"}
    assert out.record["compression"] is out.stats
    assert route_fields(out.stats) == {"combo": "json-only", "route": out.stats["route"]}


def test_options_reach_the_engine(routed: RoutedPipeline) -> None:
    turns = [("user", f"question {i} about the deployment of service {i}") for i in range(6)]
    record = openai_record("t2", *turns)
    record["combo"] = "tight"
    out = routed.run_raw(record)
    assert engines_of(out.stats) == ["dedup", "relevance", "budget"]
    assert out.stats["tokens_after"] <= max(50, out.stats["tokens_before"])
    budget = next(e for e in routed.engines_for("combo:tight") if e.name == "budget")
    assert budget.budget_tokens == 50  # type: ignore[attr-defined]


def test_precedence_header_combo_then_header_mode_then_fields_then_tenant_then_topic(
    routed: RoutedPipeline,
) -> None:
    record = tool_output_record("t3", ROWS)
    record.update(combo="tight", mode="off", metadata={"tenant": "acme"})

    def run(data: dict[str, Any], *headers: tuple[str, bytes], mode: str | None = None) -> Any:
        return routed.run_raw(dict(data), mode, headers=headers, topic="ctxpress.tool-outputs")

    out = run(record, ("ctxpress.combo", b"json-only"), mode="standard")
    assert (out.stats["combo"], out.stats["route"]["source"]) == ("json-only", "header")
    out = run(record, mode="standard")
    assert out.stats["mode"] == "standard" and "route" not in out.stats  # a plain mode
    out = run(record)
    assert (out.stats["combo"], out.stats["route"]["source"]) == ("tight", "record field")
    del record["combo"]
    out = run(record)
    assert out.stats["mode"] == "off" and "route" not in out.stats
    del record["mode"]
    out = run(record)
    assert out.stats["route"] == {"source": "tenant", "tenant": "acme", "combo": "tight"}
    out = run(record, ("tenant", b"nobody"))  # the header wins over the field
    assert out.stats["route"] == {"source": "topic", "topic": "tool-outputs", "combo": "json-only"}
    del record["metadata"]
    out = routed.run_raw(dict(record), topic="ctxpress.transcripts")
    assert out.stats["mode"] == "standard"
    assert out.stats["route"] == {"source": "topic", "topic": "transcripts", "mode": "standard"}
    out = routed.run_raw(dict(record))  # no topic (the batch CLI): the one produce picks
    assert out.stats["route"] == {"source": "topic", "topic": "tool-outputs", "combo": "json-only"}
    no_topics = TABLE.replace(
        'topics = { tool-outputs = "json-only", transcripts = "standard" }', ""
    )
    plain = RoutedPipeline(Settings(), combos=parse(no_topics))
    out = plain.run_raw(dict(record))
    assert out.stats["mode"] == "lossless" and "route" not in out.stats


def test_tenant_may_ask_for_auto(routed: RoutedPipeline) -> None:
    record = openai_record("t4", ("user", "short question"))
    out = routed.run_raw(record, headers=(("tenant", b"beta"),))
    assert out.stats["mode"] == "off"
    assert out.stats["route"]["source"] == "threshold"
    assert out.stats["route"]["requested_by"] == "tenant"
    assert out.stats["route"]["tenant"] == "beta"
    assert out.stats["route"]["tokens"] == out.stats["tokens_before"]


def test_an_unknown_combo_in_a_record_is_a_record_error(routed: RoutedPipeline) -> None:
    record = tool_output_record("t5", "x")
    record["combo"] = "nope"
    with pytest.raises(RecordError, match="unknown combo 'nope'; valid combos: json-only, tight"):
        routed.run_raw(record)
    with pytest.raises(RecordError, match=r"header ctxpress\.combo: unknown combo 'zz'"):
        routed.run_raw(tool_output_record("t6", "x"), headers=(("ctxpress.combo", b"zz"),))
    record["combo"] = 3
    with pytest.raises(RecordError, match="field 'combo' must be a string"):
        routed.run_raw(record)
    without = RoutedPipeline(Settings())
    record["combo"] = "json-only"
    with pytest.raises(RecordError, match=r"valid combos: \(none: no combos file loaded\)"):
        without.run_raw(record)


def test_without_combo_or_auto_the_output_is_the_plain_pipelines() -> None:
    plain = Pipeline(Settings())
    routed = RoutedPipeline(Settings(), combos=parse(NO_TOPICS))
    records = [
        tool_output_record("p1", ROWS, command="cat items.json"),
        openai_record("p2", ("user", "list them"), ("tool", ROWS), ("assistant", "ok")),
        {**tool_output_record("p3", ROWS), "mode": "standard"},
    ]
    for record in records:
        a = plain.run_raw(dict(record), mode="aggressive" if record["id"] == "p2" else None)
        b = routed.run_raw(dict(record), mode="aggressive" if record["id"] == "p2" else None)
        a.stats.pop("duration_ms"), b.stats.pop("duration_ms")
        for e in (*a.stats["engines"], *b.stats["engines"]):
            e.pop("ms")
        assert a.record == b.record
        assert a.mode == b.mode
        assert "route" not in b.stats and "combo" not in b.stats


def test_run_routed_gives_a_plain_pipeline_only_the_mode_header() -> None:
    from workers.pipeline.combos import run_routed

    plain = Pipeline(Settings())
    record = tool_output_record("r1", ROWS)
    out = run_routed(plain, record, "off", (("ctxpress.combo", b"json-only"),), "t.transcripts")
    assert out.stats["mode"] == "off" and "combo" not in out.stats
    assert route_fields(out.stats) == {}
    routed = RoutedPipeline(Settings(), combos=parse(TABLE))
    out = run_routed(routed, record, "off", (("ctxpress.combo", b"json-only"),), "t.transcripts")
    assert out.stats["combo"] == "json-only"
