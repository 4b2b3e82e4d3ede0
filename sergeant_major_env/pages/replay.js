const data = JSON.parse(document.getElementById("replay-data").textContent);
const frames = data.frames;
let at = 0;

function buildSeats() {
  seatPanels(document.getElementById("seats"), data.seats, ["facts", "hand", "played"]);
}

function buildSheet() {
  sheetHead(document.querySelector("#sheet thead"), data.seats);
  const body = document.querySelector("#sheet tbody");
  data.deals.forEach(deal => body.append(sheetRow(deal.number, deal.mode, deal.points, deal.scores)));
  fillFinal(document.querySelector("#final-table tbody"), data.seats, data.final_scores);
}

function show(index) {
  at = Math.max(0, Math.min(frames.length - 1, index));
  const frame = frames[at], deal = data.deals[frame.deal], last = frame.kind === "final";
  document.getElementById("status").textContent = last ? "Game over"
    : "Deal " + deal.number + " of " + data.rules.num_deals + " \u00b7 mode: " + (deal.mode && frame.kind !== "deal" ? deal.mode : "not chosen yet");
  const caption = document.getElementById("caption");
  caption.replaceChildren(suited(frame.caption));
  document.getElementById("final").hidden = !last;
  data.seats.forEach((name, seat) => {
    const panel = document.getElementById("seat-" + seat);
    const facts = last ? "score " + signed(frame.scores[seat])
      : deal.roles[seat] + (frame.kind !== "deal" ? " \u00b7 target " + deal.targets[seat] : "")
        + " \u00b7 tricks " + frame.tricks_won[seat] + " \u00b7 score " + signed(frame.scores[seat]);
    panel.querySelector(".facts").textContent = facts;
    // A deal's end and the game's end have no cards in hand: the hand's place shows the result.
    const result = frame.kind === "points" ? "deal points " + signed(deal.points[seat])
      : last ? "final score " + signed(frame.scores[seat]) : null;
    panel.querySelector(".hand").replaceChildren(result === null ? suitGroups(frame.hands[seat])
      : element("span", result, "result"));
    const played = frame.trick.find(entry => entry[0] === seat);
    panel.querySelector(".played").replaceChildren(played ? cardFace(played[1]) : "");
    // Gold: a trick's winner; at the end, the game's winners (the highest final score, R6).
    panel.classList.toggle("winner", last ? frame.scores[seat] === Math.max(...frame.scores) : frame.winner === seat);
  });
  // The sheet shows only what has happened: a deal's mode once chosen, its points once over.
  document.querySelectorAll("#sheet tbody tr").forEach((line, d) => {
    const over = d < frame.deal || (d === frame.deal && (frame.kind === "points" || last));
    const chosen = over || (d === frame.deal && frame.kind !== "deal");
    line.className = d === frame.deal && !last ? "current" : "";
    line.querySelectorAll("td").forEach((cell, column) => {
      cell.classList.toggle("unknown", column === 1 ? !chosen : column > 1 && !over);
    });
  });
  const table = [];
  if (frame.talon) table.push(["talon: ", frame.talon]);
  if (frame.discards) table.push(["discards (face down): ", frame.discards]);
  document.getElementById("table").replaceChildren(...table.flatMap(([label, cards], index) =>
    [...(index ? ["  ·  "] : []), label, suitGroups(cards)]));
  document.getElementById("slider").value = at;
  document.getElementById("position").textContent = (at + 1) + " / " + frames.length;
  history.replaceState(null, "", last ? "#final" : "#frame-" + (at + 1));
}

function dealStart(d) { return frames.findIndex(frame => frame.deal === d); }
function nextDeal() { const d = frames[at].deal + 1; show(d < data.deals.length ? dealStart(d) : frames.length - 1); }
function previousDeal() {
  const d = frames[at].deal, start = dealStart(d);
  show(at > start || d === 0 ? start : dealStart(d - 1));
}

function fromHash() {
  const hash = location.hash.slice(1);
  if (hash === "final") return frames.length - 1;
  const match = /^(frame|deal)-(\d+)$/.exec(hash);
  if (!match) return 0;
  const n = Number(match[2]) - 1;
  return match[1] === "frame" ? n : Math.max(0, dealStart(Math.min(n, data.deals.length - 1)));
}

document.getElementById("title").textContent = data.title + " \u00b7 " + data.seats.join(", ");
buildSeats();
buildSheet();
const slider = document.getElementById("slider");
slider.max = frames.length - 1;
slider.addEventListener("input", () => show(Number(slider.value)));
document.getElementById("first").addEventListener("click", () => show(0));
document.getElementById("prev-deal").addEventListener("click", previousDeal);
document.getElementById("prev").addEventListener("click", () => show(at - 1));
document.getElementById("next").addEventListener("click", () => show(at + 1));
document.getElementById("next-deal").addEventListener("click", nextDeal);
document.getElementById("last").addEventListener("click", () => show(frames.length - 1));
document.addEventListener("keydown", event => {
  if (event.target === slider) return;  // the slider steps with the arrows itself
  const keys = { ArrowRight: () => show(at + 1), ArrowLeft: () => show(at - 1), ArrowDown: nextDeal,
                 PageDown: nextDeal, ArrowUp: previousDeal, PageUp: previousDeal, Home: () => show(0),
                 End: () => show(frames.length - 1) };
  if (keys[event.key]) { keys[event.key](); event.preventDefault(); }
});
window.addEventListener("hashchange", () => show(fromHash()));
show(fromHash());
