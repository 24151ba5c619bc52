"""Listing views (issue 13) over drawn path listings: every path readable, expand exact.

Paths are drawn from nested directories with awkward names (blanks, quotes,
colons, ``:``-endings, unicode, dots); a view, when one is written, must show
every input path (read back by :func:`workers.engines.listing.tree_paths`) and
expand to the input byte for byte.  Plain names in shared directories always
get a view.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from workers.core.offload import MemoryStore
from workers.core.tokens import TokenCounter
from workers.engines.listing import compact_listing, tree_paths
from workers.markers import structured_view
from workers.markers.stash import expand_offload

TOKENS = TokenCounter()
_PLAIN = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-.", min_size=1, max_size=12
).filter(lambda s: s not in (".", ".."))
_ODD = st.sampled_from(["with space", 'quo"te', "colon:", "é-ü.txt", "a:b", "-dash", "x.", "[x]"])
_NAME = st.one_of(_PLAIN, _PLAIN, _PLAIN, _ODD)


@st.composite
def listings(draw: st.DrawFn, names: st.SearchStrategy[str] = _NAME) -> list[str]:
    root = draw(st.sampled_from([".", "", "/usr/lib", "src"]))
    dirs = [root]
    for _ in range(draw(st.integers(1, 5))):
        parent = draw(st.sampled_from(dirs))
        dirs.append(f"{parent}/{draw(names)}" if parent else draw(names))
    paths: list[str] = []
    for d in dirs:
        for _ in range(draw(st.integers(0, 8))):
            name = draw(names)
            paths.append(f"{d}/{name}" if d else name)
    return list(dict.fromkeys(p for p in paths if p not in dirs))


def _restore(text: str, stash: dict[str, str]) -> str:
    store = MemoryStore()
    store.put_many(stash)
    return structured_view.decode(expand_offload(text, store, []))


def _shown(view: str) -> set[str]:
    return {p.rstrip("/") for p in tree_paths(view.split(structured_view.HEADER_LINE)[0])}


@settings(max_examples=150, deadline=None)
@given(listings())
def test_a_view_shows_every_path_and_expands_exactly(paths: list[str]) -> None:
    text = "\n".join(paths) + "\n"
    view = compact_listing(text, TOKENS, "find", "find .")
    if view is None:
        return
    assert set(paths) <= _shown(view.text)
    assert _restore(view.text, view.stash) == text


@settings(max_examples=60, deadline=None)
@given(listings(_PLAIN))
def test_plain_names_in_shared_directories_get_a_view(paths: list[str]) -> None:
    text = "\n".join(paths) + "\n"
    view = compact_listing(text, TOKENS, "find", "find .")
    if len(paths) >= 24 and len({p.rsplit("/", 1)[0] for p in paths}) * 6 <= len(paths):
        assert view is not None
    if view is not None:
        assert set(paths) <= _shown(view.text)
        assert _restore(view.text, view.stash) == text


_LINE = st.one_of(
    st.text(max_size=40),
    st.builds(lambda a, b: f"{a}/{b}", st.text(max_size=15), st.text(max_size=15)),
    st.sampled_from(['"x', '"a/": b', "x/: y", "total 12", "commit " + "a" * 40, " a | 3 ++-"]),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_LINE, min_size=8, max_size=40), st.sampled_from(["find", "ls", "git-log", ""]))
def test_any_text_gives_a_sound_view_or_none(lines: list[str], hint: str) -> None:
    text = "\n".join(lines)
    view = compact_listing(text, TOKENS, hint)
    if view is not None:
        assert _restore(view.text, view.stash) == text
