"""The shape of the code base, read from the source text (nothing is imported).

- no import cycle between trustlab modules (imports inside functions count: they are cycles a
  reader has to untangle all the same);
- no module reaches into another trustlab package's private (underscore) modules or names;
- layers: method packages never import the report, the audit or the CLI; the report never
  imports a method package, the audit or the CLI; the audit never imports the CLI;
- no module over about 600 lines without a reason written at its top;
- no block of more than 10 lines repeated in src/ (parameter lists aside).
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections import defaultdict
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "trustlab"
MAX_LINES = 600
LONG_MODULE_MARK = "Why this module is long:"
MAX_REPEATED_LINES = 10
# Shared internals of trustlab itself (top-level underscore modules) serve every package.
PRESENTATION = {"trustlab.report", "trustlab.audit", "trustlab.cli"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(name: str, path: Path) -> list[tuple[str, str | None, int]]:
    """(module, imported name or None, line) for every import outside ``if TYPE_CHECKING``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: list[tuple[str, str | None, int]] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for other in child.orelse:
                    visit(other)
            elif isinstance(child, ast.Import):
                found.extend((alias.name, None, child.lineno) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package[: len(package) - child.level + 1]
                    module = ".".join(base + ([child.module] if child.module else []))
                else:
                    module = child.module or ""
                found.extend((module, alias.name, child.lineno) for alias in child.names)
            else:
                visit(child)

    visit(tree)
    return found


def _edges() -> dict[str, set[tuple[str, str | None, int]]]:
    """module -> {(imported trustlab module, imported name or None, line)}."""
    edges: dict[str, set[tuple[str, str | None, int]]] = defaultdict(set)
    for name, path in MODULES.items():
        for module, attr, line in _imports(name, path):
            if not module.startswith("trustlab"):
                continue
            if attr and f"{module}.{attr}" in MODULES:  # `from package import submodule`
                edges[name].add((f"{module}.{attr}", None, line))
            elif module in MODULES:
                edges[name].add((module, attr, line))
    return edges


EDGES = _edges()


def _package(module: str) -> str:
    return ".".join(module.split(".")[:2])


def _cycles() -> list[list[str]]:
    graph = {m: {t for t, _, _ in EDGES.get(m, ())} for m in MODULES}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            connect(v)
    return found


def test_the_walk_sees_the_whole_package():
    # A walker that found nothing would pass every test below.
    assert len(MODULES) > 50
    assert any(t == "trustlab.errors" for t, _, _ in EDGES["trustlab._checks"])
    assert "trustlab.cli.main" in MODULES and EDGES["trustlab.cli.main"]


def test_no_import_cycles():
    assert _cycles() == []


def test_no_module_reaches_into_another_packages_private_parts():
    offenders = []
    for name, targets in EDGES.items():
        for target, attr, line in targets:
            parts = target.split(".")
            if len(parts) < 2 or parts[1].startswith("_") or _package(target) == _package(name):
                continue  # trustlab's own shared internals, or the same package
            private = [p for p in [*parts[2:], attr or ""] if p.startswith("_") and p[:2] != "__"]
            if private:
                offenders.append(f"{name}:{line} imports {target} {attr or ''}".strip())
    assert offenders == []


def test_layers():
    offenders = []
    for name, targets in EDGES.items():
        own = _package(name)
        for target, _, line in targets:
            other = _package(target)
            if (
                other == own
                or other in {"trustlab", "trustlab.errors"}
                or other[9:].startswith("_")
            ):
                continue  # the same package, or trustlab's shared internals
            if own == "trustlab.cli":
                continue
            if own == "trustlab.audit" and other == "trustlab.cli":
                offenders.append(f"{name}:{line} -> {target}")
            elif own == "trustlab.report" and other not in {"trustlab"}:
                offenders.append(f"{name}:{line} -> {target}")
            elif own not in PRESENTATION and other in PRESENTATION:
                offenders.append(f"{name}:{line} -> {target}")
    assert offenders == []


def test_long_modules_say_why():
    offenders = []
    for name, path in MODULES.items():
        text = path.read_text(encoding="utf-8")
        n_lines = text.count("\n")
        if n_lines <= MAX_LINES:
            continue
        docstring = ast.get_docstring(ast.parse(text)) or ""
        if LONG_MODULE_MARK not in docstring:
            offenders.append(f"{name}: {n_lines} lines")
    assert offenders == []


def _signature_lines(tree: ast.AST) -> set[int]:
    """Lines of parameter lists: every def's header, from ``def`` to its body."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines.update(range(node.lineno, node.body[0].lineno))
    return lines


def _docstring_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                lines.update(range(body[0].lineno, body[0].end_lineno + 1))
    return lines


_NAME_ITEM = re.compile(r"""["'][\w.]*["'],?""")


def _code_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, stripped text) of the lines that count: no blanks, comments, imports,
    docstrings, parameter lists or lone brackets."""
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    skip = _signature_lines(tree) | _docstring_lines(tree)
    kept = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if number in skip or not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith(("import ", "from ")) or stripped in {")", "]", "}", "),", "],"}:
            continue
        if _NAME_ITEM.fullmatch(stripped):  # an item of a list of names (__all__ and the like)
            continue
        kept.append((number, " ".join(stripped.split())))
    return kept


def _repeated_blocks() -> list[str]:
    size = MAX_REPEATED_LINES + 1
    first: dict[str, tuple[str, int]] = {}  # window -> where it stood first (module, index)
    repeats = []
    for name, path in MODULES.items():
        lines = _code_lines(path)
        run_end = -1  # windows of one repeated run are reported once
        for i in range(len(lines) - size + 1):
            key = hashlib.sha1("\n".join(t for _, t in lines[i : i + size]).encode()).hexdigest()
            other = first.setdefault(key, (name, i))
            if other == (name, i) or (other[0] == name and i - other[1] < size):
                continue  # the first time, or overlapping itself
            if i > run_end:
                line = _code_lines(MODULES[other[0]])[other[1]][0]
                repeats.append(f"{name}:{lines[i][0]} repeats {other[0]}:{line}")
            run_end = i + size
    return repeats


def test_the_repeat_finder_finds_a_repeat(tmp_path, monkeypatch):
    body = "\n".join(f"    total = total + {i} * value" for i in range(MAX_REPEATED_LINES + 1))
    source = f"def f(value):\n    total = 0\n{body}\n    return total\n"
    pkg = tmp_path / "trustlab"
    pkg.mkdir()
    (pkg / "a.py").write_text(source)
    (pkg / "b.py").write_text(source.replace("def f", "def g"))
    monkeypatch.setitem(
        globals(), "MODULES", {"trustlab.a": pkg / "a.py", "trustlab.b": pkg / "b.py"}
    )
    assert len(_repeated_blocks()) == 1


def test_no_block_of_more_than_ten_lines_is_repeated():
    assert _repeated_blocks() == []


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.count(".") == 1))
def test_packages_have_docstrings(module):
    path = MODULES[module]
    assert ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))), module
