"""The ``ansi`` entry's positions, written and read with C-level scans, match a plain
character-by-character reading of the grammar (:mod:`workers.markers.ansi`).

``entry`` counts a gap's non-whitespace characters with ``str.count`` and
``restore`` skips them with one regex match per up to 256 (10 MB of coloured
``ls`` output: entry 2.2 -> 1.2 s, restore 4.6 -> 2.1 s), and both read the
whitespace after a character once however many runs stand in it.  The reference below
is the first implementation (one regex match per non-whitespace character);
the two must agree on every text, and on every whitespace-normalised or cut
text the entry is applied to.
"""

from __future__ import annotations

import os
import re
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from workers.markers import ansi

EXAMPLES = int(os.environ.get("CTXPRESS_FUZZ_EXAMPLES", "200"))
_NON_WS = re.compile(r"[^ \t\r\n\f\v]")


def _reference_entry(plain: str, runs: list[tuple[int, str]]) -> str:
    items: list[str] = []
    last_count = count = scanned = anchor = 0
    for pos, run in runs:
        for m in _NON_WS.finditer(plain, scanned, pos):
            count += 1
            anchor = m.end()
        scanned = pos
        gap = plain[anchor:pos]
        lines = gap.count("\n")
        col = pos - anchor - (gap.rfind("\n") + 1 if lines else 0)
        items.append(
            f"{count - last_count}{f'~{lines}' if lines else ''}{f'.{col}' if col else ''}{run}"
        )
        last_count = count
    return "\t".join(items)


def _reference_restore(text: str, value: str) -> str:
    runs = ansi.parse(value)
    if runs is None:
        return text
    pieces: list[str] = []
    n = len(text)
    written = i = count = anchor = 0
    for target, lines, col, run in runs:
        while count < target:
            m = _NON_WS.search(text, i)
            if m is None:
                return text
            count += 1
            i = anchor = m.end()
        j = k = anchor
        seen = 0
        while seen < lines and k < n and text[k] in ansi.WS:
            k += 1
            if text[k - 1] == "\n":
                seen += 1
                j = k
        end = j + col
        while j < end and j < n and text[j] in ansi.WS and text[j] != "\n":
            j += 1
        j = max(j, written)
        pieces.append(text[written:j])
        pieces.append(run)
        written = i = j
    pieces.append(text[written:])
    return "".join(pieces)


_PIECES = st.sampled_from(
    [
        "a",
        "word",
        "é",
        "\U0001f600",
        " ",
        "   ",
        "\t",
        "\n",
        "\r\n",
        "\x0b",
        "\x0c",
        "\n\n",
        "\x1b[31m",
        "\x1b[0m",
        "\x1b[1;32m",
        "\x1b]8;;https://x.y/\x1b\\",
        "\x1b7",
        "\x1b",
        "x" * 300,
    ]
)
_TEXTS = st.lists(_PIECES, max_size=60).map("".join)


def _variants(plain: str) -> list[str]:
    lines = plain.split("\n")
    return [
        plain,
        plain.strip(),
        "\n".join(line.rstrip() for line in lines),
        re.sub(r"\n{3,}", "\n\n", plain),
        plain[: len(plain) // 2],
        plain + " tail",
    ]


@settings(max_examples=EXAMPLES, deadline=None)
@given(_TEXTS)
def test_entry_and_restore_agree_with_the_reference(text: str) -> None:
    plain, runs = ansi.strip(text)
    if not runs:
        return
    value = ansi.entry(plain, runs)
    assert value == _reference_entry(plain, runs)
    assert ansi.restore(plain, value) == text
    for variant in _variants(plain):
        assert ansi.restore(variant, value) == _reference_restore(variant, value)


def test_a_long_gap_is_skipped_in_steps() -> None:
    # more non-whitespace characters between two runs than one skip match takes
    text = "\x1b[31m" + "ab " * 400 + "\x1b[0m" + "c" * 1000 + "\x1b[1m!"
    plain, runs = ansi.strip(text)
    value = ansi.entry(plain, runs)
    assert value == "0\x1b[31m\t800.1\x1b[0m\t1000\x1b[1m"
    assert ansi.restore(plain, value) == text
    assert ansi.restore(plain[:-500], value) == plain[:-500]  # counts more than the text


def test_runs_in_one_stretch_of_whitespace_are_read_once() -> None:
    # a reset on each blank line after one character: every run counts from the same
    # character, so reading the whitespace again for each run was quadratic
    # (20 000 runs: restore 28 s before, 0.05 s now; a 200 KB text took 115 s)
    text = "x\n" + "\x1b[0m\n" * 20_000 + "y" + " \x1b[1m" * 20_000
    plain, runs = ansi.strip(text)
    started = time.perf_counter()
    value = ansi.entry(plain, runs)
    assert ansi.restore(plain, value) == text
    assert time.perf_counter() - started < 3.0
    # the same positions as the reference on a cut of it
    short = "x\n" + "\x1b[0m\n" * 300 + "y" + " \x1b[1m" * 300
    plain, runs = ansi.strip(short)
    value = ansi.entry(plain, runs)
    assert value == _reference_entry(plain, runs)
    for variant in _variants(plain):
        assert ansi.restore(variant, value) == _reference_restore(variant, value)
