"""No module imports one that imports it back, in either language: the
Python package's every import statement (in functions and under
``TYPE_CHECKING`` too) and the engine's module-level ``use``/path references
between its top-level modules (docs/architecture.md)."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Dict, List, Optional, Set

ROOT = Path(__file__).resolve().parents[1]
Graph = Dict[str, Set[str]]


def python_graph(src: Path, package: str) -> Graph:
    """Module -> the package's modules it imports. Importing a submodule
    through its package (``from . import x``) is an edge to the submodule
    only: a package a module is in runs first anyway."""
    mods: Dict[str, Path] = {}
    for p in (src / package).rglob("*.py"):
        parts = list(p.relative_to(src).with_suffix("").parts)
        mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    graph: Graph = {}
    for name, path in mods.items():
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: Set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                edges.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = here.split(".")[: len(here.split(".")) - node.level + 1] if node.level else []
                mod = ".".join(base + ([node.module] if node.module else []))
                subs = [f"{mod}.{a.name}" for a in node.names if f"{mod}.{a.name}" in mods]
                edges.update(subs)
                if len(subs) < len(node.names):
                    edges.add(mod)
        graph[name] = {e for e in edges if e in mods and e != name and not name.startswith(e + ".")}
    return graph


def rust_graph(src: Path) -> Graph:
    """Top-level module of a crate -> the top-level modules it refers to
    (``use crate::x``, ``crate::x::...`` paths, ``super::`` from below the
    top level), tests left out."""
    graph: Graph = {}
    for p in src.rglob("*.rs"):
        parts = p.relative_to(src).with_suffix("").parts
        if parts[0] in ("lib", "main"):
            continue
        top = parts[0]
        depth = len(parts) - (1 if parts[-1] == "mod" else 0)
        text = re.sub(r"//[^\n]*", "", p.read_text()).split("#[cfg(test)]")[0]
        refs = set(re.findall(r"\bcrate::\{?\s*(\w+)", text))
        for m in re.finditer(r"\bcrate::\{([^;]*)\}", text):
            refs.update(re.findall(r"(?:^|[{,])\s*(\w+)", m.group(1)))
        for m in re.finditer(r"\b((?:super::)+)(\w+)", text):
            if m.group(1).count("super") == depth:
                refs.add(m.group(2))
        graph.setdefault(top, set()).update(r for r in refs if r != top and r not in ("self", "super"))
    tops = set(graph)
    return {k: v & tops for k, v in graph.items()}


def find_cycle(graph: Graph) -> Optional[List[str]]:
    """A cycle of the graph as its nodes in order, or None."""
    state: Dict[str, int] = {}
    stack: List[str] = []

    def visit(v: str) -> Optional[List[str]]:
        state[v] = 1
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if state.get(w) == 1:
                return stack[stack.index(w) :] + [w]
            if w not in state:
                found = visit(w)
                if found:
                    return found
        stack.pop()
        state[v] = 2
        return None

    for v in sorted(graph):
        if v not in state:
            found = visit(v)
            if found:
                return found
    return None


def test_no_python_module_imports_one_that_imports_it_back() -> None:
    graph = python_graph(ROOT / "python", "ssdlab")
    assert len(graph) > 100 and "ssdlab.suite.states" in graph["ssdlab.sim"]
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_no_rust_module_uses_one_that_uses_it_back() -> None:
    for crate in ("ssdlab-sim", "ssdlab-py"):
        graph = rust_graph(ROOT / "crates" / crate / "src")
        assert find_cycle(graph) is None, f"{crate}: " + " -> ".join(find_cycle(graph) or [])
    sim = rust_graph(ROOT / "crates" / "ssdlab-sim" / "src")
    assert {"controller", "ftl", "nand", "stats"} <= sim["engine"] and "parse" in sim["config"]


def test_a_cycle_is_found_in_either_language(tmp_path: Path) -> None:
    pkg = tmp_path / "py" / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from . import a\n")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..a import g\n")
    assert find_cycle(python_graph(tmp_path / "py", "pkg")) == ["pkg.a", "pkg.sub.b", "pkg.a"]
    rs = tmp_path / "rs"
    (rs / "config").mkdir(parents=True)
    (rs / "config" / "mod.rs").write_text("mod sections;\nuse crate::parse::size;\n")
    (rs / "config" / "sections.rs").write_text("use super::helper;\nuse super::super::error::Error;\n")
    (rs / "parse.rs").write_text("use crate::{error::Result, config::UNIT};\n")
    (rs / "error.rs").write_text("// crate::config\n#[cfg(test)]\nmod tests { use crate::parse; }\n")
    assert rust_graph(rs) == {"config": {"parse", "error"}, "parse": {"error", "config"}, "error": set()}
    assert find_cycle(rust_graph(rs)) == ["config", "parse", "config"]
    (rs / "parse.rs").write_text("use crate::error::Result;\n")
    assert find_cycle(rust_graph(rs)) is None
