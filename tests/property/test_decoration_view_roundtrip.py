"""Decoration views of the toolfilter (issue 13) over drawn diagnostics: expand exact.

A gcc or tsc ``--pretty`` report is drawn finding by finding: headline, code frame with any
text in it (unicode, quotes, backslashes, tabs, trailing blanks, ``<<`` and ``…``), an
underline, blank lines or none between findings.  Whatever the filter writes (markers, a
view, both or nothing), expanding gives the input back byte for byte and every headline is in
sight.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from workers.core.offload import MemoryStore
from workers.core.tokens import TokenCounter
from workers.engines._filters import builtin_filters
from workers.engines.toolfilter.render import filter_text
from workers.markers import structured_view
from workers.markers.stash import expand_offload

TOKENS = TokenCounter()
_CODE = st.lists(
    st.sampled_from([*"abc xyz_()[]{};=+-*/\\\"'`\t é€…<>", "<<", "    ", "<<cx:"]),
    max_size=30,
).map("".join)


@st.composite
def reports(draw: st.DrawFn) -> tuple[str, str, list[str]]:
    tsc = draw(st.booleans())
    heads: list[str] = []
    out: list[str] = []
    for k in range(draw(st.integers(1, 14))):
        line = draw(st.integers(1, 9999))
        col = draw(st.integers(1, 80))
        if tsc:
            head = f"src/m{k}.ts:{line}:{col} - error TS2322: Type 'string' is not number."
            out += [head, "", f"{line}   {draw(_CODE)}", " " * col + "~" * draw(st.integers(1, 9))]
        else:
            head = f"src/m{k}.c:{line}:{col}: warning: unused variable 'v{k}' [-Wunused-variable]"
            out += [head, f" {line:4d} | {draw(_CODE)}", "      | " + " " * col + "^~~"]
        heads.append(head)
        out += [""] * draw(st.integers(0, 2))
    end = draw(st.sampled_from(["", "\n", "\n\n"]))
    return ("\n".join(out) + end, "npx tsc --noEmit --pretty" if tsc else "make", heads)


def _restore(text: str, stash: dict[str, str]) -> str:
    store = MemoryStore()
    store.put_many(stash)
    return structured_view.decode(expand_offload(text, store, []))


@settings(max_examples=200, deadline=None)
@given(reports())
def test_whatever_is_written_expands_exactly(report: tuple[str, str, list[str]]) -> None:
    text, command, heads = report
    filt = builtin_filters().select(command, None, text)
    assert filt is not None
    result = filter_text(text, filt, TOKENS)
    if result is None:
        return
    assert _restore(result.text, result.stash) == text
    shown = result.text.split(structured_view.HEADER_LINE)[0]
    for head in heads:
        assert head in shown


def test_many_findings_get_a_view() -> None:
    lines = []
    for k in range(10):
        lines += [f"src/m{k}.c:{k + 1}:5: warning: unused variable 'v{k}' [-Wunused-variable]"]
        lines += [f"  {k + 1:3d} |     int v{k};", "      |     ^~~"]
    text = "\n".join(lines) + "\n"
    filt = builtin_filters().select("make", None, text)
    assert filt is not None
    result = filter_text(text, filt, TOKENS)
    assert result is not None
    assert structured_view.HEADER_LINE in result.text
    assert _restore(result.text, result.stash) == text
