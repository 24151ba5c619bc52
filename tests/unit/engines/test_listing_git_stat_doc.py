"""What the module doc and the README say of the git-stat view, checked on one log.

Dates and commit ids stay, an author line that repeats the commit above is
stashed, and a bar git scaled to its width stays as git wrote it after the
total (an estimate from the bar would say +4 -3 where git's numstat says +3 -4).
"""

from __future__ import annotations

from workers.core.tokens import TokenCounter
from workers.engines.listing import compact_listing

AUTHOR = "Author: Ann Example <ann@example.com>"


def _commit(n: int, stats: list[str]) -> str:
    return "\n".join(
        [
            f"commit {n:040x}",
            AUTHOR,
            f"Date:   Tue Dec {n} 14:20:59 2026 +0000",
            "",
            f"    change number {n}",
            "",
            *(f"    a body line that the view leaves to the stash ({k})" for k in range(6)),
            "",
            *stats,
            f" {len(stats)} files changed, 30 insertions(+), 20 deletions(-)",
            "",
        ]
    )


def test_the_git_stat_view_does_what_its_doc_says() -> None:
    stats = [f" src/module_{i}.py | {i + 2} {'+' * (i + 1)}-" for i in range(9)]
    text = _commit(1, [" README.md | 7 ++--", *stats]) + _commit(2, stats)
    view = compact_listing(text, TokenCounter(), "git-log", "git log --stat")
    assert view is not None and view.kind == "git-stat"
    shown = view.text.split("\n<<cx:view>>")[0]
    assert shown.count(AUTHOR) == 1  # the second commit's is the same: stashed
    assert "Date:   Tue Dec 1 14:20:59 2026 +0000" in shown
    assert "Date:   Tue Dec 2 14:20:59 2026 +0000" in shown
    assert f"commit {2:040x}" in shown
    assert "a body line" not in shown
    assert "README.md 7 ++--" in shown and "~" not in shown  # scaled bar: as git wrote it
    assert "module_0.py +1 -1" in shown  # unscaled bar: exact
