"""Each rule once in the compiled layer, and a kernel API without private names across modules
(issue 53).

R16 (the trick's winner) lives in `engine.card_strength_k` and `engine.trick_winner_k`; the
observation, the heuristic, the search and the views call them, and `engine.STRENGTH` is made
from the kernel. These tests read the package's source (``ast`` and the text) and fail when a
second copy of R16's strength appears, or when a module reaches into another module's private
names (`from x import _y`, `x._y`).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np

from sergeant_major_env import engine
from test_layering import package_files

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "sergeant_major_env"


MODULES = package_files()


# ============================================================================ R16 once

def trump_strengths(source: str) -> list[str]:
    """The functions of `source` that compute R16's trump strength, `26 + rank` (the
    expression every copy of the rule has written: an addition to the constant 26)."""
    tree = ast.parse(source)
    return [function.name for function in ast.walk(tree) if isinstance(function, ast.FunctionDef)
            for node in ast.walk(function) if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)
            and any(isinstance(side, ast.Constant) and side.value == 26 for side in (node.left, node.right))]


def test_r16s_strength_is_written_once_in_the_engines_kernel():
    found = {name: trump_strengths(path.read_text(encoding="utf-8")) for name, (path, _) in MODULES.items()}
    assert {name: functions for name, functions in found.items() if functions} == {
        f"{PACKAGE}.engine": ["card_strength_k"]}
    assert trump_strengths("def copy(c, mode):\n    return 26 + c % 13 if c // 13 == mode else 0\n") == ["copy"]


def test_only_the_engine_reads_r16s_strength_and_the_others_call_its_winner():
    """No module but the engine calls `card_strength_k` or indexes `STRENGTH` (a second winner
    function would); the observation, the heuristic and the search call `trick_winner_k`."""
    readers = {name for name, (path, _) in MODULES.items()
               if re.search(r"card_strength_k|STRENGTH\[", path.read_text(encoding="utf-8"))}
    assert readers == {f"{PACKAGE}.engine"}
    for name in ("observation", "agents.heuristic_kernels", "agents.pimc_kernels"):
        assert "trick_winner_k(" in MODULES[f"{PACKAGE}.{name}"][0].read_text(encoding="utf-8"), name


def test_the_strength_table_is_the_kernels():
    """`engine.STRENGTH` (numpy code's R16) is `card_strength_k` over every mode, led suit and card."""
    cards = np.arange(52)
    for mode in range(6):
        for led in range(4):
            expected = np.where(cards // 13 == mode, 26 + cards % 13, np.where(cards // 13 == led, 13 + cards % 13, 0))
            assert (engine.STRENGTH[mode, led] == expected).all()
            assert [engine.card_strength_k(c, mode, led) for c in (0, 13, 26, 39, 51)] == expected[
                [0, 13, 26, 39, 51]].tolist()


# ============================================================================ no private names across modules

def _source_module(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute name of the module an ``from ... import`` reads from."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_uses(module: str, source: str, is_package: bool = False) -> set[tuple[str, str]]:
    """(module, other module's private name) for each `from other import _name` and each
    `other._name` in `source`, the text of `module`, where `other` is a module of the
    package bound by an import (third-party modules, numba's privates included, are not the
    package's and are not counted)."""
    found, bound = set(), {}  # bound: local name -> package module
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            origin = _source_module(node, module, is_package)
            for alias in node.names:
                if f"{origin}.{alias.name}" in MODULES:
                    bound[alias.asname or alias.name] = f"{origin}.{alias.name}"
                elif origin in MODULES and _private(alias.name):
                    found.add((module, f"{origin}.{alias.name}"))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in MODULES:
                    bound[alias.asname or alias.name.split(".")[0]] = (alias.name if alias.asname
                                                                       else alias.name.split(".")[0])
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            chain, value = [], node.value
            while isinstance(value, ast.Attribute):
                chain.insert(0, value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id in bound:
                target = ".".join([bound[value.id], *chain])
                if target in MODULES and target != module:
                    found.add((module, f"{target}.{node.attr}"))
    return found


def test_no_module_imports_another_modules_private_names():
    """A kernel or helper that another module calls is public (named for what it does, with a
    docstring): no `from module import _name` nor `module._name` across the package's modules."""
    used = set().union(*(private_uses(module, path.read_text(encoding="utf-8"), is_package)
                         for module, (path, is_package) in MODULES.items()))
    assert not used, sorted(used)


def test_the_scan_finds_both_forms_and_skips_third_party_and_own_names():
    source = ("import numba\nimport sergeant_major_env.cards as cards\nfrom sergeant_major_env import engine\n"
              "from .jit import _cores, kernel\nengine._hidden()\ncards.count\nnumba._private\n")
    assert private_uses(f"{PACKAGE}.observation", source) == {
        (f"{PACKAGE}.observation", f"{PACKAGE}.jit._cores"), (f"{PACKAGE}.observation", f"{PACKAGE}.engine._hidden")}
    assert private_uses(f"{PACKAGE}.engine", "from sergeant_major_env import engine\nengine._own\n") == set()
