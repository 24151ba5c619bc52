"""One exception root: every error ctxpress raises on purpose is a CtxpressError."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from workers.core import errors
from workers.core.errors import CtxpressError

TREE = re.compile(r"[├└]── (\w+)\s+([\w.]+)\s")


def _tree() -> list[tuple[str, str]]:
    return TREE.findall(errors.__doc__ or "")


def test_the_docstring_tree_names_every_error() -> None:
    assert len(_tree()) >= 13


@pytest.mark.parametrize(("name", "where"), _tree())
def test_each_error_of_the_tree_is_a_ctxpress_error(name: str, where: str) -> None:
    module = importlib.import_module(where if where.startswith("workers") else f"workers.{where}")
    if not hasattr(module, name):  # a package: the class lives in one of its modules
        found = [
            getattr(importlib.import_module(f"{module.__name__}.{p.stem}"), name, None)
            for p in Path(module.__file__ or "").parent.glob("*.py")
            if p.stem != "__main__"
        ]
        cls = next(c for c in found if c is not None)
    else:
        cls = getattr(module, name)
    assert issubclass(cls, CtxpressError)


def test_errors_keep_their_builtin_base() -> None:
    from workers.core.settings import SettingsError
    from workers.engines import UnknownEngine
    from workers.messages import InvalidRecord

    assert issubclass(SettingsError, ValueError)
    assert issubclass(InvalidRecord, ValueError)
    assert issubclass(UnknownEngine, LookupError)
    with pytest.raises(CtxpressError, match="valid engines"):
        from workers.engines import resolve

        resolve(("nope",))
