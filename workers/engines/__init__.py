"""Engine registry: one string name per engine (registry key = metric label = stats key).

Engines register by module import below; ``resolve`` turns names into
instances and fails with the list of valid names.
"""

from __future__ import annotations

import importlib

from workers.engines.base import Engine, EngineContext, EngineOutput

__all__ = ["REGISTRY", "Engine", "EngineContext", "EngineOutput", "UnknownEngine", "resolve"]

# name -> "module:Class"; modules are imported on first use so that a mode
# only pays for its own engines.
_ENGINE_PATHS: dict[str, str] = {
    "dedup": "workers.engines.dedup:DedupEngine",
    "jsontable": "workers.engines.jsontable:JsonTableEngine",
    "jsonminify": "workers.engines.jsonminify:JsonMinifyEngine",
    "whitespace": "workers.engines.whitespace:WhitespaceEngine",
    "read-lifecycle": "workers.engines.readlifecycle:ReadLifecycleEngine",
    "datauri": "workers.engines.datauri:DataUriEngine",
    "toolfilter": "workers.engines.toolfilter:ToolFilterEngine",
    "smartcrush": "workers.engines.smartcrush:SmartCrushEngine",
    "structured": "workers.engines.structured:StructuredEngine",
    "filler": "workers.engines.filler:FillerEngine",
    "relevance": "workers.engines.relevance:RelevanceEngine",
    "aging": "workers.engines.aging:AgingEngine",
    "budget": "workers.engines.budget:BudgetEngine",
}
REGISTRY = _ENGINE_PATHS


class UnknownEngine(LookupError):
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
