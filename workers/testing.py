"""Test helpers shipped with the package: transcript builders and fake engines.

Tests (ours and users') build records and misbehaving engines from here
instead of copying them across test files.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from workers.engines.base import Engine, EngineContext, EngineOutput
from workers.messages.model import Unit

__all__ = [
    "FunctionEngine",
    "RaisingEngine",
    "anthropic_record",
    "openai_record",
    "tool_output_record",
]


def openai_record(
    rid: str,
    *turns: tuple[str, str],
    command: str | None = None,
    system: str | None = "You are helpful.",
) -> dict[str, Any]:
    """An OpenAI chat record; a ``("tool", text)`` turn gets a matching assistant tool call."""
    messages: list[dict[str, Any]] = []
    if system is not None:
        messages.append({"role": "system", "content": system})
    for n, (role, text) in enumerate(turns):
        if role == "tool":
            call_id = f"call_{n}"
            args = json.dumps({"command": command or "echo"})
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": "bash", "arguments": args},
                        }
                    ],
                }
            )
            messages.append({"role": "tool", "tool_call_id": call_id, "content": text})
        else:
            messages.append({"role": role, "content": text})
    return {"id": rid, "messages": messages}


def anthropic_record(
    rid: str, system: str, *turns: tuple[str, str], command: str = "echo"
) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for n, (role, text) in enumerate(turns):
        if role == "tool":
            tool_id = f"toolu_{n}"
            messages.append(
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": tool_id,
                            "name": "bash",
                            "input": {"command": command},
                        }
                    ],
                }
            )
            messages.append(
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": text}],
                }
            )
        else:
            messages.append({"role": role, "content": [{"type": "text", "text": text}]})
    return {"id": rid, "format": "anthropic", "system": system, "messages": messages}


def tool_output_record(rid: str, content: str, command: str | None = None) -> dict[str, Any]:
    record: dict[str, Any] = {"id": rid, "kind": "tool_output", "content": content}
    if command is not None:
        record["command"] = command
    return record


class FunctionEngine(Engine):
    """An engine made of a text -> text function (for gate and pipeline tests)."""

    lossless = False

    def __init__(self, name: str, fn: Callable[[str], str], lossless: bool = False) -> None:
        self.name = name  # type: ignore[misc]
        self.lossless = lossless  # type: ignore[misc]
        self.fn = fn

    def apply(self, units: Sequence[Unit], ctx: EngineContext) -> EngineOutput:
        return EngineOutput(texts=[self.fn(u.text) for u in units])


class RaisingEngine(Engine):
    name = "raising"
    lossless = False

    def apply(self, units: Sequence[Unit], ctx: EngineContext) -> EngineOutput:
        raise RuntimeError("boom")
