"""Filter files and directories: the built-in set, user and project filters, a process cache.

The only module of the engine that reads files.  :func:`load_filter_set`
loads the built-in directory (``builtin/`` beside this module), then the
user's ``filters_dir`` and, when trusted, the project's ``.ctxpress/filters``;
a later file with the same name replaces an earlier one.  User files' regexes
are compiled by RE2 (linear-time matching); built-in ones use ``re`` and are
timed on hostile input by the test suite instead.  The pipeline calls it once
when it is built and hands the set to the engine (``EngineContext.filters``); without one the
engine takes :func:`builtin_filters`.  Sets are cached per process.
"""

from __future__ import annotations

import json
import os
import threading
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from workers.engines._filters.model import Filter, FilterError
from workers.engines._filters.select import FilterSet
from workers.engines._filters.validate import FilterBuilder

__all__ = [
    "BUILTIN_DIR",
    "MAX_FILE_BYTES",
    "builtin_filters",
    "clear_cache",
    "load_file",
    "load_filter_set",
    "load_filters",
]

BUILTIN_DIR = Path(__file__).resolve().parent / "builtin"
MAX_FILE_BYTES = 1 << 20


def _decode(path: Path) -> Any:
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise FilterError(f"filter file {path}: larger than {MAX_FILE_BYTES} bytes")
    raw = path.read_bytes()
    try:
        if path.suffix == ".toml":
            return tomllib.loads(raw.decode("utf-8"))
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise FilterError(f"filter file {path}: cannot parse: {exc}") from exc


def load_file(path: str | os.PathLike[str], *, probe: bool = True) -> Filter:
    """Load and validate one filter file (JSON or TOML).

    ``probe``: an untrusted (user or project) file, whose regexes are compiled
    by RE2 so that matching is linear in the input; what RE2 cannot compile
    is a :class:`FilterError` naming the file and the pattern.
    """
    p = Path(path)
    return FilterBuilder(str(p), probe).build(_decode(p))


def _files(directory: Path) -> list[Path]:
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.suffix in (".json", ".toml") and p.is_file())


def load_filters(directories: Sequence[tuple[Path, bool]]) -> list[Filter]:
    """Filters of the given (directory, probe) pairs; a later name replaces an earlier one."""
    by_name: dict[str, Filter] = {}
    for directory, probe in directories:
        for path in _files(directory):
            filt = load_file(path, probe=probe)
            by_name[filt.name] = filt
    return list(by_name.values())


_CACHE: dict[tuple[str, bool, str], FilterSet] = {}
_LOCK = threading.Lock()


def load_filter_set(
    filters_dir: str = "", *, trust_project: bool = False, project_dir: str = ""
) -> FilterSet:
    """The built-in filters, then ``filters_dir``'s, then (if trusted) the project's.

    ``project_dir`` defaults to the working directory; raises
    :class:`FilterError` for a file that does not load.  Cached per process.
    """
    project = (project_dir or os.getcwd()) if trust_project else ""
    key = (filters_dir, trust_project, project)
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    with _LOCK:
        cached = _CACHE.get(key)
        if cached is None:
            dirs: list[tuple[Path, bool]] = [(BUILTIN_DIR, False)]
            if filters_dir:
                path = Path(filters_dir).expanduser()
                if not path.is_dir():
                    raise FilterError(f"filters_dir {filters_dir!r} is not a directory")
                dirs.append((path, True))
            if trust_project:
                dirs.append((Path(project) / ".ctxpress" / "filters", True))
            cached = FilterSet.of(load_filters(dirs))
            _CACHE[key] = cached
    return cached


def builtin_filters() -> FilterSet:
    """The built-in filters only (loaded on first use, once per process)."""
    return load_filter_set()


def clear_cache() -> None:
    """Forget compiled filter sets (tests; after editing filter files)."""
    with _LOCK:
        _CACHE.clear()
