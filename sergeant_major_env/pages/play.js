const SHORT_MODES = ["\u2660", "\u2663", "\u2665", "\u2666", "NT", "MIN"];
const $ = id => document.getElementById(id);
let game = null, token = null, next = 0, queue = [], drawing = false, lastDraw = 0;
let info = null, view = null, busy = false, pace = PACE, typed = "", ending = null;

// The message at the bottom (suits coloured); a passing one (``seconds``) goes away by itself.
let sayTimer = null;
function say(text, seconds) {
  clearTimeout(sayTimer);
  $("message").replaceChildren(...(text ? [suited(text)] : []));
  if (text && seconds) sayTimer = setTimeout(() => say(""), seconds * 1000);
}
function sleep(ms) { return new Promise(resolve => setTimeout(resolve, ms)); }
// A move as the page names it (render.move_words): a card, or a mode as its button reads.
function moveName(action) { return action >= 52 ? MODE_TEXT[action - 52] : cardText(action); }

async function request(method, path, body) {
  const options = { method, headers: { "X-Token": token || "" } };
  if (body !== undefined) {
    options.body = JSON.stringify(body);
    options.headers["Content-Type"] = "application/json";
  }
  let response;
  try { response = await fetch(path, options); }
  catch (error) { throw { status: 0, text: "cannot reach the game server: is it still running?" }; }
  if (!response.ok) throw { status: response.status, text: (await response.text()).trim() };
  return response.json();
}

// ------------------------------------------------------------------ games

async function newGame() {
  say("");
  let answer;
  try { answer = await request("POST", "/api/games", {}); }
  catch (error) { say(error.text); return; }
  token = answer.token;
  try { sessionStorage.setItem("sergeant-major-game", JSON.stringify({ game: answer.game, token })); } catch (e) {}
  start(answer, false);
}

async function resume() {
  let saved = null;
  try { saved = JSON.parse(sessionStorage.getItem("sergeant-major-game")); } catch (e) {}
  if (!saved) return newGame();
  token = saved.token;
  try { start(await request("GET", "/api/games/" + saved.game + "?since=0"), true); }
  catch (error) { newGame(); }
}

function start(answer, catchingUp) {
  game = answer.game; next = 0; queue = []; view = null; ending = null;
  info = { seat: answer.seat, names: answer.names };
  $("title").textContent = "3-5-8: " + answer.names.join(", ");
  $("final").hidden = true;
  $("log").replaceChildren();
  sheetHead(document.querySelector("#sheet thead"), answer.names);
  document.querySelector("#sheet tbody").replaceChildren();
  buildSeats();
  take(answer, catchingUp);
  poll(game);
}

function take(answer, catchingUp) {
  if (answer.game !== game) return;
  for (const event of answer.events) {
    if (event.n < next) continue;  // already drawn or queued (a poll and a move may both bring it)
    event.fast = !!catchingUp;
    queue.push(event);
    next = event.n + 1;
  }
  if (answer.over) ending = answer;
  if (answer.error) say("The game stopped: " + answer.error);
  drain();
}

async function poll(id) {
  while (id === game) {
    try {
      const answer = await request("GET", "/api/games/" + id + "?since=" + next + "&wait=15");
      if (id !== game) return;
      take(answer);
      if (answer.over || answer.error) return;
    } catch (error) {
      if (id !== game) return;
      say(error.text);
      if (error.status === 403 || error.status === 404) return;
      await sleep(2000);
    }
  }
}

// The bots' moves one at a time: each is drawn at least ``pace`` seconds after the last event.
async function drain() {
  if (drawing) return;
  drawing = true;
  document.body.dataset.state = "waiting";
  while (queue.length) {
    const event = queue[0];
    const bot = event.actor >= 0 && event.actor !== info.seat;
    const wait = lastDraw + pace * 1000 - Date.now();
    if (bot && !event.fast && wait > 0) await sleep(wait);
    if (queue[0] !== event) continue;  // a new game started meanwhile
    queue.shift();
    draw(event);
    lastDraw = Date.now();
  }
  drawing = false;
  render();
}

function draw(event) {
  view = event.view;
  const log = $("log");
  for (const line of event.text) {
    const item = element("li");
    item.append(suited(line));
    log.append(item);
  }
  log.scrollTop = log.scrollHeight;
  if (view.deal_over) {
    document.querySelector("#sheet tbody").append(
      sheetRow(view.deal, view.mode >= 0 ? MODE_TEXT[view.mode] : "", view.deal_over.points, view.scores));
  }
  render();
}

// ------------------------------------------------------------------ drawing

function buildSeats() {
  seatPanels($("seats"), info.names, ["facts", "facts modes-left", "facts talon", "badge"]);
}

function yourTurn() {
  return view && view.to_act === info.seat && view.move !== null && !queue.length && !drawing && !busy;
}

function render() {
  if (!view) return;
  // The move in keyboard focus keeps it when the hand is drawn again (a poll's answer may
  // redraw it between an arrow key and Enter).
  const focused = document.activeElement && document.activeElement.dataset
    ? document.activeElement.dataset.action : undefined;
  const v = view, over = !!v.final_scores;
  const turn = over ? "game over" : v.deal_over ? "deal over"
    : v.to_act === info.seat && v.decision_text ? "your turn: " + v.decision_text
    : v.to_act >= 0 ? info.names[v.to_act] + " to play" : "";
  $("status").replaceChildren(suited("Deal " + v.deal + " of " + v.num_deals + " \u00b7 "
    + (v.mode >= 0 ? MODE_TEXT[v.mode] : "mode not chosen yet") + " \u00b7 " + turn));
  // Gold: at the end, the game's winners (the highest final score; all of them when shared, R6).
  const best = over ? Math.max(...v.final_scores) : null;
  const winners = over ? v.final_scores.filter(score => score === best).length : 0;
  info.names.forEach((name, seat) => {
    const panel = $("seat-" + seat);
    panel.querySelector(".facts").textContent = v.roles[seat]
      + (v.targets ? " \u00b7 target " + v.targets[seat] : "")
      + " \u00b7 tricks " + v.tricks_won[seat] + " \u00b7 score " + signed(v.scores[seat]);
    panel.querySelector(".modes-left").replaceChildren(
      suited("modes left (R8): " + (v.modes_open[seat].map(m => SHORT_MODES[m]).join(" ") || "none")));
    // The talon, turned face up for all, is in the playmaker's hand: a fact of its seat, not
    // cards on the table.
    const took = v.talon.length && v.roles[seat] === "playmaker";
    panel.querySelector(".talon").replaceChildren(
      ...(took ? [suited("took the talon: " + v.talon.map(cardText).join(" "))] : []));
    const wins = over && v.final_scores[seat] === best;
    panel.classList.toggle("winner", wins);
    panel.querySelector(".badge").textContent = wins ? (winners > 1 ? "shares the win" : "wins the game") : "";
    panel.classList.toggle("to-act", v.to_act === seat && !over);
  });
  drawTrick(v);
  drawMiddle(v);
  drawYou(v);
  if (focused !== undefined) {
    const again = document.querySelector('[data-legal="true"][data-action="' + focused + '"]');
    if (again && document.activeElement !== again) again.focus();
  }
  if (over && ending && !queue.length) showFinal();
}

function cards(label, list) {
  const box = element("div");
  box.append(element("span", label, "label"), ...list.map(card => cardFace(card)));
  return box;
}

// Your discards as they lie, face down: card backs (the card in the tooltip, for you alone).
function backs(label, list) {
  const box = element("div", undefined, "discards");
  box.append(element("span", label, "label"), ...list.map(card => {
    const back = element("span", undefined, "card back");
    back.title = cardText(card);
    back.setAttribute("aria-label", "face down: " + cardText(card));
    return back;
  }));
  return box;
}

// The trick in the middle of the table: its number, each seat's card in its place (the left
// opponent, you a little lower, the right opponent) and, once complete, its winner in gold.
function drawTrick(v) {
  const played = v.tricks_won.reduce((sum, n) => sum + n, 0);  // complete tricks (a deal's last included)
  let cards = [], number = 0, winner = -1;
  if (v.deal_over) { cards = v.trick; number = played; winner = v.deal_over.winner; }
  else if (v.trick.length) { cards = v.trick; number = played + 1; }
  else if (v.last_trick) { cards = v.last_trick.cards; number = played; winner = v.last_trick.winner; }
  else if (v.decision === "play" || played) number = played + 1;
  $("trick-title").textContent = !number ? "No trick yet: the tricks start after the discards"
    : "Trick " + number + (winner >= 0 ? " \u00b7 won by " + info.names[winner] : "");
  const order = [(info.seat + 1) % 3, info.seat, (info.seat + 2) % 3];
  $("trick-cards").replaceChildren(...order.map(seat => {
    const entry = cards.find(pair => pair[0] === seat);
    const face = entry ? cardFace(entry[1]) : element("span", undefined, "card empty");
    const slot = element("div", undefined, "slot" + (seat === info.seat ? " you" : ""));
    slot.dataset.seat = String(seat);
    slot.classList.toggle("won", winner === seat);
    slot.classList.toggle("to-act", !entry && winner < 0 && number > 0 && v.to_act === seat);
    slot.append(face, element("span", info.names[seat], "who"));
    return slot;
  }));
  $("trick").dataset.number = String(number);
}

function drawMiddle(v) {
  const parts = [];
  if (v.discards.length) parts.push(backs("your discards (face down):", v.discards));
  if (v.given.length) parts.push(cards("you gave:", v.given));
  if (v.received.length) parts.push(cards("you received:", v.received));
  if (v.exchanges.length && !v.talon.length) {
    const lines = v.exchanges.map(p => info.names[p.giver] + " \u2192 " + info.names[p.receiver] + ": "
                                       + p.done + " of " + p.due + " card(s)");
    parts.push(element("div", "exchanges (R18-R20): " + lines.join("; ")));
  }
  if (v.deal_over) {
    parts.push(element("div", "deal " + v.deal + " points: " + v.deal_over.points.map(
      (p, seat) => info.names[seat] + " " + signed(p)).join(", ")));
  }
  $("middle").replaceChildren(...parts);
}

function moveButton(action, face, legal) {
  face.dataset.action = String(action);
  if (legal) face.dataset.legal = "true";
  else face.setAttribute("aria-disabled", "true");
  face.addEventListener("click", () => choose(action));
  return face;
}

function drawYou(v) {
  const mine = yourTurn();
  document.body.dataset.state = v.final_scores ? "over" : mine ? "your-turn" : "waiting";
  $("hint").replaceChildren(suited(mine ? v.hint : v.final_scores ? "The game is over."
    : v.first_six ? "Your first six cards (R9)." : "Your hand."));
  const modes = $("modes");
  modes.replaceChildren();
  if (mine && v.decision === "mode") {
    for (let m = 0; m < 6; m++) {
      const button = element("button", undefined, "mode-choice");
      button.append(suited(MODE_TEXT[m]));
      modes.append(moveButton(52 + m, button, v.legal.includes(52 + m)));
    }
  }
  const hand = [...v.hand].sort((a, b) => Math.floor(a / 13) - Math.floor(b / 13) || b - a);
  const cardMoves = mine && v.decision !== "mode";
  $("hand").replaceChildren(...hand.map(card => cardMoves
    ? moveButton(card, cardFace(card, "button"), v.legal.includes(card))
    : cardFace(card)));
  if (mine && ["BODY", "BUTTON"].includes(document.activeElement.tagName)) {
    const first = document.querySelector('[data-legal="true"]');
    if (first) first.focus({ preventScroll: true });
  }
}

function showFinal() {
  $("final").hidden = false;
  fillFinal(document.querySelector("#final-scores tbody"), info.names, ending.final_scores);
  $("final-note").textContent = "Seed " + ending.seed + ".";
  $("replay-link").href = ending.replay;
  document.body.dataset.state = "over";
}

// ------------------------------------------------------------------ moves

async function choose(action) {
  if (!yourTurn()) { say("Wait: it is not your turn."); return; }
  if (!view.legal.includes(action)) {
    say(moveName(action) + " is not allowed now: " + (view.refusals[String(action)] || "not a move of this decision"));
    return;
  }
  if (busy) return;  // a second click while the first is on its way
  busy = true;
  say("");
  document.body.dataset.state = "waiting";
  try { take(await request("POST", "/api/games/" + game + "/move", { move: view.move, action, since: next })); }
  catch (error) { say(error.text); }
  finally { busy = false; render(); }
}

document.addEventListener("keydown", event => {
  if (event.target.tagName === "INPUT" || event.ctrlKey || event.metaKey || event.altKey) return;
  const moves = [...document.querySelectorAll('[data-legal="true"]')];
  if (event.key === "ArrowRight" || event.key === "ArrowLeft") {
    if (!moves.length) return;
    const at = moves.indexOf(document.activeElement), step = event.key === "ArrowRight" ? 1 : -1;
    moves[at < 0 ? 0 : (at + step + moves.length) % moves.length].focus();
    event.preventDefault();
    return;
  }
  if (event.key.length !== 1 || event.key === " ") return;  // Shift, Tab, ...; Space clicks the move in focus
  const key = event.key.toLowerCase();
  if (view && view.final_scores) {
    if (key === "n") newGame(); else unknownKey(event.key, "the game is over: n starts a new game");
    return;
  }
  if (!yourTurn()) { say("Wait: it is not your turn (" + (view ? "the bots are playing" : "the game is loading") + ").", 3); return; }
  if (view.decision === "mode") {
    const mode = "schdnm".indexOf(key);
    if (mode >= 0) choose(52 + mode);
    else unknownKey(event.key, "in the mode choice s c h d choose trumps, n no-trump, m minimum");
    return;
  }
  if (!"0123456789tjqkaschd".includes(key)) {
    typed = "";
    unknownKey(event.key, "type a card (qh, 10h, th), or \u2190 \u2192 and Enter");
    return;
  }
  typed = (typed + key).slice(-3);
  const match = /(10|[2-9tjqka])([schd])$/.exec(typed), rank = /(10|[2-9tjqka])$/.exec(typed);
  if (match) {
    typed = "";
    choose("schd".indexOf(match[2]) * 13 + RANK_TEXT.indexOf(rankText(match[1])));
  } else if (rank) say("Card " + rankText(rank[1]) + "\u2026: now its suit, s c h d.", 4);
  else if (!/1$/.test(typed)) unknownKey(event.key, "type a card: its rank (2-10, t, j, q, k, a), then its suit (s c h d)");
});

// A rank as typed (q, 10, t) as the page writes it (Q, 10, 10: a ten is 10, however typed).
function rankText(typed) { return typed === "t" ? "10" : typed.toUpperCase(); }

// A key the page does not know: a short message saying which keys it knows now.
function unknownKey(key, known) { say("The key \u201c" + key + "\u201d does nothing here: " + known + ".", 5); }

$("pace").value = pace;
$("pace").addEventListener("change", () => {
  const value = Number($("pace").value);
  if (value >= 0 && value <= 10) pace = value; else $("pace").value = pace;
});
$("again").addEventListener("click", newGame);
$("new-game").addEventListener("click", newGame);
resume();
