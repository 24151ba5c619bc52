"""Outputs are recognised by their lines, not only by their command (issue 13).

The same output under its real command and under a command nobody wrote a
filter for (``bash -c ./script.sh``, ``python3 run.py``) gets the same filter
or one that saves about as much, and keeps every critical fact.
"""

from __future__ import annotations

import pytest

from tests.support.family_samples import SAMPLES, Sample
from workers.core.settings import Settings
from workers.engines._filters import builtin_filters
from workers.pipeline.runner import Pipeline
from workers.pipeline.visibility import lost_facts

WRAPPED = ("bash -c ./script.sh", "python3 run.py", "./deploy.sh")

_PYTEST_V = "\n".join(
    [
        "============================= test session starts ==============================",
        "platform linux -- Python 3.12.3, pytest-8.2.1, pluggy-1.5.0",
        "collected 60 items",
        "",
        *[f"tests/test_api.py::test_endpoint_{i:02d} PASSED{' ' * 20}[{i:3d}%]" for i in range(58)],
        "tests/test_api.py::test_refund FAILED                               [ 98%]",
        "tests/test_api.py::test_void ERROR                                  [100%]",
        "=========================== short test summary info ============================",
        "FAILED tests/test_api.py::test_refund - AssertionError: assert 3 == 4",
        "ERROR tests/test_api.py::test_void - KeyError: 'void'",
        "=================== 1 failed, 58 passed, 1 error in 1.20s ====================",
        "",
    ]
)
_PIP_LIST = "\n".join(
    [
        "Package            Version",
        "------------------ -----------",
        *[f"package-{i:03d}        {i % 7}.{i % 11}.{i}" for i in range(80)],
        "",
    ]
)
_LS = "\n".join(
    [
        "total 328",
        *[
            f"-rw-r--r--  1 dev dev {1000 + i * 37:6d} Dec  1 09:{i % 60:02d} module_{i:03d}.py"
            for i in range(70)
        ],
        "",
    ]
)
_GIT_STATUS = "\n".join(
    [
        "On branch main",
        "Your branch is up to date with 'origin/main'.",
        "",
        "Changes not staged for commit:",
        '  (use "git add <file>..." to update what will be committed)',
        *[f"\tmodified:   src/pkg/module_{i:02d}.py" for i in range(30)],
        "",
        "Untracked files:",
        '  (use "git add <file>..." to include in what will be committed)',
        *[f"\tnotes/draft_{i:02d}.md" for i in range(20)],
        "",
        'no changes added to commit (use "git add" and/or "git commit -a")',
        "",
    ]
)
EXTRA = (
    Sample("pytest-v", "python -m pytest -v", _PYTEST_V, ()),
    Sample("pip-list", "python -m pip list", _PIP_LIST, ()),
    Sample("ls-la", "ls -la src", _LS, ()),
    Sample("git-status", "git status", _GIT_STATUS, ()),
)
# ``cargo run`` printing a panic: the command picks cargo's filter (19.6% saved), the
# output alone the generic one (74.5%); the command wins, so this one is not symmetric
ALL = tuple(s for s in SAMPLES if s.name != "rust-panic") + EXTRA


def _run(pipeline: Pipeline, sample: Sample, command: str) -> tuple[float, int]:
    record = {"id": "r", "kind": "tool_output", "content": sample.output, "command": command}
    out = pipeline.run_raw(record)
    return out.stats["saved_pct"], len(lost_facts(record, out.record))


@pytest.mark.parametrize("mode", ["standard", "aggressive"])
@pytest.mark.parametrize("sample", ALL, ids=[s.name for s in ALL])
def test_same_output_under_an_unknown_command_saves_as_much_and_keeps_every_fact(
    sample: Sample, mode: str
) -> None:
    pipeline = Pipeline(Settings(mode=mode))
    real, real_lost = _run(pipeline, sample, sample.command)
    assert real_lost == 0
    for command in WRAPPED:
        saved, lost = _run(pipeline, sample, command)
        assert lost == 0, (command, lost)
        assert abs(saved - real) <= 3.0, (sample.name, command, saved, real)


@pytest.mark.parametrize(
    ("sample", "family"),
    [
        (EXTRA[0], "pytest"),
        (EXTRA[1], "packages"),
        (EXTRA[2], "ls"),
        (EXTRA[3], "git-status"),
    ],
    ids=lambda v: v if isinstance(v, str) else v.name,
)
def test_an_unknown_command_gets_the_filter_of_its_real_command(
    sample: Sample, family: str
) -> None:
    filters = builtin_filters()
    assert filters.select(sample.command, "bash", sample.output).name == family  # type: ignore[union-attr]
    for command in WRAPPED:
        found = filters.detect(command, "bash", sample.output)
        assert found.family == family
        assert found.source in ("output", "content")
    # a shell tool without any command: the output decides too
    assert filters.detect(None, "bash", sample.output).family == family


def test_content_scoring_needs_most_lines_to_match() -> None:
    filters = builtin_filters()
    # two listing-like lines in a page of prose are not a listing
    steps = [f"The service restarted after step {i} and kept serving requests." for i in range(30)]
    prose = "\n".join(
        [*steps[:5], "-rw-r--r--  1 dev dev 10 Dec  1 09:00 a.py", "total 12", *steps[5:]]
    )
    assert filters.by_content(prose) is None
    found = filters.detect("python3 run.py", "bash", prose)
    assert (found.family, found.source) == ("unknown", "fallback")


def test_several_signatures_the_filter_covering_most_lines_wins() -> None:
    make_log = next(s for s in SAMPLES if s.name == "make-k")
    filters = builtin_filters()
    # gcc diagnostics (gcc's signature) inside a make log (make's signature): make wins
    assert filters.detect("bash -c ./build.sh", "bash", make_log.output).family == "make"
