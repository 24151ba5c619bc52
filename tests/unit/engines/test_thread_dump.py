"""A JVM thread dump: one thread of each stack in sight, the pool's copies folded.

Held-out set 26: ``jstack`` of a web service with 24 pooled workers, four of them BLOCKED on
the report lock; the generic filter kept the dump's head and tail and the BLOCKED threads,
the lock they wait for and the frame they wait in went into ``… 426 lines omitted``.  The
dump here is written in jstack's layout (JDK 17)."""

from __future__ import annotations

from tests.support.sound import compress_soundly, tool_output

COMMAND = "jstack 41233"
_LIB = [
    "\tat java.util.concurrent.ThreadPoolExecutor.runWorker(java.base@17.0.15/ThreadPoolExecutor.java:1136)",
    "\tat java.util.concurrent.ThreadPoolExecutor$Worker.run(java.base@17.0.15/ThreadPoolExecutor.java:635)",
    "\tat java.lang.Thread.run(java.base@17.0.15/Thread.java:840)",
]  # fmt: skip


def _header(name: str, number: int, state: str) -> str:
    return (
        f'"{name}" #{number} prio=5 os_prio=0 cpu={number * 1.7:.2f}ms elapsed=46.{number:02d}s '
        f"tid=0x00007f80140{number:05x} nid=0x22{number:02x} {state}  [0x00007f807d{number:02x}c000]"
    )


def _dump(idle: int, blocked: int) -> str:
    out = [
        "2026-12-07 17:18:14",
        "Full thread dump OpenJDK 64-Bit Server VM (17.0.15+6-Debian-1deb12u1 mixed mode, sharing):",
        "",
        "Threads class SMR info:",
        "_java_thread_list=0x00007f8020037e90, length=38, elements={",
        "0x00007f80a409c770, 0x00007f80a409db50, 0x00007f80a40a55b0, 0x00007f80a40a6960",
        "}",
        "",
    ]  # fmt: skip
    number = 15
    for k in range(idle):
        out += [
            _header(f"http-worker-{k + 1}", number, "waiting on condition"),
            "   java.lang.Thread.State: WAITING (parking)",
            "\tat jdk.internal.misc.Unsafe.park(java.base@17.0.15/Native Method)",
            f"\t- parking to wait for  <0x00000000fa3007{k % 3}8> (a java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject)",
            "\tat java.util.concurrent.locks.LockSupport.park(java.base@17.0.15/LockSupport.java:341)",
            *_LIB,
            "",
        ]  # fmt: skip
        number += 1
    for k in range(blocked):
        out += [
            _header(f"http-worker-{idle + k + 1}", number, "waiting for monitor entry"),
            "   java.lang.Thread.State: BLOCKED (on object monitor)",
            "\tat com.acme.ledger.web.LedgerServer.report(LedgerServer.java:138)",
            "\t- waiting to lock <0x00000000fa331450> (a java.util.ArrayList)",
            "\tat com.acme.ledger.web.LedgerServer.handle(LedgerServer.java:84)",
            *_LIB,
            "",
        ]
        number += 1
    out += [
        _header("http-worker-99", number, "waiting on condition"),
        "   java.lang.Thread.State: TIMED_WAITING (sleeping)",
        "\tat java.lang.Thread.sleep(java.base@17.0.15/Native Method)",
        "\tat com.acme.ledger.web.LedgerServer.report(LedgerServer.java:142)",
        "\t- locked <0x00000000fa331450> (a java.util.ArrayList)",
        "\tat com.acme.ledger.web.LedgerServer.handle(LedgerServer.java:84)",
        *_LIB,
        "",
        "JNI global refs: 12, weak refs: 0",
    ]
    return "\n".join(out) + "\n"


def test_each_stack_is_in_sight_once_with_its_locks() -> None:
    text = _dump(idle=20, blocked=4)
    out, saved = compress_soundly(tool_output(text, COMMAND), "standard")
    shown = out.splitlines()
    # the first BLOCKED thread whole but its runtime frames: state, the frame, the lock
    assert _header("http-worker-21", 35, "waiting for monitor entry") in shown
    assert shown.count("   java.lang.Thread.State: BLOCKED (on object monitor)") == 1
    assert "\t- waiting to lock <0x00000000fa331450> (a java.util.ArrayList)" in shown
    assert "\tat com.acme.ledger.web.LedgerServer.report(LedgerServer.java:138)" in shown
    # ... and the thread holding the lock
    assert "\t- locked <0x00000000fa331450> (a java.util.ArrayList)" in shown
    assert "\tat com.acme.ledger.web.LedgerServer.report(LedgerServer.java:142)" in shown
    # the idle pool is one thread in sight and a count
    assert shown.count("   java.lang.Thread.State: WAITING (parking)") == 1
    assert "repeated thread stacks" in out
    assert "JNI global refs: 12, weak refs: 0" in shown
    assert saved > 0.6


def test_threads_at_another_place_are_not_repeats() -> None:
    text = _dump(idle=1, blocked=1)
    out, _ = compress_soundly(tool_output(text, COMMAND), "standard")
    assert "repeated thread stack" not in out
    assert "WAITING (parking)" in out and "BLOCKED (on object monitor)" in out
