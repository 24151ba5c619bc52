"""Engine registry: the names of :data:`workers.core.catalog.ENGINES` made instances.

``resolve`` turns names into
instances and fails with the list of valid names.
"""

from __future__ import annotations

import importlib

from workers.core.catalog import ENGINES
from workers.core.errors import CtxpressError
from workers.engines.base import Engine, EngineContext, EngineOutput

__all__ = ["REGISTRY", "Engine", "EngineContext", "EngineOutput", "UnknownEngine", "resolve"]

_ENGINE_PATHS = ENGINES
REGISTRY = _ENGINE_PATHS


class UnknownEngine(CtxpressError, LookupError):
    """An engine name that is not registered, or whose module is not built yet."""


def engine_class(name: str) -> type[Engine]:
    path = _ENGINE_PATHS.get(name)
    if path is None:
        raise UnknownEngine(f"unknown engine {name!r}; valid engines: {', '.join(_ENGINE_PATHS)}")
    module_name, _, class_name = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        raise UnknownEngine(
            f"engine {name!r} is not available in this build ({module_name} missing)"
        ) from exc
    cls: type[Engine] = getattr(module, class_name)
    return cls


def resolve(names: tuple[str, ...]) -> list[Engine]:
    """Instances of the named engines, in order."""
    return [engine_class(name)() for name in names]
