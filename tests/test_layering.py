"""The package's shape: no import circles, the core never imports the agents, training or the
commands, and nothing imports a bare ``agents`` or ``training`` (one import root).

The import graph is read from the source with ``ast``: every ``.py`` file under
``sergeant_major_env/`` and ``agents/`` (the package ``sergeant_major_env.agents``), counting the
imports a module runs when it is imported (its body, including ``if``/``try`` blocks such as
``if TYPE_CHECKING:``), not the ones inside functions, which run later.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import extra_reason

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "sergeant_major_env"
FORBIDDEN_IN_CORE = (f"{PACKAGE}.agents", f"{PACKAGE}.training", f"{PACKAGE}.cli")
CORE = ("engine", "rules", "cards", "observation", "aec", "single_seat", "vec_env", "gym_vector", "learner_games",
        "records", "render",
        "replay_page", "terminal_game", "evaluation", "statistics", "worlds", "policies", "files", "seeding", "processes",
        "options", "versions", "sergeant_major_v0", "doc_tables", "interrupts", "limits", "web", "pages",
        "openspiel", "jit", "threads", "one_game", "progress", "arguments", "ray_jobs")
OPTIONAL = {"vec_env": "stable_baselines3", "openspiel": "pyspiel"}
"""Core modules that need an optional package (the module: the package)."""
REPO_PYTHON = ("sergeant_major_env", "agents", "tests", "benchmarks", "examples", "train.py", "evaluate.py", "play.py")
BARE_NAMES = ("agents", "training")


# ============================================================================ reading the source

def package_files() -> dict[str, tuple[Path, bool]]:
    """Module name -> (file, is a package ``__init__``) for every module of the import root.
    ``sergeant_major_env/agents`` is a link to ``agents/``: its files are read once, from there."""
    modules = {}
    for folder, prefix in ((ROOT / PACKAGE, PACKAGE), (ROOT / "agents", f"{PACKAGE}.agents")):
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if folder.name == PACKAGE and parts[0] == "agents":
                continue
            is_package = parts[-1] == "__init__"
            modules[".".join((prefix, *(parts[:-1] if is_package else parts)))] = (path, is_package)
    return modules


def import_nodes(tree: ast.AST, module_level: bool) -> list[ast.Import | ast.ImportFrom]:
    """The import statements of ``tree``; with ``module_level``, only those run at import time
    (not inside a function or lambda)."""
    found, stack = [], [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        if module_level and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return found


def imported_names(module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The absolute names an import statement of ``module`` asks for: ``import a.b`` -> ``a.b``;
    ``from .x import y`` -> ``<package>.x.y`` when y is a submodule, else ``<package>.x``."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    return [target] + [f"{target}.{alias.name}" for alias in node.names]


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of the package it imports at import time (``from . import engine``
    counts as an edge to ``engine`` only; ``from . import Rules`` to the package's ``__init__``)."""
    modules = package_files()
    graph = {}
    for module, (path, is_package) in modules.items():
        edges = set()
        for node in import_nodes(ast.parse(path.read_text(), str(path)), module_level=True):
            names = imported_names(module, is_package, node)
            if isinstance(node, ast.Import):
                edges.update(name for name in names if name in modules)
                continue
            target, members = names[0], names[1:]
            submodules = [name for name in members if name in modules]
            edges.update(submodules)
            if len(submodules) < len(members) and target in modules:
                edges.add(target)  # a name defined by the module itself, not a submodule
        graph[module] = edges - {module}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` as a path ``[a, b, ..., a]``, or None (depth-first search)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state:
                cycle = visit(target)
                if cycle:
                    return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            cycle = visit(start)
            if cycle:
                return cycle
    return None


# ============================================================================ circles

def test_find_cycle_finds_a_circle_and_only_a_circle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_the_graph_sees_relative_absolute_and_type_checking_imports():
    tree = ast.parse("from . import engine, Rules\nfrom .statistics import Schedule\nimport sergeant_major_env.cards\n"
                     "if TYPE_CHECKING:\n    from .evaluation import Schedule\n"
                     "def later():\n    from .agents import make_agent\n")
    nodes = import_nodes(tree, module_level=True)
    names = {name for node in nodes for name in imported_names(f"{PACKAGE}.statistics", False, node)}
    assert {f"{PACKAGE}.engine", f"{PACKAGE}.statistics", f"{PACKAGE}.cards", f"{PACKAGE}.evaluation"} <= names
    assert not any(name.startswith(f"{PACKAGE}.agents") for name in names)
    assert len(import_nodes(tree, module_level=False)) == len(nodes) + 1


def test_the_package_has_no_import_circle():
    graph = import_graph()
    assert {f"{PACKAGE}.evaluation", f"{PACKAGE}.statistics", f"{PACKAGE}.agents.pimc", f"{PACKAGE}.cli.records",
            f"{PACKAGE}.training.ship"} <= set(graph), "the graph must cover the whole package"
    assert f"{PACKAGE}.statistics" in graph[f"{PACKAGE}.evaluation"]
    cycle = find_cycle(graph)
    assert cycle is None, "import circle: " + " -> ".join(cycle)


@pytest.mark.slow
def test_every_module_of_the_package_imports():
    """Each module imports in one fresh interpreter, whatever was imported before it (a circle
    that ast misses, e.g. through ``importlib``, would fail here)."""
    modules = sorted(package_files())
    script = (
        "import importlib, json, sys\n"
        "failed, missing = {}, {}\n"
        "for name in json.loads(sys.argv[1]):\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except ModuleNotFoundError as error:\n"
        f"        (failed if (error.name or '').startswith('{PACKAGE}') else missing)[name] = repr(error)\n"
        "    except Exception as error:\n"
        "        failed[name] = repr(error)\n"
        "print(json.dumps({'failed': failed, 'missing': missing}))\n")
    # An optional dependency that is not installed (CI installs them all) is the only excuse,
    # and only the modules of OPTIONAL have one.
    done = subprocess.run([sys.executable, "-c", script, json.dumps(modules)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    assert outcome["failed"] == {}
    assert not set(outcome["missing"]) & {f"{PACKAGE}.{name}" for name in CORE if name not in OPTIONAL}, outcome


# ============================================================================ the core stays apart

def test_the_core_list_is_the_package_minus_agents_training_and_commands():
    top_level = {name.split(".")[1] for name in package_files() if name.count(".") >= 1}
    assert top_level == set(CORE) | {"__main__", "agents", "training", "cli"}


@pytest.mark.parametrize("name", CORE)
def test_importing_a_core_module_loads_no_agents_training_or_commands(name):
    if name in OPTIONAL and importlib.util.find_spec(OPTIONAL[name]) is None:
        pytest.skip(extra_reason(OPTIONAL[name]))
    script = (f"import importlib, json, sys\nimportlib.import_module('{PACKAGE}.{name}')\n"
              f"print(json.dumps(sorted(m for m in sys.modules if m.startswith({FORBIDDEN_IN_CORE!r}))))\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


def test_no_core_module_imports_agents_training_or_commands_even_inside_a_function():
    modules = package_files()
    offences = []
    for name in CORE:
        path, is_package = modules[f"{PACKAGE}.{name}"]
        for node in import_nodes(ast.parse(path.read_text(), str(path)), module_level=False):
            for imported in imported_names(f"{PACKAGE}.{name}", is_package, node):
                if imported.startswith(FORBIDDEN_IN_CORE):
                    offences.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {imported}")
    assert offences == []


# ============================================================================ one import root

def bare_imports(path: Path, root: Path = ROOT) -> list[str]:
    """``import agents`` / ``from training.x import y`` ... anywhere in the file (any depth)."""
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in import_nodes(tree, module_level=False):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found += [f"{path.relative_to(root)}:{node.lineno}: {name}" for name in names
                  if name.split(".")[0] in BARE_NAMES]
    return found


def repo_python_files() -> list[Path]:
    files = []
    for entry in REPO_PYTHON:
        path = ROOT / entry
        files += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return files


def test_bare_imports_are_found_at_any_depth(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("import os\ndef f():\n    import agents.pimc\n    from training import ship\n"
                     "from sergeant_major_env.agents import make_agent\nfrom .training import x\n")
    assert sorted(bare_imports(probe, tmp_path)) == ["probe.py:3: agents.pimc", "probe.py:4: training"]


def test_nothing_imports_a_bare_agents_or_training():
    files = repo_python_files()
    assert len(files) > 50 and ROOT / "train.py" in files
    assert [line for path in files for line in bare_imports(path)] == []
