"""The game's two pages as files: the page played in the browser (`play --web`) and the
replay page of a record (`records html`), each an HTML file, a style sheet and a script,
beside the card and table drawing they share.

The files are package data (`sergeant_major_env/pages/`, read with `importlib.resources`,
so they are found in a wheel too); an editor, a linter or a browser's tools open them as they
are. A page is put together here into one self-contained HTML file (no network, no external
font): `assemble` fills the HTML file's `__STYLE__` with `table.css` and the page's
own style sheet, and its `__SCRIPT__` with a first line of constants (the card vocabulary of
`sergeant_major_env.render`, so a card reads the same in the terminal and in both pages,
and the page's own settings), `table.js` and the page's own script.

- `table.css`, `table.js`: the felt table, seat panels, card faces, suit colours and score
  sheet, and the functions drawing them (`element`, `signed`, `seatPanels`, `suited`,
  `cardText`, `cardFace`, `fillFinal`, `sheetHead`, `sheetRow`);
- `play.html`, `play.css`, `play.js`: the page of `play --web` (`play_page`);
- `replay.html`, `replay.css`, `replay.js`: the replay page
  ([`sergeant_major_env.replay_page.page_html`][]).

The scripts know no rule of the game; they only draw what they are given.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any, Mapping

from ..cards import SUIT_SYMBOLS
from ..render import MODE_TEXT, RANK_TEXT

FILES = ("table.css", "table.js", "play.html", "play.css", "play.js", "replay.html", "replay.css", "replay.js")
"""The package data files of the pages (pyproject.toml's package-data ships them)."""

_PLACEHOLDER = re.compile(r"__[A-Z]+__")
"""A placeholder of an HTML file (`__STYLE__`, `__SCRIPT__`, `__TITLE__`, `__DATA__`)."""


def read(name: str) -> str:
    """The text of the page file `name` (one of `FILES`), from the installed package."""
    if name not in FILES:
        raise ValueError(f"no page file {name!r}: the files are {', '.join(FILES)}")
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")


def constants(**values: Any) -> str:
    """The script's first lines: `"use strict"` and one `const` per value (as JSON), the
    card vocabulary (`RANK_TEXT`, a ten written `10`; `SUITS`; `MODE_TEXT`) first."""
    named = {"RANK_TEXT": list(RANK_TEXT), "SUITS": SUIT_SYMBOLS, "MODE_TEXT": list(MODE_TEXT), **values}
    lines = [f"const {name} = {json.dumps(value, ensure_ascii=False)};" for name, value in named.items()]
    return '"use strict";\n' + "\n".join(lines) + "\n"


def assemble(name: str, values: Mapping[str, str] | None = None, **settings: Any) -> str:
    """The page `name` (`"play"` or `"replay"`) as one HTML file: its style and script
    inlined (see the module docstring), `settings` as script constants, and each other
    placeholder of `values` (`{"__TITLE__": ...}`) filled. All placeholders are filled in
    one pass, so text put in for one is never searched for another."""
    filled = {"__STYLE__": "\n" + read("table.css") + read(f"{name}.css"),
              "__SCRIPT__": "\n" + constants(**settings) + read("table.js") + read(f"{name}.js"),
              **(values or {})}
    template = read(f"{name}.html")
    missing = set(_PLACEHOLDER.findall(template)) - set(filled)
    if missing:
        raise ValueError(f"page {name!r}: no value for {', '.join(sorted(missing))}")
    return _PLACEHOLDER.sub(lambda match: filled[match.group(0)], template)


def play_page(pace: float) -> str:
    """The page of `play --web`, showing the bots' moves `pace` seconds apart unless the
    person changes it (the hooks for automation are in `docs/web.md`)."""
    return assemble("play", PACE=float(pace))
