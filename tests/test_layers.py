"""The package's layers, and that imports run one way through them.

From the top: integrations (the command line, Dask, CUDA), the public API (the modules at the
top of ``jitdigest/``), ``runtime`` (stored code), ``engine`` (dispatch and the work around a
kernel call), ``kernels`` (Numba code and the one package of Numba internals), ``base``. A
module may import its own layer or any below it, never one above, and no modules import each
other in a circle (imports inside functions count: they are the same dependency, later).
"""
import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "jitdigest"

LAYERS = ("base", "kernels", "engine", "runtime", "api", "integrations")
INTEGRATIONS = ("jitdigest.cli", "jitdigest.sum", "jitdigest.dask", "jitdigest.cuda",
                "jitdigest.__main__")


def layer(module):
    """The layer of a dotted module name inside jitdigest."""
    if module.startswith(INTEGRATIONS):
        return "integrations"
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in ("base", "kernels", "engine", "runtime"):
        return parts[1]
    return "api"


def modules(root=PACKAGE):
    """{dotted name: path} of every module under ``root`` (a folder named jitdigest)."""
    found = {}
    for path in root.rglob("*.py"):
        parts = ("jitdigest",) + path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imports(name, path, known):
    """The jitdigest modules that module ``name`` (at ``path``) imports, anywhere in it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                source = base + ("." + node.module if node.module else "")
            else:
                source = node.module or ""
            targets = [source + "." + a.name for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target.startswith("jitdigest") and target != name:
                found.add(target)
    return found


def graph(root=PACKAGE):
    known = modules(root)
    return {name: imports(name, path, known) for name, path in known.items()}


def upward(edges):
    """Every (importer, imported) pair where the imported module's layer is above."""
    rank = {name: i for i, name in enumerate(LAYERS)}
    return sorted((a, b) for a, targets in edges.items() for b in targets
                  if rank[layer(b)] > rank[layer(a)])


def circles(edges):
    """The groups of modules that import each other in a circle (Tarjan's components).
    A package's ``__init__`` importing its own submodules, which import names from it, is
    Python's ordinary package form and is not counted."""
    def parent(a, b):
        return b.startswith(a + ".")
    edges = {a: {b for b in bs if not parent(b, a)} for a, bs in edges.items()}
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_imports_never_run_upward():
    assert upward(graph()) == []


def test_no_modules_import_each_other_in_a_circle():
    assert circles(graph()) == []


def test_a_planted_upward_import_is_named(tmp_path):
    """The checks above can fail: a copy of the package with one upward import planted in the
    engine, and one circle, is caught, and the offending pair named."""
    import shutil
    root = tmp_path / "jitdigest"
    shutil.copytree(PACKAGE, root, ignore=shutil.ignore_patterns("__pycache__"))
    dispatch = root / "engine" / "dispatch.py"
    dispatch.write_text(dispatch.read_text() + "\n\ndef _planted():\n    from .. import batch\n")
    assert ("jitdigest.engine.dispatch", "jitdigest.batch") in upward(graph(root))
    cpu = root / "engine" / "cpu.py"
    cpu.write_text(cpu.read_text() + "\nfrom . import dispatch as _planted_circle\n")
    assert any({"jitdigest.engine.cpu", "jitdigest.engine.dispatch"} <= set(group)
               for group in circles(graph(root)))


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_every_layer_has_modules(name):
    """The layer table names folders that exist (a renamed folder fails here, not silently)."""
    assert any(layer(m) == name for m in modules())


def test_the_standard_librarys_hashlib_and_hmac_only_through_base_stdlib():
    """jitdigest may stand in for hashlib and hmac in ``sys.modules``; a module of its own that
    imported them by name would then call itself (a kernel's cache key computed by the kernel
    being loaded). Only ``base/stdlib.py`` imports them, under the real names."""
    found = []
    for name, path in modules().items():
        if name == "jitdigest.base.stdlib":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module] if isinstance(node, ast.ImportFrom) and not node.level
                     else [])
            found += [(name, n) for n in names if n in ("hashlib", "hmac")]
    assert found == []
