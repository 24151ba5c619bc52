"""The package layout is a contract: layers, the pure core, no import circles."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp

from workers.core.settings import Settings

REPO = Path(__file__).resolve().parents[2]
SERVICE_LIBRARIES = ("faust", "mode", "aiokafka", "jsonschema", "prometheus_client")


def test_import_linter_contracts_are_kept() -> None:
    """pyproject's [tool.importlinter]: layers point down, engines independent, core pure."""
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [str(lint), "--no-cache"], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert result.stdout.count("KEPT") == 4 and "BROKEN" not in result.stdout


def test_importing_the_pipeline_loads_no_service_library() -> None:
    code = (
        "import sys\n"
        "import workers.pipeline.runner, workers.pipeline.batch, workers.pipeline.expand\n"
        "import workers.pipeline.visibility, workers.markers, workers.fidelity.lossy\n"
        "from workers.pipeline.runner import Pipeline\n"
        "Pipeline().run_raw({'id': 'a', 'messages': [{'role': 'user', 'content': 'hi'}]})\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {SERVICE_LIBRARIES!r}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _module_edges() -> dict[str, set[str]]:
    graph = grimp.build_graph("workers")  # function-level imports included
    return {
        module: {m for m in graph.find_modules_directly_imported_by(module) if m != module}
        for module in graph.modules
    }


def _package(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else module


def test_no_import_circle_between_modules() -> None:
    edges = _module_edges()
    # a package's __init__ importing its own submodules is not a circle
    for module, targets in edges.items():
        edges[module] = {t for t in targets if not module.startswith(t + ".")}
    assert _cycles(edges) == []


def test_no_import_circle_between_packages() -> None:
    edges: dict[str, set[str]] = {}
    for module, targets in _module_edges().items():
        edges.setdefault(_package(module), set()).update(
            _package(t) for t in targets if _package(t) != _package(module)
        )
    assert _cycles(edges) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_settings_never_print_secrets() -> None:
    settings = Settings(kafka_sasl_password="hunter2-secret")
    assert "hunter2-secret" not in repr(settings)
    assert "hunter2-secret" not in str(settings)
    assert settings.kafka_sasl_password == "hunter2-secret"


def test_every_engine_of_the_catalog_is_in_the_independence_contract() -> None:
    import tomllib

    from workers.core.catalog import ENGINES

    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    independent = next(c for c in contracts if c["type"] == "independence")
    engine_modules = {path.partition(":")[0] for path in ENGINES.values()}
    assert set(independent["modules"]) == engine_modules
