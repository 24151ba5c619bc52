"""Source code as the outline engine sees it: language, symbols and their bodies.

- :func:`language_of`: the language of a file read, from the path's suffix
  (and a shebang line when there is none): Python, Go, Rust, TypeScript/TSX,
  JavaScript, Java, C, C++ (a ``.h`` file is C++ when its text says so), Ruby, PHP;
- :func:`symbols`: the functions, methods and classes of a source text, parsed
  with tree-sitter (the official per-language grammar packages from PyPI),
  each with its name, the rows it spans and the rows of its *body* that an
  outline may hide: for Python everything after the signature and the
  docstring's first line, for Ruby the lines between ``def`` and ``end``, for the
  brace languages the lines strictly between the ``{`` line and the ``}`` line.  Signatures, decorators, doc comments,
  imports and top-level constants are never part of a body.

``None`` means "not source code this module can read": an unknown suffix, a
grammar that is not installed, a text that does not parse as its language
(more than a tenth of its lines inside parse errors), or a text larger than
:data:`MAX_BYTES`.  Pure and deterministic; parsers are built once per process.
"""

from __future__ import annotations

import importlib
import posixpath
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["MAX_BYTES", "Symbol", "language_of", "symbols"]

MAX_BYTES = 2_000_000  # larger reads are left alone (parse time ~3 MB/s)
MAX_ERROR_SHARE = 0.1  # of the lines: more inside parse errors = not this language

_SUFFIX = {
    "py": "python",
    "pyi": "python",
    "go": "go",
    "rs": "rust",
    "ts": "typescript",
    "mts": "typescript",
    "cts": "typescript",
    "tsx": "tsx",
    "js": "javascript",
    "mjs": "javascript",
    "cjs": "javascript",
    "jsx": "javascript",
    "java": "java",
    "c": "c",
    "h": "c",
    "cc": "cpp",
    "cpp": "cpp",
    "cxx": "cpp",
    "c++": "cpp",
    "hpp": "cpp",
    "hh": "cpp",
    "hxx": "cpp",
    "rb": "ruby",
    "rake": "ruby",
    "gemspec": "ruby",
    "php": "php",
}
_SHEBANG = {
    "python": "python",
    "python3": "python",
    "node": "javascript",
    "deno": "typescript",
    "ruby": "ruby",
    "php": "php",
}
_CPP_HINTS = (
    "class ",
    "namespace ",
    "template<",
    "template <",
    "public:",
    "::",
    "#include <iostream",
)

# Node types, over all grammars: functions (their body is outlined), named
# containers (classes, impls, namespaces: their members are looked at one by
# one), and wrappers looked through (export, decorators, templates...).
_FUNCTIONS = frozenset(
    {
        "function_definition",  # python, c, cpp, php
        "function_declaration",  # go, js, ts
        "generator_function_declaration",
        "method_declaration",  # go, java, php
        "method",  # ruby (``def name ... end``)
        "singleton_method",  # ruby (``def self.name ... end``)
        "constructor_declaration",  # java
        "compact_constructor_declaration",
        "function_item",  # rust
        "method_definition",  # js, ts
        "arrow_function",
        "function_expression",
        "function",
    }
)
_CONTAINERS = frozenset(
    {
        "class_definition",  # python
        "class_declaration",  # java, js, ts
        "abstract_class_declaration",
        "interface_declaration",
        "enum_declaration",
        "record_declaration",
        "impl_item",  # rust
        "trait_item",
        "mod_item",
        "class_specifier",  # cpp
        "struct_specifier",
        "namespace_definition",
        "class",  # ruby
        "module",  # ruby
        "trait_declaration",  # php
    }
)
_WRAPPERS = frozenset(
    {
        "module",
        "program",
        "source_file",
        "translation_unit",
        "decorated_definition",
        "export_statement",
        "template_declaration",
        "linkage_specification",
        "lexical_declaration",
        "variable_declaration",
        "variable_declarator",
        "declaration_list",
        "field_declaration_list",
        "class_body",
        "interface_body",
        "enum_body",
        "enum_body_declarations",
        "block",  # a Python class body
    }
)
_BRACE_BODIES = frozenset(
    {"block", "statement_block", "compound_statement", "constructor_body", "function_body"}
)
_NAME_NODES = frozenset(
    {
        "identifier",
        "field_identifier",
        "property_identifier",
        "type_identifier",
        "qualified_identifier",
        "destructor_name",
        "operator_name",
        "namespace_identifier",
        "private_property_identifier",
        "scoped_identifier",
        "generic_type",
        "scoped_type_identifier",
        "constant",  # ruby's class and module names
        "name",  # php
    }
)


@dataclass(frozen=True, slots=True)
class Symbol:
    """A function or container of a source text (rows are 0-based, inclusive).

    ``body`` is ``(first, last)``, the rows an outline may hide, or ``None``
    (a container, a one-line function, an empty body).  ``parents`` are the
    names of the enclosing containers, outermost first.
    """

    name: str
    kind: str  # "function" | "container"
    start: int
    end: int
    body: tuple[int, int] | None
    parents: tuple[str, ...] = ()


def language_of(path: str, text: str) -> str | None:
    """The grammar name for a read of ``path`` with content ``text``, if a supported one."""
    base = posixpath.basename(path)
    suffix = base.rsplit(".", 1)[-1].lower() if "." in base else ""
    lang = _SUFFIX.get(suffix)
    if lang is None and not suffix and text.startswith("#!"):
        first = text.split("\n", 1)[0].split()
        if first:
            words = [posixpath.basename(w) for w in first]
            interp = words[1] if words[0] == "env" and len(words) > 1 else words[0]
            interp = interp.removeprefix("#!")
            lang = _SHEBANG.get(interp.rstrip("0123456789.") or interp) or _SHEBANG.get(interp)
    if lang == "c" and suffix == "h" and any(hint in text for hint in _CPP_HINTS):
        lang = "cpp"
    return lang


_PARSERS: dict[str, Any] = {}


#: language -> (grammar package, its language function); every grammar is a dependency
_GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "javascript": ("tree_sitter_javascript", "language"),
    "java": ("tree_sitter_java", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
    "php": ("tree_sitter_php", "language_php"),
}


def _loaders() -> dict[str, Callable[[], object]]:
    """The language functions of the grammar packages that import."""
    loaders: dict[str, Callable[[], object]] = {}
    for lang, (package, function) in _GRAMMARS.items():
        try:
            module = importlib.import_module(package)
        except ImportError:  # pragma: no cover - every grammar is a dependency
            continue
        loaders[lang] = getattr(module, function)
    return loaders


def _parser(lang: str) -> Any:
    if lang in _PARSERS:
        return _PARSERS[lang]
    parser: Any = None
    try:
        import tree_sitter
    except ImportError:  # pragma: no cover - a dependency
        tree_sitter = None  # type: ignore[assignment]
    if tree_sitter is not None:
        loader = _loaders().get(lang)
        if loader is not None:
            parser = tree_sitter.Parser(tree_sitter.Language(loader()))
    _PARSERS[lang] = parser
    return parser


def _text(node: Any) -> str:
    raw: bytes = node.text or b""
    return raw.decode("utf-8", "replace")


def _name_of(node: Any) -> str | None:
    """The name of a function or container node (C declarators, Rust impls included)."""
    name = node.child_by_field_name("name")
    if name is None and node.type == "impl_item":
        name = node.child_by_field_name("type")
    if name is None:
        declarator = node.child_by_field_name("declarator")
        for _ in range(8):  # pointer / reference / function declarators
            if declarator is None or declarator.type in _NAME_NODES:
                break
            declarator = declarator.child_by_field_name("declarator") or next(
                (c for c in declarator.named_children if c.type in _NAME_NODES), None
            )
        name = declarator
    if name is None or name.type not in _NAME_NODES:
        return None
    text = _text(name)
    if "<" in text:
        text = text.split("<", 1)[0]
    for sep in ("::", "."):
        if sep in text:
            text = text.rsplit(sep, 1)[-1]
    text = text.lstrip("~")
    return text if text and (text[0].isalpha() or text[0] in "_$#") else None


def _python_body(node: Any, body: Any) -> tuple[int, int] | None:
    first = body.start_point.row
    if first <= node.start_point.row:
        return None  # ``def f(): return x``
    stmts = body.named_children
    if stmts and stmts[0].type == "expression_statement":
        inner = stmts[0].named_children
        if inner and inner[0].type in ("string", "concatenated_string"):
            first = stmts[0].start_point.row + 1  # the docstring's first line stays
    last = body.end_point.row
    return (first, last) if first <= last else None


def _ruby_body(node: Any, body: Any) -> tuple[int, int] | None:
    """A Ruby method's body: the rows between its ``def`` line and its ``end`` line."""
    first, last = body.start_point.row, body.end_point.row
    if first <= node.start_point.row or last >= node.end_point.row:
        return None  # ``def x = 1``, ``def x; 1; end``
    return first, last


def _brace_body(body: Any) -> tuple[int, int] | None:
    first, last = body.start_point.row + 1, body.end_point.row - 1
    return (first, last) if first <= last else None


def _walk(node: Any, lang: str, parents: tuple[str, ...], hint: str | None) -> Iterator[Symbol]:
    for child in node.named_children:
        kind = child.type
        if kind in _FUNCTIONS:
            name = _name_of(child) or hint
            body = child.child_by_field_name("body")
            if name is None or body is None or child.has_error:
                continue
            if lang == "python":
                span = _python_body(child, body) if body.type == "block" else None
            elif lang == "ruby":
                span = _ruby_body(child, body) if body.type == "body_statement" else None
            else:
                span = _brace_body(body) if body.type in _BRACE_BODIES else None
            yield Symbol(
                name, "function", child.start_point.row, child.end_point.row, span, parents
            )
        elif kind in _CONTAINERS:
            name = _name_of(child)
            if name is None:
                continue
            yield Symbol(
                name, "container", child.start_point.row, child.end_point.row, None, parents
            )
            # a container with a syntax error in one member (the file an agent is fixing)
            # still has its other members: each function with an error of its own is skipped
            body = child.child_by_field_name("body")
            if body is not None:
                yield from _walk(body, lang, (*parents, name), None)
        elif kind in _WRAPPERS and not (kind == "block" and lang != "python"):
            if kind == "variable_declarator":
                name_node = child.child_by_field_name("name")
                sub_hint = _text(name_node) if name_node is not None else None
                value = child.child_by_field_name("value")
                if value is not None and value.type in _FUNCTIONS and sub_hint:
                    yield from _walk_one(value, lang, parents, sub_hint)
                continue
            yield from _walk(child, lang, parents, hint)


def _walk_one(node: Any, lang: str, parents: tuple[str, ...], name: str) -> Iterator[Symbol]:
    body = node.child_by_field_name("body")
    if body is None or node.has_error or body.type not in _BRACE_BODIES:
        return
    yield Symbol(
        name, "function", node.start_point.row, node.end_point.row, _brace_body(body), parents
    )


def _error_rows(root: Any) -> int:
    rows: set[int] = set()
    pending = [root]
    while pending:
        node = pending.pop()
        if node.type == "ERROR" or node.is_missing:
            rows.update(range(node.start_point.row, node.end_point.row + 1))
            continue
        if node.has_error:
            pending.extend(node.children)
    return len(rows)


def symbols(code: str, lang: str) -> list[Symbol] | None:
    """The functions and containers of ``code`` in ``lang``, in source order, or ``None``."""
    raw = code.encode("utf-8", "surrogatepass")
    if len(raw) > MAX_BYTES:
        return None
    parser = _parser(lang)
    if parser is None:
        return None
    tree = parser.parse(raw)
    root = tree.root_node
    if root.has_error and _error_rows(root) > MAX_ERROR_SHARE * (code.count("\n") + 1):
        return None
    return list(_walk(root, lang, (), None))
