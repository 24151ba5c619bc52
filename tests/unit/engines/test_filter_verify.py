"""Every built-in toolfilter filter ships verify samples; run them through the engine.

Each sample is ``{"input", "command", "expected", "source"}`` inside the
filter's file (``workers/engines/_filters/builtin/*.json``).  The engine's output for the input
must equal ``expected`` exactly once offload keys are normalised to
``<<cx:*>>``; the filter that handled it must be the file's own filter; and
the output must expand back to the input and pass the fidelity gate.
"""

from __future__ import annotations

import re

import orjson
import pytest

from workers.core.offload import MemoryStore
from workers.core.tokens import TokenCounter
from workers.engines._filters import BUILTIN_DIR, Filter, Sample, load_file
from workers.engines._filters.validate import FilterBuilder
from workers.engines.base import EngineContext
from workers.engines.toolfilter import ToolFilterEngine, sample_unit
from workers.fidelity.lossy import check_lossy
from workers.markers import structured_view
from workers.markers.stash import expand_offload

KEY = re.compile(r"<<cx:[0-9a-f]{16}>>")
FILES = sorted(p for p in BUILTIN_DIR.iterdir() if p.suffix in (".json", ".toml"))
# filters that must exist (the list), by file name
REQUIRED = {
    "git-status", "git-diff", "git-log", "pytest", "unittest", "jest", "vitest", "go-test",
    "cargo", "tsc", "eslint", "ruff", "mypy", "flake8", "gcc", "make", "pip", "npm", "pnpm",
    "yarn", "uv", "apt", "docker-build", "kubectl", "terraform", "ls", "find", "du", "ps", "df",
    "grep", "generic", "container-logs",
}  # fmt: skip


def _samples() -> list[tuple[str, int, Filter, Sample]]:
    out = []
    for path in FILES:
        filt = load_file(path, probe=False)
        for i, sample in enumerate(filt.verify):
            out.append((f"{filt.name}[{i}]", i, filt, sample))
    return out


SAMPLES = _samples()


def test_every_required_filter_exists_with_samples() -> None:
    names = {load_file(p, probe=False).name: load_file(p, probe=False) for p in FILES}
    assert set(names) >= REQUIRED, sorted(REQUIRED - set(names))
    for name, filt in names.items():
        assert filt.verify, f"filter {name} has no verify samples"
        assert filt.description, f"filter {name} has no description"
        for sample in filt.verify:
            assert sample.source, f"filter {name}: every sample names its source"


def test_builtin_regexes_pass_the_hostile_input_probe() -> None:
    # built-in regexes run on Python's re: time each against hostile 4 KB lines
    for path in FILES:
        builder = FilterBuilder(str(path), probe=False)
        builder.build(orjson.loads(path.read_bytes()))
        builder.probe_all()


def test_builtin_files_are_canonical_json() -> None:
    for path in FILES:
        text = path.read_text(encoding="utf-8")
        assert text.endswith("\n")
        assert orjson.loads(text)["name"] == path.stem, (
            f"{path.name}: name must match the file name"
        )


@pytest.mark.parametrize(("label", "index", "filt", "sample"), SAMPLES, ids=[s[0] for s in SAMPLES])
def test_verify_sample(
    label: str, index: int, filt: Filter, sample: Sample, tokens: TokenCounter
) -> None:
    out = ToolFilterEngine().apply([sample_unit(sample)], EngineContext(tokens=tokens))
    after = out.texts[0]
    assert KEY.sub("<<cx:*>>", after) == sample.expected, label
    hits = out.details.get("filters_hit", {})
    if after != sample.input:
        assert hits == {filt.name: 1}, f"{label}: handled by {hits}"
    store = MemoryStore()
    store.put_many(out.stash)
    missing: list[str] = []
    restored = structured_view.decode(expand_offload(after, store, missing))  # listing views
    assert restored == sample.input and not missing
    if after != sample.input:
        assert check_lossy(sample.input, after, "tool_result", out.stash) == []
