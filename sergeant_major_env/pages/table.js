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

// A hand as the renderer writes it ("♠ A K 7   ♥ Q 9"): each suit's group in a
// <span class="suit-group"> that never breaks across lines; the page wraps only between suits.
function suitGroups(text) {
  const box = element("span", undefined, "suit-groups");
  text.split(/ {2,}/).forEach((group, index) => {
    if (index) box.append("   ");
    const span = element("span", undefined, "suit-group");
    span.append(suited(group));
    box.append(span);
  });
  return box;
}

// A card id (RULES.md R3) as its text, Q\u2665 or 10\u2665, as render.card_text writes it.
function cardText(card) { return RANK_TEXT[card % 13] + SUITS[Math.floor(card / 13)]; }

// A card as a small face: rank over suit. ``card`` is an id or a text such as "Q\u2665" or "10\u2665".
function cardFace(card, tag) {
  const text = typeof card === "number" ? cardText(card) : card;
  const suit = SUITS.indexOf(text.slice(-1));
  const face = element(tag || "span", undefined, "card suit-" + suit);
  face.append(element("span", text.slice(0, -1), "rank"), element("span", text.slice(-1), "suit"));
  face.setAttribute("aria-label", text);
  return face;
}

// The final scores, one row per seat: <td class="final-name"> and <td class="final-score">; the
// game's winners (the highest score, R6: all of them when shared) have <tr class="winner">.
function fillFinal(tbody, names, scores) {
  tbody.replaceChildren();
  const best = Math.max(...scores);
  names.forEach((name, seat) => {
    const line = element("tr", undefined, scores[seat] === best ? "winner" : "");
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
