"""Agent sessions for tests: an OpenAI record with one bash tool call per output."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any


def bash_session(
    calls: Sequence[tuple[str, str]], ask: str = "fix the bug", final: str | None = None
) -> dict[str, Any]:
    """The user's ``ask``, then one bash call and its output per ``(command, output)``, then
    the user's ``final`` message when given."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": ask}]
    for n, (command, output) in enumerate(calls):
        call = {
            "id": f"call_{n}",
            "type": "function",
            "function": {"name": "bash", "arguments": json.dumps({"command": command})},
        }
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"call_{n}", "content": output})
    if final is not None:
        messages.append({"role": "user", "content": final})
    return {"id": "r", "messages": messages}
