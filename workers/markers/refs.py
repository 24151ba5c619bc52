"""The ``{"_refs": {"$R1": "…"}, "_data": …}`` envelope of repeated JSON strings.

``structured``'s ``dedup_values_with_refs`` strategy: a string value repeated
often enough becomes an alias; aliases use a prefix no string of the value
starts with (``$R``, else ``$$R``, ...).  :func:`decode_refs` gives the value back.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

__all__ = ["MIN_REF_CHARS", "decode_refs", "encode_refs", "map_strings"]

MIN_REF_CHARS = 12


def map_strings(obj: Any, fn: Callable[[str], str]) -> Any:
    """A copy of ``obj`` with every string value (not key) passed through ``fn``.

    Iterative: any depth, no recursion.
    """
    if isinstance(obj, str):
        return fn(obj)
    if not isinstance(obj, dict | list):
        return obj
    out: Any = {} if isinstance(obj, dict) else []
    stack: list[tuple[Any, Any]] = [(obj, out)]
    while stack:
        src, dst = stack.pop()
        pairs = src.items() if isinstance(src, dict) else enumerate(src)
        for k, v in pairs:
            if isinstance(v, dict | list):
                val: Any = {} if isinstance(v, dict) else []
                stack.append((v, val))
            elif isinstance(v, str):
                val = fn(v)
            else:
                val = v
            if isinstance(dst, dict):
                dst[k] = val
            else:
                dst.append(val)
    return out


def _strings(obj: Any) -> tuple[Counter[str], set[str]]:
    """String values (counted) and every key."""
    values: Counter[str] = Counter()
    keys: set[str] = set()
    stack: list[Any] = [obj]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            values[node] += 1
        elif isinstance(node, dict):
            keys.update(k for k in node if isinstance(k, str))
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return values, keys


def _alias_prefix(values: Counter[str], keys: set[str]) -> str:
    prefix = "$R"
    while any(s.startswith(prefix) for s in values) or any(k.startswith(prefix) for k in keys):
        prefix = "$" + prefix
    return prefix


def encode_refs(obj: Any, min_chars: int = MIN_REF_CHARS) -> dict[str, Any]:
    """``{"_refs": {alias: value}, "_data": obj with aliases}`` (always an envelope).

    A string value becomes an alias when it has at least ``min_chars``
    characters and occurs often enough that the aliases plus one copy in
    ``_refs`` are shorter than the copies.  Aliases use a prefix no string of
    ``obj`` starts with (``$R``, else ``$$R``, ...).
    """
    values, keys = _strings(obj)
    prefix = _alias_prefix(values, keys)
    refs: dict[str, str] = {}
    table: dict[str, str] = {}
    ranked = sorted(
        (v for v, c in values.items() if c >= 2 and len(v) >= min_chars),
        key=lambda v: (-(values[v] - 1) * len(v), v),
    )
    for value in ranked:
        alias = f"{prefix}{len(refs) + 1}"
        count = values[value]
        cost = count * (len(alias) + 2) + len(alias) + len(value) + 8
        if cost >= count * (len(value) + 2):
            continue
        refs[alias] = value
        table[value] = alias
    data = map_strings(obj, lambda s: table.get(s, s)) if table else obj
    return {"_refs": refs, "_data": data}


def decode_refs(obj: Any) -> Any:
    """The value :func:`encode_refs` was given; anything that is not an envelope as it is."""
    if not (isinstance(obj, dict) and set(obj) == {"_refs", "_data"}):
        return obj
    refs = obj["_refs"]
    if not isinstance(refs, dict):
        return obj
    if not refs:
        return obj["_data"]
    return map_strings(obj["_data"], lambda s: refs.get(s, s))
