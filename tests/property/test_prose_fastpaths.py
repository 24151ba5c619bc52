"""critical_flags with its fast paths flags exactly the lines of the plain loop."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from workers.engines import _prose as P


def reference_flags(
    text: str,
    lines: Sequence[str],
    kind: str,
    *,
    distinct: bool = True,
    pack: P.LanguagePack | None = None,
    keep_markers: bool = True,
    command: str | None = None,
) -> list[bool]:
    """The plain per-line loop, as it was before the fast paths."""
    flags = [False] * len(lines)
    critical = P.critical_lines(text, kind, command)
    exact: set[str] = set()
    shaped: set[str] = set()
    for ckind, cline in critical:
        (shaped if ckind in P.SHAPED_KINDS else exact).add(cline)
    seen: set[str] = set()
    seen_shapes: set[str] = set()
    check_markers = "<<cx:" in text or "[[" in text
    plain_breaks = P._OTHER_BREAKS.search(text) is None
    for i, line in enumerate(lines):
        if check_markers and (
            P.has_marker(line) if keep_markers else "[[" in line and P._BACKREF.search(line)
        ):
            flags[i] = True
            continue
        if pack is not None and pack.has_polarity(line):
            flags[i] = True
            continue
        if len(line) > P.CRITICAL_CAP and P._ERROR_LINE.search(line, P.CRITICAL_CAP - 40):
            # The gate only reads the first 600 characters of a line; an error
            # word further on (a minified JSON document) still keeps it visible.
            flags[i] = True
            continue
        if not critical:
            continue
        for key in [line.strip()[: P.CRITICAL_CAP]] if plain_breaks else P.gate_keys(line):
            if key in exact and (not distinct or key not in seen):
                seen.add(key)
                flags[i] = True
            if key in shaped:
                shape = P.line_shape(key)
                if not distinct or shape not in seen_shapes:
                    seen_shapes.add(shape)
                    flags[i] = True
    if critical and len(seen) < len(exact):
        P._flag_partial_tokens(text, lines, exact - seen, flags)
    return flags


LINE_PARTS = st.sampled_from(
    [
        "Error: disk full at 0x1f", "Error: disk full at 0x2e", "ValueError: bad 12",
        "ValueError: bad 13", "FAILED tests/a.py::t", "FAILED tests/a.py::t", "ok",
        "You must not delete it.", "never push", "see <<cx:0123456789abcdef>>",
        "[[dup:v1 src=m1 at=0 len=5]]", "[[read:v1 path=a.py]]", "src/a.py:3:1: E1 x",
        "x" * 620 + " error here", "plain line", "", "  ", "a\u2028b error", "warning: w",
        "src/a.py:12:match", "Traceback (most recent call last):",
    ]
)  # fmt: skip
TEXTS = st.lists(LINE_PARTS, max_size=20).map("\n".join)


@settings(max_examples=1500, deadline=None)
@given(
    TEXTS,
    st.sampled_from(["tool_result", "text"]),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.sampled_from([None, "grep -rn x src", "git status -s"]),
)
def test_critical_flags_equal_the_plain_loop(
    text: str, kind: str, distinct: bool, with_pack: bool, keep_markers: bool, command: str | None
) -> None:
    lines = text.split("\n")
    pack = P.language_pack("en") if with_pack else None
    options = dict(distinct=distinct, pack=pack, keep_markers=keep_markers, command=command)
    assert P.critical_flags(text, lines, kind, **options) == reference_flags(
        text, lines, kind, **options
    )
