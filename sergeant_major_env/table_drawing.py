"""The card and table drawing shared by the game's two pages: the replay page (``records html``,
:mod:`sergeant_major_env.replay_page`) and the page played in the browser (``play --web``,
:mod:`sergeant_major_env.web`).

Both pages are one self-contained HTML file (no network, no external font): each inlines
:data:`CSS` in its ``<style>`` and :func:`script` in its ``<script>``. They draw the same way:
the felt table, the seat panels (name, facts, cards), the suit colours, a card as a small face
(rank over suit), the score sheet and the final scores. The script knows no rule of the game;
the card vocabulary (ranks, suit symbols, mode words) comes from :mod:`sergeant_major_env.render`
through :func:`script`, so a card reads the same in the terminal and in both pages.
"""

from __future__ import annotations

import json

from .cards import RANKS, SUIT_SYMBOLS
from .render import MODE_TEXT

CSS = """
  body { font-family: system-ui, sans-serif; margin: 0; background: #0f5132; color: #f8f9fa; }
  header, main, footer { max-width: 1100px; margin: 0 auto; padding: 0.6rem 1rem; }
  h1 { font-size: 1.3rem; margin: 0.2rem 0; }
  h2 { font-size: 1.1rem; }
  #status { font-size: 1rem; opacity: 0.9; }
  #seats { display: grid; grid-template-columns: repeat(3, 1fr); gap: 0.8rem; margin: 0.8rem 0; }
  .seat { background: #146c43; border-radius: 8px; padding: 0.6rem 0.8rem; border: 3px solid transparent; }
  .seat.winner { border-color: #ffc107; }
  .seat.to-act { border-color: #f8f9fa; }
  .seat h2 { font-size: 1.05rem; margin: 0 0 0.3rem 0; }
  .facts { font-size: 0.9rem; opacity: 0.9; }
  .hand { font-family: ui-monospace, monospace; font-size: 1.05rem; margin-top: 0.4rem; min-height: 1.4rem;
          background: #fff; color: #212529; border-radius: 6px; padding: 0.3rem 0.5rem; }
  .played { margin-top: 0.4rem; min-height: 3.7rem; }
  .suit-0, .suit-1 { color: #212529; }
  .suit-2, .suit-3 { color: #c1121f; }
  .card { display: inline-flex; flex-direction: column; align-items: center; justify-content: center;
          width: 2.7rem; height: 3.6rem; margin: 0.12rem; border-radius: 6px; background: #fff; color: #212529;
          border: 1px solid #adb5bd; font: 600 1.1rem/1.1 system-ui, sans-serif; vertical-align: middle;
          box-shadow: 0 1px 2px rgba(0, 0, 0, 0.35); }
  .card .suit { font-size: 1.35rem; }
  .card.back { background: repeating-linear-gradient(45deg, #1d3557, #1d3557 4px, #457b9d 4px, #457b9d 8px);
               border-color: #f8f9fa; }
  table { border-collapse: collapse; width: 100%; background: #fff; color: #212529; border-radius: 8px; }
  th, td { padding: 0.2rem 0.5rem; text-align: right; font-variant-numeric: tabular-nums; }
  th:first-child, td:first-child, .mode { text-align: left; }
  tr.current { background: #fff3cd; }
  td.unknown { color: transparent; }
  #final { background: #ffc107; color: #212529; border-radius: 8px; padding: 0.6rem 1rem; margin: 0.8rem 0; }
  #final[hidden] { display: none; }
  #final a { color: #0b5394; }
  .help { font-size: 0.85rem; opacity: 0.85; }
"""
"""The style both pages share (each page adds its own few rules after it)."""

_SCRIPT = """
const RANKS = __RANKS__, SUITS = __SUITS__, MODE_TEXT = __MODE_TEXT__;

function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

function signed(n) { return (n > 0 ? "+" : "") + n; }

// One panel a seat in the box ``seats``: its name, then an empty div of each class of ``boxes``.
function seatPanels(seats, names, boxes) {
  seats.replaceChildren();
  names.forEach((name, seat) => {
    const panel = element("section", undefined, "seat");
    panel.id = "seat-" + seat;
    panel.append(element("h2", name, "name"), ...boxes.map(box => element("div", "", box)));
    seats.append(panel);
  });
}

// A text from the renderer (a caption, a hand, a log line), each suit symbol coloured by its suit.
function suited(text) {
  const box = document.createElement("span");
  let plain = "";
  for (const ch of text) {
    const suit = SUITS.indexOf(ch);
    if (suit < 0) { plain += ch; continue; }
    if (plain) { box.append(plain); plain = ""; }
    box.append(element("span", ch, "suit-" + suit));
  }
  if (plain) box.append(plain);
  return box;
}

// A card id (RULES.md R3) as its text, Q\\u2665, as render.card_text writes it.
function cardText(card) { return RANKS[card % 13] + SUITS[Math.floor(card / 13)]; }

// A card as a small face: rank over suit. ``card`` is an id or a text such as "Q\\u2665".
function cardFace(card, tag) {
  const text = typeof card === "number" ? cardText(card) : card;
  const suit = SUITS.indexOf(text.slice(-1));
  const face = element(tag || "span", undefined, "card suit-" + suit);
  face.append(element("span", text.slice(0, -1), "rank"), element("span", text.slice(-1), "suit"));
  face.setAttribute("aria-label", text);
  return face;
}

// The final scores, one row per seat: <td class="final-name"> and <td class="final-score">.
function fillFinal(tbody, names, scores) {
  tbody.replaceChildren();
  names.forEach((name, seat) => {
    const line = element("tr");
    line.append(element("td", name, "final-name"), element("td", signed(scores[seat]), "final-score"));
    tbody.append(line);
  });
}

// The score sheet: a head row (deal, mode, one column per seat), then one row per deal.
function sheetHead(thead, names) {
  const row = element("tr");
  row.append(element("th", "deal"), element("th", "mode", "mode"));
  names.forEach(name => row.append(element("th", name)));
  thead.replaceChildren(row);
}

function sheetRow(number, mode, points, scores) {
  const line = element("tr");
  line.append(element("td", String(number)), element("td", mode, "mode"));
  points.forEach((p, seat) => line.append(element("td", signed(p) + " (" + signed(scores[seat]) + ")")));
  return line;
}
"""


def script() -> str:
    """The shared script: the card vocabulary and the drawing functions (``element``, ``signed``,
    ``seatPanels``, ``suited``, ``cardText``, ``cardFace``, ``fillFinal``, ``sheetHead``, ``sheetRow``)."""
    def js(value: object) -> str:
        return json.dumps(value, ensure_ascii=False)

    return (_SCRIPT.replace("__RANKS__", js(RANKS)).replace("__SUITS__", js(SUIT_SYMBOLS))
            .replace("__MODE_TEXT__", js(list(MODE_TEXT))))
