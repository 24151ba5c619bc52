"""rustc/clippy findings: the same headline in another file is another finding, so every
location stays under its own headline (a headline is no repeat of the one above when its
`` --> `` line differs).  The shape follows ``cargo clippy`` of the corpus crate
(:func:`workers.bench.toolchains.rust_captures`)."""

from __future__ import annotations

import re

import pytest

from tests.support.sound import compress_soundly, tool_output


def clippy_output(files: int = 5) -> str:
    """Each file: an unneeded return, then one lint twice (the second folds as a repeat in
    that file, and its marker run must not take the next file's first headline along)."""
    out = ["    Checking books v0.1.0 (/home/dev/books)"]
    for f in range(files):
        for headline, line in (
            ("warning: unneeded `return` statement", 7),
            ("warning: manual `RangeInclusive::contains` implementation", 12),
            ("warning: manual `RangeInclusive::contains` implementation", 16),
        ):
            out += [
                headline,
                f" --> src/mod{f}.rs:{line}:5",
                "  |",
                f"{line} |     return total;",
                "  |     ^^^^^^^^^^^^",
                "  |",
                "  = help: for further information visit https://rust-lang.github.io/rust-clippy/",
                "",
            ]
    out += [f"warning: `books` (lib) generated {3 * files} warnings", "    Finished `dev` profile"]
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("mode", ["standard", "aggressive"])
def test_every_location_stays_under_its_headline(mode: str) -> None:
    compressed, _ = compress_soundly(tool_output(clippy_output(), "cargo clippy"), mode)
    lines = compressed.splitlines()
    for k, line in enumerate(lines):
        if re.match(r"^\s*--> src/", line):
            assert lines[k - 1].startswith("warning: "), (line, lines[k - 1])
    for f in range(5):
        assert f" --> src/mod{f}.rs:7:5" in compressed


def test_a_path_staged_and_modified_again_is_shown_in_both_sections() -> None:
    # git status: the same line under another header is another fact (staged, then changed
    # again in the working tree), never a repeat of the first
    paths = [f"src/payments/mod{k}.py" for k in range(12)]
    lines = ["On branch main", "Changes to be committed:"]
    lines.append('  (use "git restore --staged <file>..." to unstage)')
    lines += [f"\tmodified:   {p}" for p in paths]
    lines += ["", "Changes not staged for commit:"]
    lines.append('  (use "git add <file>..." to update what will be committed)')
    lines.append('  (use "git restore <file>..." to discard changes in working directory)')
    lines += [f"\tmodified:   {p}" for p in paths]
    text = "\n".join(lines) + "\n"
    compressed, _ = compress_soundly(tool_output(text, "git status"), "standard")
    shown = compressed.splitlines()
    for p in paths:
        assert shown.count(f"\tmodified:   {p}") == 2, p
