"""datauri: base64 data URIs are stashed behind a marker naming the type and size."""

from __future__ import annotations

import base64
import time

import pytest

from tests.conftest import Corpus
from workers.core.offload import stash_key
from workers.core.tokens import TokenCounter
from workers.engines.base import EngineContext
from workers.engines.datauri import DataUriEngine, stash_data_uris
from workers.messages.model import Unit
from workers.testing import check_corpus_changes, expanded, make_unit

CTX = EngineContext(tokens=TokenCounter())
PNG = "data:image/png;base64," + base64.b64encode(bytes(range(256)) * 3).decode()


def unit(i: int, text: str, frozen: bool = False) -> Unit:
    return make_unit(i, text, kind="text", role="user", frozen=frozen)


def test_uri_in_html_is_stashed_with_mime_and_size() -> None:
    text = f'<p>logo</p><img src="{PNG}" alt="x">'
    new, stash, count = stash_data_uris(text, CTX)
    key = stash_key(PNG)
    assert new == (
        '<p>logo</p><img src="… data URI image/png base64, 1,046 chars (~768 B decoded) '
        f'omitted <<cx:{key}>>" alt="x">'
    )
    assert stash == {key: PNG}
    assert count == 1
    assert expanded(new, stash) == text


def test_any_mime_and_parameters() -> None:
    uri = "data:application/pdf;name=report.pdf;base64," + "QUJD" * 40
    new, stash, _ = stash_data_uris(f"see {uri}\n", CTX)
    assert new.startswith("see … data URI application/pdf base64, 204 chars")
    assert expanded(new, stash) == f"see {uri}\n"


def test_short_uris_and_plain_text_stay() -> None:
    short = "data:image/gif;base64,R0lGODlhAQABAAAAACw="
    assert stash_data_uris(short, CTX) == (short, {}, 0)
    assert stash_data_uris("no uris here", CTX) == ("no uris here", {}, 0)


def test_ellipsis_earlier_on_the_line_does_not_break_expand() -> None:
    text = f"wait… then {PNG}"
    new, stash, _ = stash_data_uris(text, CTX)
    assert expanded(new, stash) == text


def test_engine_skips_frozen_units_and_reports_details() -> None:
    units = [unit(0, PNG, frozen=True), unit(1, f"a {PNG} b {PNG}")]
    out = DataUriEngine().apply(units, CTX)
    assert out.texts[0] == PNG
    assert out.texts[1].count("<<cx:") == 2
    assert out.details == {"data_uris": 2, "chars_stashed": len(PNG)}
    assert expanded(out.texts[1], out.stash) == f"a {PNG} b {PNG}"


@pytest.mark.slow
def test_hostile_input_is_linear() -> None:
    text = "data:" * 2_000_000 + ";base64," + "A" * 5_000_000
    started = time.perf_counter()
    stash_data_uris(text, CTX)
    assert time.perf_counter() - started < 10


# the generated corpus holds re-read files and an inline PNG; the public one neither
CORPUS_MIN_CHANGES = {"generated": 1, "shared": 0}


@pytest.mark.slow
def test_corpus_every_change_expands_back_and_passes_the_gate(
    corpus: Corpus, corpus_lines: list[bytes]
) -> None:
    changed = check_corpus_changes(DataUriEngine(), corpus_lines, CTX)
    assert changed >= CORPUS_MIN_CHANGES[corpus.name]
