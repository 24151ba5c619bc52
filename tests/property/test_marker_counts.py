"""A stash marker's token count before its key is known (the tool filter decides most runs so).

``… NOTE <<cx:KEY>>`` counts as its text up to ``<<cx`` plus ``:KEY>>``: no pre-token of
cl100k or o200k crosses ``x:`` (``cx`` is a run of letters, ``:`` is none), and ``:KEY>>``
(19 ASCII characters, ``>>`` a pre-token of its own) is 2 to 19 tokens whatever the key.  So
:func:`~workers.engines.toolfilter.render._worth_before_key` may answer without the key (the
secret scan and digest of the run), and when it answers, it answers as
:func:`~workers.engines.toolfilter.render._worth` does with the real key.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workers.core.tokens import TokenCounter
from workers.engines.toolfilter.render import (
    _NO_KEY,
    _TAIL_TOKENS,
    _worth,
    _worth_before_key,
)
from workers.markers.stash import LITERAL, offload_marker, short_note

ENCODINGS = ["cl100k_base", "o200k_base"]
KEYS = st.text(alphabet="0123456789abcdef", min_size=16, max_size=16)
NOTES = st.one_of(
    st.text(max_size=80),
    st.sampled_from(
        [
            "12 lines omitted (all PASSED)",
            "3 snippet lines, 2 help lines omitted",
            "warning -Wunused-variable 4 more times at src/a.c:13:23 src/a.c:19:23",
            "30 passing tests omitted",
            "",
        ]
    ),
)


@pytest.fixture(scope="module", params=ENCODINGS)
def counter(request: pytest.FixtureRequest) -> TokenCounter:
    try:
        return TokenCounter(request.param)
    except Exception as exc:  # o200k's file may be missing offline
        pytest.skip(f"{request.param}: {exc}")


@settings(max_examples=400, deadline=None)
@given(note=NOTES, key=KEYS)
def test_a_marker_counts_as_its_head_and_its_key_part(
    counter: TokenCounter, note: str, key: str
) -> None:
    marker = offload_marker(short_note(note), key)
    cut = marker.rindex(LITERAL) + len(LITERAL) - 1
    tail = counter.count(marker[cut:])
    assert counter.count(marker) == counter.count(marker[:cut]) + tail
    low, high = _TAIL_TOKENS
    assert low <= tail <= high


RUNS = st.one_of(
    st.text(max_size=300),
    st.lists(
        st.sampled_from(
            [
                "tests/test_a.py::test_x PASSED                     [ 10%]",
                "    ✓ price of 3 units 0ms",
                "      |         ^~~~",
                "[INFO] ",
                "=== RUN   TestTotal/case_3",
                "    at org.springframework.web.servlet.DispatcherServlet.doDispatch(X.java:1)",
                "",
            ]
        ),
        max_size=12,
    ).map("\n".join),
)


@settings(max_examples=400, deadline=None)
@given(run=RUNS, note=NOTES, key=KEYS)
def test_the_answer_before_the_key_is_the_answer_with_it(
    counter: TokenCounter, run: str, note: str, key: str
) -> None:
    placeholder = offload_marker(short_note(note), _NO_KEY)
    sure = _worth_before_key(run, placeholder, counter)
    if sure is not None:
        assert sure == _worth(run, offload_marker(short_note(note), key), counter)
