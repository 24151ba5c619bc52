"""The toolchain captures of the corpus: each program really ran and printed what its
defects make it print (every capture is skipped when its program is missing)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from workers.bench import toolchains
from workers.bench.programs import Capture, Runner
from workers.core.ansi import strip_ansi

# compiles and runs C, C++, Rust, Go, Java and JavaScript: tens of seconds, so the full tier
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def found(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Capture]:
    work = tmp_path_factory.mktemp("toolchains")
    run = Runner(work, timeout=300)
    return {c.key: c for c in toolchains.toolchain_captures(run, work / "projects")}


# key -> (programs it needs, lines its output must hold)
EXPECTED = {
    "make-k": (("make", "gcc"), ("error: unknown type name", "[-Wsign-compare]", "make: ***")),
    "cmake-build": (
        ("cmake", "g++"),
        ("-- Configuring done", "error: no match for", "[-Wunused-variable]"),
    ),
    "valgrind": (
        ("valgrind", "gcc"),
        ("Invalid read of size 4", "definitely lost:", "players.c:13"),
    ),
    "asan": (("gcc",), ("SUMMARY: AddressSanitizer: heap-buffer-overflow", "vec.c:10")),
    "cargo-clippy": (("cargo",), ("clippy::", "--> src/")),
    "cargo-test": (("cargo",), ("panicked at src/", "test result: FAILED")),
    "go-test-race": (
        ("go", "gcc"),
        ("WARNING: DATA RACE", "--- FAIL: TestTotal/case_", "cart_test.go:"),
    ),
    "javac": (
        ("javac",),
        ("error: cannot find symbol", "Invoice.java:5: error: incompatible types"),
    ),
    "java-exception": (
        ("java", "javac"),
        ("Caused by: java.lang.NumberFormatException", "at app.Main.parseQty(Main.java:8)"),
    ),
    "node-test": (("node",), ("AssertionError", "✖ slug keeps case", "ℹ fail")),
    # Maven needs Maven Central for its plugins (skipped without it, as npm is)
    "maven-test": (
        ("mvn", "javac"),
        (
            "<<< FAILURE! -- in shop.RefundTest",
            "Failures: 0, Errors: 0",
            "found raw type: java.util.List",
            "BUILD FAILURE",
        ),
    ),
    "maven-compile": (
        ("mvn", "javac"),
        ("COMPILATION ERROR", "Order.java:[11,39] cannot find symbol", "variable curency"),
    ),
    # the npm ones also need the registry (for npm install): skipped without it
    "tsc-pretty": (("npm",), ("\x1b[", "TS2322: ", "is possibly 'undefined'")),
    "eslint": (("npm",), ("eqeqeq", "no-undef", "problems (")),
    "vitest": (("npm",), ("FAIL ", "AssertionError", "Tests  ")),
}
NEEDS_REGISTRY = frozenset({"tsc-pretty", "eslint", "vitest", "maven-test", "maven-compile"})


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_each_toolchain_prints_its_findings(
    key: str, found: dict[str, Capture], tmp_path: Path
) -> None:
    programs, needles = EXPECTED[key]
    run = Runner(tmp_path)
    if not all(run.have(p) for p in programs):
        pytest.skip(f"{key}: needs {', '.join(programs)}")
    if key in NEEDS_REGISTRY and key not in found:
        pytest.skip(f"{key}: its packages could not be installed (no registry?)")
    capture = found[key]
    assert capture.ask and capture.answer
    for needle in needles:
        assert needle in capture.output, (key, needle)
    plain = strip_ansi(capture.output)
    assert capture.answer in plain or capture.answer.endswith("output above.")


def test_the_projects_are_the_same_on_every_build(tmp_path: Path) -> None:
    """Seeded: two builds write the same C sources (so the corpus differs only in what the
    programs print: temporary paths, addresses, timings)."""
    rng_a, rng_b = (random.Random(13) for _ in range(2))
    a = [toolchains._c_module(n, rng_a, n == "heap") for n in toolchains.C_MODULES]
    b = [toolchains._c_module(n, rng_b, n == "heap") for n in toolchains.C_MODULES]
    assert a == b and len(set(a)) == len(a)
