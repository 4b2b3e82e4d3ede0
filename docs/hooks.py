"""mkdocs hook: replace `<!-- generated: NAME [ARG ...] -->` markers with tables built from the code.

The tables come from `sergeant_major_env.doc_tables` (observation by index range, actions,
rule and env options, spec tables, version history), so the pages cannot drift from the code.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # this checkout's package, whatever is installed

from sergeant_major_env import doc_tables  # noqa: E402


def on_page_markdown(markdown: str, page, config, files) -> str:
    """The page's Markdown with every generated-table marker replaced (an unknown one fails the build)."""
    try:
        return doc_tables.replace_markers(markdown)
    except ValueError as error:
        raise SystemExit(f"{page.file.src_path}: {error}") from None
