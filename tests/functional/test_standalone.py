"""The repository stands alone: the main commands read no file outside it.

A clone has nothing beside it, so nothing may need ``../shared`` (or any other
sibling).  The batch commands run here under an audit hook that records every
file they open; files beside the repository (its parent folder's other
entries) must not be among them.  The virtualenv, the Python installation and
temporary folders are not "beside" the repository and are allowed.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# a path to the folder beside the clone: ../shared, or parent / "shared"
PATH_TO_SHARED = re.compile(r"""\.\./shared\b|/\s*["']shared["']""")

_HOOK = r"""
import json, os, sys
opened = []
def hook(event, args):
    if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
        path = os.fsdecode(args[0])
        opened.append(os.path.abspath(path))
    elif event in ("os.listdir", "os.scandir") and args and args[0] is not None:
        opened.append(os.path.abspath(os.fsdecode(args[0])))
sys.addaudithook(hook)
import atexit
atexit.register(lambda: open(os.environ["OPENED_LOG"], "w").write(json.dumps(opened)))
from workers.cli import main
sys.argv = ["ctxpress", *sys.argv[1:]]
code = main()
sys.exit(code)
"""


def _opened(tmp_path: Path, *argv: str) -> list[str]:
    log = tmp_path / f"opened-{len(list(tmp_path.iterdir()))}.json"
    result = subprocess.run(
        [sys.executable, "-c", _HOOK, *argv],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "OPENED_LOG": str(log), "HOME": str(tmp_path)},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    paths: list[str] = json.loads(log.read_text())
    return paths


def _beside_the_repository(paths: list[str], own: Path | None = None) -> list[str]:
    """Paths in the clone's parent folder outside the clone (``own``: the test's files)."""
    parent = REPO.parent
    beside = []
    for raw in paths:
        path = Path(raw)
        if own is not None and (path == own or own in path.parents):
            continue
        if path == parent:
            beside.append(raw)  # listing the folder the clone sits in
            continue
        try:
            rel = path.relative_to(parent)
        except ValueError:
            continue
        if rel.parts and rel.parts[0] != REPO.name:
            beside.append(raw)
    return beside


def test_compress_and_expand_read_nothing_beside_the_repository(tmp_path: Path) -> None:
    sample = REPO / "samples" / "sample.jsonl"
    out, stash = tmp_path / "out.jsonl", tmp_path / "stash"
    opened = _opened(
        tmp_path,
        "compress",
        "--mode",
        "standard",
        "-i",
        str(sample),
        "-o",
        str(out),
        "--offload",
        str(stash),
    )
    opened += _opened(
        tmp_path, "expand", "--offload", str(stash), "-i", str(out), "-o", str(tmp_path / "x.jsonl")
    )
    assert any(p.endswith("sample.jsonl") for p in opened)  # the hook does see the files opened
    assert _beside_the_repository(opened, own=tmp_path) == []


def test_the_check_sees_a_file_beside_the_repository() -> None:
    sibling = str(REPO.parent / "shared" / "corpus" / "public.jsonl")
    inside = str(REPO / "samples" / "sample.jsonl")
    assert _beside_the_repository([sibling, inside, "/usr/lib/python3/x.py"]) == [sibling]


def test_no_test_or_script_needs_the_shared_folder() -> None:
    """``../shared`` is only ever an extra: every mention is guarded by an existence check."""
    mentions = []
    for path in [
        *REPO.glob("tests/**/*.py"),
        *REPO.glob("scripts/*"),
        *REPO.glob("workers/**/*.py"),
    ]:
        if path == Path(__file__):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if PATH_TO_SHARED.search(text):
            mentions.append(path.relative_to(REPO).as_posix())
    # conftest adds it as an extra corpus only when the file exists; the snapshot script
    # includes it only when present
    allowed = {"tests/conftest.py", "scripts/behaviour-snapshot.sh"}
    assert set(mentions) <= allowed, sorted(set(mentions) - allowed)
