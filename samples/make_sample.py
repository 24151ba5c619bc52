"""Writes samples/sample.jsonl: a small, self-made set of agent conversations.

Deterministic (no randomness): re-running gives the same bytes.  Every
record is synthetic, written for ctxpress; it imitates the shape of real
tool output (pytest, git, a JSON API, a build log) without copying any.
"""

from __future__ import annotations

import json
from pathlib import Path


def tool_call(call_id: str, command: str) -> dict[str, object]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": "bash", "arguments": json.dumps({"command": command})},
    }


def pytest_output(n: int, failures: list[str]) -> str:
    lines = [
        "============================= test session starts ==============================",
        "platform linux -- Python 3.11.7, pytest-8.3.2, pluggy-1.5.0",
        "rootdir: /srv/app",
        f"collected {n} items",
        "",
    ]
    for i in range(n):
        name = f"tests/test_orders.py::test_order_total_{i:03d}"
        lines.append(
            f"{name} {'FAILED' if name in failures else 'PASSED'} [{(i + 1) * 100 // n:3d}%]"
        )
    lines += [
        "",
        "=================================== FAILURES ===================================",
    ]
    for name in failures:
        short = name.split("::")[1]
        lines += [
            f"___________________________ {short} ___________________________",
            "",
            f"    def {short}():",
            '        order = make_order(items=3, discount=Decimal("0.15"))',
            '>       assert order.total == Decimal("25.50")',
            "E       AssertionError: assert Decimal('25.49') == Decimal('25.50')",
            "",
            f"tests/test_orders.py:{40 + len(short)}: AssertionError",
        ]
    lines += ["=========================== short test summary info ============================"]
    lines += [
        f"FAILED {name} - AssertionError: assert Decimal('25.49') == Decimal('25.50')"
        for name in failures
    ]
    lines += [
        f"==================== {len(failures)} failed, {n - len(failures)} passed in 4.21s ===================="
    ]
    return "\n".join(lines)


def api_items(n: int) -> str:
    items = []
    for i in range(n):
        items.append(
            {
                "id": 1000 + i,
                "sku": f"SKU-{i:05d}",
                "name": f"Widget {i}",
                "price": f"{9.5 + i % 7:.2f}",
                "in_stock": i % 9 != 0,
                "warehouse": ["ams-1", "fra-2", "lhr-1"][i % 3],
                "status": "error: sync failed" if i == 17 else "ok",
            }
        )
    return json.dumps(items, indent=2)


def build_log(n: int) -> str:
    lines = []
    for i in range(n):
        lines.append(f"[{i + 1:3d}/{n}] Compiling src/module_{i:03d}.c")
        if i == 41:
            lines.append(
                "src/module_041.c:88:17: warning: unused variable 'retries' [-Wunused-variable]"
            )
        if i == 77:
            lines.append(
                "src/module_077.c:12:5: error: implicit declaration of function 'parse_header' [-Werror=implicit-function-declaration]"
            )
    lines.append("make: *** [Makefile:31: build/module_077.o] Error 1")
    return "\n".join(lines)


def git_status() -> str:
    return "\n".join(
        [
            "On branch feature/discounts",
            "Your branch is up to date with 'origin/feature/discounts'.",
            "",
            "Changes not staged for commit:",
            '  (use "git add <file>..." to update what will be committed)',
            "\tmodified:   src/orders/pricing.py",
            "\tmodified:   tests/test_orders.py",
            "",
            "Untracked files:",
            '  (use "git add <file>..." to include in what will be committed)',
            "\tsrc/orders/discounts.py",
            "",
            'no changes added to commit (use "git add" and/or "git commit -a")',
        ]
    )


def conversation(rid: str, ask: str, command: str, output: str, answer: str) -> dict[str, object]:
    return {
        "id": rid,
        "messages": [
            {
                "role": "system",
                "content": "You are a coding agent. Never push to main. Always run the tests before you commit.",
            },
            {"role": "user", "content": ask},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [tool_call(f"call_{rid}", command)],
            },
            {"role": "tool", "tool_call_id": f"call_{rid}", "content": output},
            {"role": "assistant", "content": answer},
        ],
    }


def main() -> None:
    records: list[object] = [
        conversation(
            "sample-pytest",
            "Run the order tests; do not touch the fixtures.",
            "pytest -q tests/test_orders.py",
            pytest_output(
                240,
                [
                    "tests/test_orders.py::test_order_total_017",
                    "tests/test_orders.py::test_order_total_203",
                ],
            ),
            "Two tests fail: test_order_total_017 and test_order_total_203 (rounding to 25.49).",
        ),
        conversation(
            "sample-api",
            "List the inventory items from the API.",
            "curl -s https://api.example.com/v2/items",
            api_items(60),
            "60 items; item 1017 has status 'error: sync failed'.",
        ),
        conversation(
            "sample-build",
            "Build the firmware.",
            "make -j2",
            build_log(160),
            "The build fails in src/module_077.c:12: implicit declaration of parse_header.",
        ),
        conversation(
            "sample-git",
            "What changed?",
            "git status",
            git_status(),
            "Two modified files and one untracked file (src/orders/discounts.py).",
        ),
        {
            "id": "sample-tool-output",
            "kind": "tool_output",
            "command": "pytest -q",
            "tool_name": "bash",
            "content": pytest_output(120, ["tests/test_orders.py::test_order_total_005"]),
        },
        {
            "id": "sample-anthropic",
            "format": "anthropic",
            "system": "You are an SRE copilot.",
            "messages": [
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "Show the inventory JSON again."}],
                },
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": "toolu_01",
                            "name": "bash",
                            "input": {"command": "curl -s https://api.example.com/v2/items"},
                        }
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_01", "content": api_items(40)}
                    ],
                },
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": "Here it is; nothing changed since the last call."}
                    ],
                },
            ],
        },
    ]
    lines = [json.dumps(r) for r in records]
    lines.append('{"id": "sample-broken", "messages": [')  # bad input on purpose: one dead letter
    lines.append(
        json.dumps({"id": "sample-bad-content", "messages": [{"role": "user", "content": 42}]})
    )
    Path(__file__).with_name("sample.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
