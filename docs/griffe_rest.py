"""Griffe extension: the package's reST docstrings as Markdown for the API reference.

The docstrings stay reStructuredText (they are read with ``help()`` and on the environments'
pages); mkdocstrings renders Markdown. Once griffe has loaded ``sergeant_major_env``, every
docstring is converted by :func:`sergeant_major_env.doc_tables.rest_to_markdown`: roles become
cross-references (a link where the target is on the site, else code), simple tables become
Markdown tables, literal blocks fenced code. Loaded from mkdocs.yml (mkdocstrings' ``extensions``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import griffe

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # this checkout's package, whatever is installed

from sergeant_major_env.doc_tables import rest_to_markdown  # noqa: E402

PACKAGE = "sergeant_major_env"


def _exists(loader: griffe.GriffeLoader, path: str) -> str | None:
    """The documented path of ``path`` (an alias's target), or None where griffe does not know it."""
    try:
        found = loader.modules_collection[path]
    except (KeyError, ValueError, griffe.AliasResolutionError, griffe.CyclicAliasError):
        return None
    try:
        return found.final_target.path if found.is_alias else found.path
    except (griffe.AliasResolutionError, griffe.CyclicAliasError):
        return found.path


def resolve(obj: griffe.Object, target: str, loader: griffe.GriffeLoader) -> str | None:
    """The full path a role's target names from ``obj``'s docstring: as Python would resolve its
    first name there, else absolute, else relative to the package; None where nothing matches."""
    head, _, rest = target.partition(".")
    candidates = []
    try:
        candidates.append(obj.resolve(head) + (f".{rest}" if rest else ""))
    except griffe.NameResolutionError:
        pass
    candidates += [target, f"{obj.module.path}.{target}", f"{PACKAGE}.{target}"]
    for candidate in candidates:
        if path := _exists(loader, candidate):
            return path
    return None


def _objects(obj: griffe.Object):
    """``obj`` and everything defined under it (aliases are converted where they are defined)."""
    yield obj
    for member in obj.members.values():
        if not member.is_alias:
            yield from _objects(member)


class RestDocstrings(griffe.Extension):
    """Converts every docstring of the package once it is loaded."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs) -> None:
        if pkg.path != PACKAGE:
            return
        for obj in _objects(pkg):
            if obj.docstring is None:
                continue

            def link(target: str, code: str, obj=obj) -> str | None:
                path = resolve(obj, target, loader)
                # optional: a plain code span, without a warning, where the target is not on the site
                return f'<autoref identifier="{path}" optional>{code}</autoref>' if path else None

            obj.docstring.value = rest_to_markdown(obj.docstring.value, link)
