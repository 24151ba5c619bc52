"""``named_lines`` (literal search, rows made only when needed) names the lines the plain rule
names: per term its whole-word places (``(?<!\\w)term(?!\\w)``) and their lines; a term on at
most its limit of lines, said at most 4 times that often, names them; terms too common alone
name the lines holding most of them (two or more, one of them a name, on at most 6 lines)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from workers.engines._text import COMMON_SPOTS, NAMED_ID_ROWS, named_lines, term_limit

WORDS = st.sampled_from(["post", "503", "v1/refunds", "get", "200", "ok", "x-post", "_503", " "])


def _plain(text: str, terms: frozenset[str]) -> frozenset[int]:
    lowered = text.lower()
    lines = lowered.split("\n")
    found: set[int] = set()
    common: dict[str, set[int]] = {}
    for term in terms:
        if lowered.count(term) > COMMON_SPOTS:
            continue
        rx = re.compile(rf"(?<![\w]){re.escape(term)}(?![\w])")
        said = sum(len(rx.findall(line)) for line in lines)
        rows = {k for k, line in enumerate(lines) if rx.search(line)}
        if not rows:
            continue
        limit = term_limit(term)
        if said <= 4 * limit and len(rows) <= limit:
            found |= rows
        elif said < COMMON_SPOTS:
            common[term] = rows
    if len(common) >= 2 and any(term_limit(t) == NAMED_ID_ROWS for t in common):
        held: dict[int, int] = {}
        for rows in common.values():
            for row in rows:
                held[row] = held.get(row, 0) + 1
        most = max(held.values())
        best = [row for row, n in held.items() if n == most]
        if most >= 2 and len(best) <= NAMED_ID_ROWS:
            found.update(best)
    return frozenset(found)


@settings(max_examples=400, deadline=None)
@given(
    lines=st.lists(st.lists(WORDS, max_size=6).map(" ".join), max_size=40),
    terms=st.frozensets(st.sampled_from(["post", "503", "v1/refunds", "get", "ok"]), max_size=4),
)
def test_named_lines_are_the_plain_rules_lines(lines: list[str], terms: frozenset[str]) -> None:
    text = "\n".join(lines)
    assert named_lines(text, terms) == _plain(text, terms)
