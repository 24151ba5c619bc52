"""``npm ls --all``: the tree's top level (the project's own dependencies) stays.

Held-out set 31: a 594-line ``npm ls --all`` of a workspace monorepo kept 36 lines chosen by
keyword (``es-errors@1.3.0``: "errors") and none of the project's own dependencies.  Now its
top-level entries stay (10,244 -> 1,146 tokens there, from 714), deeper levels are stashed.
"""

from __future__ import annotations

from tests.support.sound import compress_soundly, tool_output


def _tree() -> str:
    lines = ["shop@1.0.0 /srv/shop"]
    for top in range(12):
        lines.append(f"├─┬ dep-{top}@{top}.1.0")
        for child in range(8):
            lines.append(f"│ ├─┬ dep-{top}-{child}@2.{child}.0")
            lines += [f"│ │ ├── leaf-{top}-{child}-{k}@1.0.{k}" for k in range(4)]
    lines.append("└── typescript@5.6.3")
    return "\n".join(lines) + "\n"


def test_the_top_level_stays() -> None:
    out, saved = compress_soundly(tool_output(_tree(), "npm ls --all"), "standard")
    shown = out.splitlines()
    for top in range(12):
        assert f"├─┬ dep-{top}@{top}.1.0" in shown
    assert "└── typescript@5.6.3" in shown
    assert "│ │ ├── leaf-5-3-2@1.0.2" not in shown  # deeper levels are stashed
    assert saved > 0.7
