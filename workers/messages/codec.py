"""Decode raw records into :class:`Record` and write rewritten texts back.

Three shapes come in (see DESIGN.md): OpenAI chat records, Anthropic message
records (``"format": "anthropic"``, or no ``format`` and a top-level ``system``
or Anthropic content blocks: ``tool_use``, ``tool_result``, ...), and single
tool outputs (``"kind": "tool_output"``).  A role the shape's API does not
have, or a text the shape would not read, is an :class:`InvalidRecord` too:
no text is skipped silently.  Anything else is an :class:`InvalidRecord` whose
message says what is wrong and what shape was expected; it is data for the
dead letter, never a crash.

``apply_texts`` copies only the containers on the path to a changed text, so
the input dict is never mutated and untouched fields keep identity and order.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

import orjson

from workers.core.catalog import ENGINES
from workers.core.errors import CtxpressError
from workers.messages.model import Format, Path, Record, Unit

__all__ = [
    "RESERVED_KEY",
    "InvalidRecord",
    "apply_texts",
    "id_problem",
    "parse_record",
    "record_id",
]

RESERVED_KEY = "compression"
# a record holds at most 16 MiB of text: a larger token budget is no budget
MAX_BUDGET_TOKENS = 2**31 - 1
_SYSTEM_ROLES = frozenset({"system", "developer"})
_COMMAND_KEYS = ("command", "cmd", "script", "shell_command", "commandLine", "code")
_PATH_KEYS = ("path", "file_path", "filePath", "filename", "file")


class InvalidRecord(CtxpressError, ValueError):
    """A record that does not have one of the accepted shapes."""

    def __init__(self, reason: str, record_id: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.record_id = record_id


def record_id(value: Any) -> str | None:
    """The record's ``id`` as text (a string or an integer), else None; any JSON value."""
    rid = value.get("id") if isinstance(value, dict) else None
    if isinstance(rid, str | int) and not isinstance(rid, bool):
        return str(rid)
    return None


def id_problem(value: Any) -> str | None:
    """Why a decoded record's ``id`` is not valid, or None (also None for a non-object).

    The one id rule of the CLI and the worker (whose JSON Schemas say the same): every
    record has an ``id``, a non-empty string or an integer; it keys the compressed
    record, its stats, its stashes and its dead letters.
    """
    if not isinstance(value, dict):
        return None
    if "id" not in value or value["id"] is None:
        return (
            "record has no 'id'; every record needs one (a non-empty string or an integer): "
            "it keys the output, the stats and the dead letters"
        )
    rid = value["id"]
    if isinstance(rid, bool) or not isinstance(rid, str | int):
        return f"field 'id' must be a non-empty string or an integer, got {type(rid).__name__}"
    if rid == "":
        return "field 'id' is empty; it must be a non-empty string or an integer"
    return None


def command_from_arguments(arguments: Any) -> str | None:
    """The shell command (or file path for read tools) inside tool-call arguments."""
    if isinstance(arguments, str):
        try:
            arguments = orjson.loads(arguments)
        except orjson.JSONDecodeError:
            return None
    if not isinstance(arguments, dict):
        return None
    editor = _editor_command(arguments)
    if editor is not None:
        return editor
    for key in _COMMAND_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return shlex.join(value)
    for key in _PATH_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return f"cat {shlex.quote(value)}"
    return None


_EDITOR_READS = frozenset({"view", "read"})
_EDITOR_WRITES = frozenset({"create", "write"})  # the file's whole text: ``tee PATH``
_EDITOR_EDITS = frozenset({"str_replace", "insert", "undo_edit", "edit"})  # ``patch PATH``


def _editor_command(arguments: dict[str, Any]) -> str | None:
    """Anthropic's text-editor tool (``{"command": "view", "path": ...}``) as a shell command."""
    command, path = arguments.get("command"), arguments.get("path")
    if not isinstance(command, str) or not isinstance(path, str) or not path.strip():
        return None
    if command in _EDITOR_READS:
        view_range = arguments.get("view_range")
        if (
            isinstance(view_range, list)
            and len(view_range) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in view_range)
        ):
            start, end = view_range
            if end > 0:
                return f"sed -n '{start},{end}p' {shlex.quote(path)}"
        return f"cat {shlex.quote(path)}"
    if command in _EDITOR_WRITES:
        return f"tee {shlex.quote(path)}"
    if command in _EDITOR_EDITS:
        return f"patch {shlex.quote(path)}"
    return None


def parse_record(data: Any) -> Record:
    """Turn a decoded JSON value into a :class:`Record` or raise :class:`InvalidRecord`."""
    if not isinstance(data, dict):
        raise InvalidRecord(
            f"record must be a JSON object, got {type(data).__name__}; "
            'expected {"id": ..., "messages": [...]} or {"id": ..., "kind": "tool_output", "content": "..."}'
        )
    rid = record_id(data)
    if RESERVED_KEY in data:
        raise InvalidRecord(
            f"record already has a '{RESERVED_KEY}' object: it was compressed before; "
            "run 'ctxpress expand' on it first",
            rid,
        )
    if data.get("kind") == "tool_output":
        units = _tool_output_units(data, rid)
        fmt: Format = "tool_output"
    elif data.get("format") == "anthropic" or (
        data.get("format") is None and _looks_anthropic(data)
    ):
        units = _anthropic_units(data, rid)
        fmt = "anthropic"
    elif "format" in data and data["format"] not in (None, "openai"):
        raise InvalidRecord(
            f"unknown format {data['format']!r}; valid formats: openai (default), anthropic", rid
        )
    else:
        units = _openai_units(data, rid)
        fmt = "openai"
    mode = data.get("mode")
    if mode is not None and not isinstance(mode, str):
        raise InvalidRecord("field 'mode' must be a string", rid)
    budget = data.get("budget_tokens")
    if budget is not None and (
        not isinstance(budget, int) or isinstance(budget, bool) or budget < 0
    ):
        raise InvalidRecord("field 'budget_tokens' must be a non-negative integer", rid)
    if budget is not None and budget > MAX_BUDGET_TOKENS:
        # more tokens than any record holds: no budget (the field itself is written back
        # as it came; statistics, which hold 64-bit integers, get the cap)
        budget = MAX_BUDGET_TOKENS
    lossy = data.get("allow_lossy_structure")
    if lossy is not None and not isinstance(lossy, bool):
        raise InvalidRecord("field 'allow_lossy_structure' must be true or false", rid)
    return Record(
        data=data,
        format=fmt,
        units=tuple(units),
        record_id=rid,
        mode=mode,
        budget_tokens=budget,
        allow_lossy_structure=lossy,
        extra={"disable_engines": _disabled(data, rid)},
    )


# Content blocks only the Anthropic Messages API has (OpenAI parts: text, image_url,
# input_audio, file, refusal).
ANTHROPIC_BLOCKS = frozenset(
    {"tool_use", "tool_result", "image", "document", "thinking", "redacted_thinking"}
)
OPENAI_ROLES = ("system", "developer", "user", "assistant", "tool", "function")
ANTHROPIC_ROLES = ("user", "assistant")


def _looks_anthropic(data: dict[str, Any]) -> bool:
    """A record without ``format`` in the Anthropic shape: a top-level ``system`` or Anthropic blocks.

    Read as OpenAI, its tool results would be skipped (they are not ``text`` parts).
    """
    if "system" in data:
        return True
    messages = data.get("messages")
    if not isinstance(messages, list):
        return False
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") in ANTHROPIC_BLOCKS for b in content
        ):
            return True
    return False


def _disabled(data: dict[str, Any], rid: str | None) -> frozenset[str]:
    names = data.get("disable_engines")
    if names is None:
        return frozenset()
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise InvalidRecord("field 'disable_engines' must be a list of engine names", rid)
    unknown = sorted(set(names) - set(ENGINES))
    if unknown:
        raise InvalidRecord(
            f"unknown engine(s) in 'disable_engines': {', '.join(unknown)}; "
            f"valid engines: {', '.join(ENGINES)}",
            rid,
        )
    return frozenset(names)


def _tool_output_units(data: dict[str, Any], rid: str | None) -> list[Unit]:
    content = data.get("content")
    if not isinstance(content, str):
        raise InvalidRecord(
            f"tool_output record needs a string 'content', got {type(content).__name__}", rid
        )
    command = data.get("command")
    tool_name = data.get("tool_name")
    if command is not None and not isinstance(command, str):
        raise InvalidRecord("field 'command' must be a string", rid)
    if tool_name is not None and not isinstance(tool_name, str):
        raise InvalidRecord("field 'tool_name' must be a string", rid)
    return [
        Unit(
            uid="c",
            index=-1,
            role="tool",
            kind="tool_result",
            text=content,
            path=("content",),
            command=command,
            tool_name=tool_name,
        )
    ]


def _messages(
    data: dict[str, Any], rid: str | None, roles: tuple[str, ...] = OPENAI_ROLES
) -> list[Any]:
    messages = data.get("messages")
    if messages is None:
        raise InvalidRecord(
            'record has no \'messages\' list; expected {"id": ..., "messages": [...]} '
            'or a tool output {"kind": "tool_output", "content": "..."}',
            rid,
        )
    if not isinstance(messages, list):
        raise InvalidRecord(f"'messages' must be a list, got {type(messages).__name__}", rid)
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise InvalidRecord(f"message {i} must be an object, got {type(message).__name__}", rid)
        role = message.get("role")
        if not isinstance(role, str):
            raise InvalidRecord(f"message {i} has no string 'role'", rid)
        if role not in roles:
            shape = "Anthropic" if roles == ANTHROPIC_ROLES else "OpenAI"
            hint = " (the system prompt is the record's top-level 'system')" * (
                roles == ANTHROPIC_ROLES and role in _SYSTEM_ROLES
            )
            if roles == ANTHROPIC_ROLES and data.get("format") is None:
                hint += (
                    "; read as Anthropic for its top-level 'system' or Anthropic content "
                    'blocks (set "format" to say which shape it is)'
                )
            raise InvalidRecord(
                f"message {i} has role {role!r}, which the {shape} API does not have; "
                f"valid roles: {', '.join(roles)}{hint}",
                rid,
            )
    return messages


def _pinned(data: dict[str, Any], messages: list[Any], rid: str | None) -> set[int]:
    pinned: set[int] = set()
    prefix = data.get("cached_prefix_messages")
    if prefix is not None:
        if not isinstance(prefix, int) or isinstance(prefix, bool) or prefix < 0:
            raise InvalidRecord(
                "field 'cached_prefix_messages' must be a non-negative integer", rid
            )
        pinned.update(range(min(prefix, len(messages))))
    pins = data.get("pinned")
    if pins is not None:
        if not isinstance(pins, list) or not all(
            isinstance(p, int) and not isinstance(p, bool) for p in pins
        ):
            raise InvalidRecord("field 'pinned' must be a list of message indexes", rid)
        pinned.update(p for p in pins if 0 <= p < len(messages))
    for i, message in enumerate(messages):
        if message.get("pinned") is True:
            pinned.add(i)
    return pinned


def _leading_system(messages: list[Any]) -> set[int]:
    frozen: set[int] = set()
    for i, message in enumerate(messages):
        if message.get("role") not in _SYSTEM_ROLES:
            break
        frozen.add(i)
    return frozen


def _openai_units(data: dict[str, Any], rid: str | None) -> list[Unit]:
    messages = _messages(data, rid)
    frozen = _leading_system(messages) | _pinned(data, messages, rid)
    calls: dict[str, tuple[str | None, str | None]] = {}
    units: list[Unit] = []
    for i, message in enumerate(messages):
        role = message["role"]
        tool_calls = message.get("tool_calls")
        if tool_calls is not None:
            if not isinstance(tool_calls, list):
                raise InvalidRecord(f"message {i}: 'tool_calls' must be a list", rid)
            for call in tool_calls:
                if not isinstance(call, dict):
                    raise InvalidRecord(f"message {i}: every tool call must be an object", rid)
                function = call.get("function")
                if isinstance(function, dict) and isinstance(call.get("id"), str):
                    calls[call["id"]] = _tool_call(function.get("name"), function.get("arguments"))
        is_tool = role in ("tool", "function")
        name, command = (None, None)
        if is_tool:
            call_id = message.get("tool_call_id")
            if isinstance(call_id, str):
                name, command = calls.get(call_id, (None, None))
            if name is None and isinstance(message.get("name"), str):
                name = message["name"]
        kind = "tool_result" if is_tool else "text"
        unit_role = "tool" if is_tool else ("system" if role in _SYSTEM_ROLES else role)
        content = message.get("content")
        common: dict[str, Any] = dict(
            index=i,
            role=unit_role,
            kind=kind,
            frozen=i in frozen,
            command=command,
            tool_name=name,
        )
        if content is None:
            continue
        if isinstance(content, str):
            units.append(Unit(uid=f"m{i}", text=content, path=("messages", i, "content"), **common))
        elif isinstance(content, list):
            for j, part in enumerate(content):
                if not isinstance(part, dict):
                    raise InvalidRecord(f"message {i}: content part {j} must be an object", rid)
                ptype = part.get("type")
                if ptype in ANTHROPIC_BLOCKS:
                    raise InvalidRecord(
                        f"message {i}: content part {j} is an Anthropic {ptype!r} block, but the "
                        'record says format \'openai\'; set "format": "anthropic" '
                        "(or drop 'format': the shape is then detected)",
                        rid,
                    )
                if ptype != "text" and isinstance(part.get("text"), str):
                    raise InvalidRecord(
                        f"message {i}: content part {j} of type {ptype!r} carries a 'text' that "
                        "would not be read; text parts have type 'text'",
                        rid,
                    )
                if ptype == "text":
                    text = part.get("text")
                    if not isinstance(text, str):
                        raise InvalidRecord(
                            f"message {i}: text part {j} needs a string 'text'", rid
                        )
                    units.append(
                        Unit(
                            uid=f"m{i}.{j}",
                            text=text,
                            path=("messages", i, "content", j, "text"),
                            **common,
                        )
                    )
        else:
            raise InvalidRecord(
                f"message {i}: 'content' must be a string, a list of parts or null, "
                f"got {type(content).__name__}",
                rid,
            )
    return units


def _tool_call(name: Any, arguments: Any) -> tuple[str | None, str | None]:
    """(tool name, shell command) of a tool call, each None when unknown."""
    tool = name if isinstance(name, str) else None
    if isinstance(arguments, str):  # (decoded once for both readings)
        try:
            arguments = orjson.loads(arguments)
        except orjson.JSONDecodeError:
            return tool, None
    search = _search_command(tool, arguments) if tool is not None else None
    return tool, search if search is not None else command_from_arguments(arguments)


_SEARCH_TOOL = re.compile(r"(?i)(?:^|_)(?:grep|search|ripgrep|rg|find|glob)(?:_?files)?$")
_PATTERN_KEYS = ("pattern", "query", "regex", "search")


def _search_command(tool: str, arguments: Any) -> str | None:
    """A search tool's call (its decoded arguments) as the shell command it stands for: ``rg -n PATTERN PATH`` for a
    grep-like tool (``{"pattern": ..., "path": ...}``: its path is where it searched, not a
    file it read), ``find PATH -name PATTERN`` for a glob."""
    if _SEARCH_TOOL.search(tool) is None:
        return None
    if not isinstance(arguments, dict) or any(k in arguments for k in _COMMAND_KEYS):
        return None
    pattern = next(
        (v for k in _PATTERN_KEYS if isinstance(v := arguments.get(k), str) and v.strip()), None
    )
    if pattern is None:
        return None
    where = next(
        (v for k in _PATH_KEYS if isinstance(v := arguments.get(k), str) and v.strip()), "."
    )
    if "glob" in tool.lower() or tool.lower().startswith("find"):
        return f"find {shlex.quote(where)} -name {shlex.quote(pattern)}"
    return f"rg -n {shlex.quote(pattern)} {shlex.quote(where)}"


def _is_text_block(block: Any) -> bool:
    """An Anthropic ``{"type": "text", "text": "..."}`` block."""
    return (
        isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    )


def _has_cache_control(block: Any) -> bool:
    return isinstance(block, dict) and isinstance(block.get("cache_control"), dict)


def _anthropic_units(data: dict[str, Any], rid: str | None) -> list[Unit]:
    messages = _messages(data, rid, ANTHROPIC_ROLES)
    frozen = _pinned(data, messages, rid)
    # Everything up to the last cache_control breakpoint is a cached prefix.
    last_breakpoint = -1
    for i, message in enumerate(messages):
        content = message.get("content")
        if _has_cache_control(message) or (
            isinstance(content, list) and any(_has_cache_control(b) for b in content)
        ):
            last_breakpoint = i
    frozen.update(range(last_breakpoint + 1))
    units: list[Unit] = []
    system = data.get("system")
    if isinstance(system, str):
        units.append(
            Unit(
                uid="s",
                index=-1,
                role="system",
                kind="text",
                text=system,
                path=("system",),
                frozen=True,
            )
        )
    elif isinstance(system, list):
        for j, block in enumerate(system):
            if _is_text_block(block):
                units.append(
                    Unit(
                        uid=f"s{j}",
                        index=-1,
                        role="system",
                        kind="text",
                        text=block["text"],
                        path=("system", j, "text"),
                        frozen=True,
                    )
                )
    elif system is not None:
        raise InvalidRecord("'system' must be a string or a list of blocks", rid)
    tool_uses: dict[str, tuple[str | None, str | None]] = {}
    for i, message in enumerate(messages):
        role = message["role"]
        content = message.get("content")
        is_frozen = i in frozen
        if isinstance(content, str):
            units.append(
                Unit(
                    uid=f"m{i}",
                    index=i,
                    role=role,
                    kind="text",
                    text=content,
                    path=("messages", i, "content"),
                    frozen=is_frozen,
                )
            )
            continue
        if not isinstance(content, list):
            raise InvalidRecord(
                f"message {i}: 'content' must be a string or a list of blocks, got {type(content).__name__}",
                rid,
            )
        for j, block in enumerate(content):
            if not isinstance(block, dict):
                raise InvalidRecord(f"message {i}: block {j} must be an object", rid)
            btype = block.get("type")
            if btype == "text":
                if not isinstance(block.get("text"), str):
                    raise InvalidRecord(f"message {i}: text block {j} needs a string 'text'", rid)
                units.append(
                    Unit(
                        uid=f"m{i}.{j}",
                        index=i,
                        role=role,
                        kind="text",
                        text=block["text"],
                        path=("messages", i, "content", j, "text"),
                        frozen=is_frozen,
                    )
                )
            elif btype == "tool_use":
                if isinstance(block.get("id"), str):
                    tool_uses[block["id"]] = _tool_call(block.get("name"), block.get("input"))
            elif btype == "tool_result":
                name, command = tool_uses.get(str(block.get("tool_use_id")), (None, None))
                is_error = block.get("is_error") is True
                inner = block.get("content")
                common: dict[str, Any] = dict(
                    index=i,
                    role="tool",
                    kind="tool_result",
                    frozen=is_frozen,
                    command=command,
                    tool_name=name,
                    is_error=is_error,
                )
                if isinstance(inner, str):
                    units.append(
                        Unit(
                            uid=f"m{i}.{j}",
                            text=inner,
                            path=("messages", i, "content", j, "content"),
                            **common,
                        )
                    )
                elif isinstance(inner, list):
                    for k, sub in enumerate(inner):
                        if _is_text_block(sub):
                            units.append(
                                Unit(
                                    uid=f"m{i}.{j}.{k}",
                                    text=sub["text"],
                                    path=("messages", i, "content", j, "content", k, "text"),
                                    **common,
                                )
                            )
                elif inner is not None:
                    raise InvalidRecord(
                        f"message {i}: tool_result {j} 'content' must be a string or blocks", rid
                    )
    return units


def _set_path(container: Any, path: Path, value: str) -> Any:
    """Copy-on-write assignment of ``value`` at ``path``."""
    key = path[0]
    if isinstance(container, dict):
        copy: Any = dict(container)
    else:
        copy = list(container)
    if len(path) == 1:
        copy[key] = value
    else:
        copy[key] = _set_path(container[key], path[1:], value)
    return copy


def apply_texts(data: dict[str, Any], changes: dict[Path, str]) -> dict[str, Any]:
    """A new record dict with the texts at ``changes``' paths replaced."""
    out: Any = data
    for path, text in changes.items():
        out = _set_path(out, path, text)
    result: dict[str, Any] = out
    return result
