"""Content detection's one-test prefilter decides exactly like trying every filter.

:meth:`FilterSet.by_content` first asks one union of every filter's line
signatures whether any filter matches a line; a line it turns away counts as
a miss for every filter.  The pick must be the one made without it, for any
lines: the filters' own sample lines, pieces of them, and any text.
"""

from __future__ import annotations

from functools import cache

from hypothesis import given, settings
from hypothesis import strategies as st

from workers.engines._filters.loader import builtin_filters
from workers.engines._filters.select import FilterSet, _found_by_any


@cache
def _sample_lines() -> list[str]:
    lines = {
        line
        for filt in builtin_filters().filters
        for sample in filt.verify
        for line in sample.input.splitlines()
        if line.strip()
    }
    return sorted(lines)


def _line() -> st.SearchStrategy[str]:
    sample = st.sampled_from(_sample_lines())
    return st.one_of(
        sample,
        st.tuples(sample, st.integers(0, 60)).map(lambda p: p[0][: p[1]]),
        st.tuples(sample, st.text(max_size=12)).map(lambda p: p[1] + p[0]),
        st.text(max_size=60),
    )


def _without_prefilter(filters: FilterSet) -> FilterSet:
    plain = FilterSet.of(filters.filters)
    object.__setattr__(plain, "_content_any", None)
    return plain


@settings(max_examples=400, deadline=None)
@given(st.lists(_line(), min_size=0, max_size=40))
def test_by_content_picks_the_same_filter(lines: list[str]) -> None:
    filters = builtin_filters()
    assert filters._content_any is not None  # the built-in filters' union compiles
    text = "\n".join(lines)
    assert filters.by_content(text) is _without_prefilter(filters).by_content(text)


@settings(max_examples=1500, deadline=None)
@given(_line())
def test_union_finds_a_line_iff_some_filter_does(line: str) -> None:
    filters = builtin_filters()
    assert filters._content_any is not None
    expected = any(m.find(line) >= 0 for _, matchers in filters._content for m in matchers)
    assert _found_by_any(filters._content_any, line) == expected
