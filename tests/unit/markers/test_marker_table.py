"""The marker table: one row per marker, decode order, and loud failure when a row is missing."""

from __future__ import annotations

import pytest

import workers.markers as markers
from workers.core.catalog import LOSSLESS, MODES
from workers.core.offload import MemoryStore, stash_key
from workers.core.settings import Settings
from workers.engines import resolve
from workers.markers import MARKERS, DecodeInput, MissingMarker, has_marker, marker_of
from workers.markers.stash import offload_marker
from workers.pipeline.expand import expand_text
from workers.pipeline.runner import Pipeline


def test_every_lossless_engine_of_every_mode_has_its_marker() -> None:
    lossless = {e.name for names in MODES.values() for e in resolve(names) if e.lossless}
    assert lossless == set(LOSSLESS)
    assert {marker_of(name).engine for name in lossless} == lossless


def test_markers_decode_in_the_reverse_of_the_order_engines_write_them() -> None:
    written = [m.engine for m in MARKERS if m.engine is not None]
    assert written == list(reversed(LOSSLESS))
    # prefix, written last, puts its prefixes back first, template fills its tables in; then
    # align (written after any lossy engine of a combo) widens its runs: its positions are in
    # the text as it was written, markers and all
    assert [m.name for m in MARKERS][:4] == ["prefix", "template", "align", "stash"]


def test_a_lossless_engine_without_a_marker_row_fails_when_the_pipeline_is_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    without_min = tuple(m for m in MARKERS if m.name != "json-min")
    monkeypatch.setattr(markers, "MARKERS", without_min)
    with pytest.raises(MissingMarker, match="'jsonminify' has no marker"):
        Pipeline(Settings(mode="lossless"))
    Pipeline(Settings(mode="off"))  # a mode without that engine still builds


def test_marker_of_names_the_engine_and_what_to_do() -> None:
    with pytest.raises(MissingMarker, match=r"'nope'.*add its marker module"):
        marker_of("nope")


@pytest.mark.parametrize(
    ("text", "locked"),
    [
        ("plain text [[ not a marker", False),
        ("see <<cx:0123456789abcdef>>", True),
        ("[[dup:v1 src=m0 at=0 len=3]]", True),
        ("[[/json-table:", True),
        ("[[json-min:v1]]{}[[/json-min]]", True),
        ("[[read:x]] is reserved", True),
        ("<<cx:view>>", True),
        ("[[json-tables]] is not one", False),
    ],
)
def test_the_lock_is_read_from_the_table(text: str, locked: bool) -> None:
    assert has_marker(text) is locked


def test_expand_runs_the_table_in_order_stash_first_dup_last() -> None:
    block = "line one of a block\nline two of a block\nline three of the block"
    stashed = f"[[dup:v1 src=m0 at=0 len={len(block)} | same]]"
    key = stash_key(stashed)
    store = MemoryStore()
    store.put(key, stashed)
    text = offload_marker("1 line omitted", key)
    # the stash holds a dup marker: it is only resolved because dup decodes after stash
    assert expand_text(text, {"m0": block}, store) == block
    missing: list[str] = []
    first_store_reader = next(m for m in MARKERS if m.name == "stash")
    assert first_store_reader.decode(text, DecodeInput({}, None, missing)) == text
    assert missing == [key]
