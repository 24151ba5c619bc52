"""A stack overflow's thousand frames of one recursion are one frame in sight.

Held-out set 26: ``java tools/TierResolver.java`` ended in a ``StackOverflowError`` with
1,017 ``at TierResolver.effectiveTier(TierResolver.java:18)`` lines; standard kept every one
(13,247 -> 13,228 tokens: user frames stay) while lossless saved 97 %.  A frame that repeats
one of the few frames right above it (a recursion's cycle) goes; the copy above stays in
sight, so the gate still sees the line as written."""

from __future__ import annotations

from tests.support.sound import compress_soundly, tool_output

COMMAND = "java tools/TierResolver.java"


def _overflow(cycle: list[str], depth: int) -> str:
    lines = [
        "ACC-0001 -> GOLD",
        'Exception in thread "main" java.lang.StackOverflowError',
        "\tat java.base/java.util.HashMap.hash(HashMap.java:338)",
        "\tat java.base/java.util.HashMap.get(HashMap.java:556)",
        "\tat TierResolver.effectiveTier(TierResolver.java:10)",
    ]
    lines += [cycle[k % len(cycle)] for k in range(depth)]
    return "\n".join(lines) + "\n"


def test_a_recursion_is_shown_once() -> None:
    frame = "\tat TierResolver.effectiveTier(TierResolver.java:18)"
    text = _overflow([frame], 1017)
    out, saved = compress_soundly(tool_output(text, COMMAND), "standard")
    shown = out.splitlines()
    assert shown.count(frame) == 1
    assert "\tat TierResolver.effectiveTier(TierResolver.java:10)" in shown
    assert "… 1016 recursive frames omitted" in out
    assert saved > 0.95


def test_a_cycle_of_two_frames_is_shown_once() -> None:
    cycle = ["\tat Tree.walk(Tree.java:41)", "\tat Tree.visit(Tree.java:77)"]
    text = _overflow(cycle, 600)
    out, saved = compress_soundly(tool_output(text, COMMAND), "standard")
    shown = out.splitlines()
    assert shown.count(cycle[0]) == 1 and shown.count(cycle[1]) == 1
    assert saved > 0.9


def test_the_same_frame_in_two_exceptions_stays_in_both() -> None:
    frame = "\tat com.shop.Orders.place(Orders.java:52)"
    text = (
        "\n".join(
            [
                'Exception in thread "main" java.lang.IllegalStateException: order 12 failed',
                frame,
                "\tat com.shop.Main.main(Main.java:9)",
                'Caused by: java.lang.NumberFormatException: For input string: "x"',
                frame,
                "\tat com.shop.Main.main(Main.java:9)",
            ]
        )
        + "\n"
    )
    out, _ = compress_soundly(tool_output(text, COMMAND), "standard")
    assert out.splitlines().count(frame) == 2
