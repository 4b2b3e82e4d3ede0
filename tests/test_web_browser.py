"""``play --web`` in a real browser: Playwright driving the system Chromium plays whole games by
clicking (skipped cleanly where Playwright or Chromium is missing).

* a one-deal game against ``random``, some moves by keyboard: the final scores shown in
  ``#final-scores`` are the engine's, and a click on an illegal card changes nothing;
* a three-deal game whose seed and seat (found here with the engine) give the person every
  decision kind: the mode (R8, R9), an exchange give and a free return (R19-R21), the four
  discards and play; the replay link and "play again" work at the end;
* a hostile page of another site (another port) posts a form and a fetch to the server and
  frames the game: no game is started, the frames stay empty; the same page under a name
  rebound to 127.0.0.1 (DNS rebinding) gets 421.

* the card table: hearts and diamonds red and spades and clubs black on every card face (their
  computed colour), the trick in the middle with its number and each seat's card in its place,
  a key the page does not know answered with a short message (and nothing played), at the end
  the game's winners marked (not the last trick's), no empty band under the header, and at a
  phone's width (390 px) nothing wider than the screen.
* issue 50: a ten reads 10 (log, card faces); the message covers neither the "new game" button
  nor the hand; once taken the talon is a line of the playmaker's panel, not cards on the
  table; your discards lie face down (card backs); at 1280 px no score-sheet cell wraps.

All games run under the page's Content-Security-Policy and fail on any complaint about it.
"""

from __future__ import annotations

import http.server
import os
import re
import shutil
import threading

import numpy as np
import pytest

from conftest import needs

from sergeant_major_env import engine, web
from sergeant_major_env.policies import RandomPolicy, decide
from sergeant_major_env.render import card_text
from sergeant_major_env.rules import Rules

pytestmark = pytest.mark.slow  # pytest -m "not slow" leaves this file out (issue 31)

CHROMIUM = os.environ.get("SERGEANT_MAJOR_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--host-resolver-rules=MAP evil.example 127.0.0.1"]  # a rebound name
KINDS = {engine.MODE: "mode", engine.GIVE: "exchange_give", engine.RETURN: "exchange_return",
         engine.DISCARD: "discard", engine.PLAY: "play"}


@pytest.fixture(scope="module")
def browser():
    sync_api = needs("playwright.sync_api")
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    with sync_api.sync_playwright() as playwright:
        try:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        except Exception as error:  # noqa: BLE001 - a browser that does not start: skip, saying why
            pytest.skip(f"Chromium does not start: {str(error).splitlines()[0]}")
        yield browser
        browser.close()


def _serve(options: web.WebOptions) -> web.WebServer:
    server = web.WebServer(("127.0.0.1", 0), lambda: [RandomPolicy(), RandomPolicy()], ["random", "random"], options)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server


def _first_legal(legal: np.ndarray) -> int:
    """The move the tests click: the first legal one on the page (modes in order, then the hand
    by suit ♠ ♣ ♥ ♦, high to low)."""
    actions = [int(a) for a in np.flatnonzero(legal)]
    return min(actions, key=lambda a: (a // 13, -(a % 13)) if a < 52 else (-1, a))


def _person_kinds(seed: int, seat: int, rules: Rules) -> set[str]:
    """The decision kinds the person meets when clicking the first legal move, the bots playing
    as the server plays them (RandomPolicy, the game's generator seeded with its seed)."""
    state, rng, bot = engine.init([seed], rules), np.random.default_rng(seed), RandomPolicy()
    kinds = set()
    while int(state.phase[0]) != engine.OVER:
        legal = engine.legal_action_mask(state)
        if int(state.to_act[0]) == seat:
            kinds.add(KINDS[int(state.phase[0])])
            action = _first_legal(legal[0])
        else:
            action = int(decide(bot, state, np.zeros(1, np.intp), legal, rng)[0])
        engine.step(state, np.array([action]))
    return kinds


def _your_turn_or_over(page) -> str:
    # Selectors, not wait_for_function: the page's Content-Security-Policy forbids eval.
    page.wait_for_selector('body[data-state="your-turn"], body[data-state="over"]', state="attached", timeout=60_000)
    return page.evaluate("document.body.dataset.state")


def _watch(page) -> list[str]:
    """The page's script errors and, for every page of its context (the replay page opened
    from it too), the console's complaints about the Content-Security-Policy: a policy that
    kept the page's own script or style from running shows here."""
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.context.on("console", lambda message: problems.append(message.text)
                    if "Content Security Policy" in message.text or "Content-Security-Policy" in message.text else None)
    return problems


def _play_by_clicking(page, server: web.WebServer, check=None) -> tuple[web.WebGame, set[str]]:
    """Click the first legal move until the game ends; the game and the decision kinds met.
    ``check(page, game, view)`` looks at the page before each click."""
    kinds = set()
    while _your_turn_or_over(page) == "your-turn":
        game = next(iter(server.games.values()))
        kinds.add(game.events[-1]["view"]["decision"])
        if check is not None:
            check(page, game, game.events[-1]["view"])
        page.locator('[data-legal="true"]').first.click()
    return next(iter(server.games.values())), kinds


def _final_scores_shown(page) -> list[int]:
    return [int(cell) for cell in page.locator("#final-scores .final-score").all_inner_texts()]


def _overlaps(page, first: str, second: str) -> bool:
    """Whether the boxes of the elements ``first`` and ``second`` (selectors) intersect on the screen."""
    a, b = page.locator(first).bounding_box(), page.locator(second).bounding_box()
    return (a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"]
            and a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"])


def _talon_and_discards_as_they_lie(page, game: web.WebGame, view: dict) -> None:
    """Issue 50, item 7: the talon, once taken, is no area of the table but a line of the
    playmaker's panel; the person's own discards lie face down (card backs)."""
    middle = page.inner_text("#middle")
    assert "talon" not in middle, middle
    assert page.locator("#middle .discards .card:not(.back)").count() == 0
    assert page.locator("#middle .discards .card.back").count() == len(view["discards"])
    for seat in range(3):
        line = page.inner_text(f"#seat-{seat} .talon")
        took = view["talon"] and view["roles"][seat] == "playmaker"
        assert line == ("took the talon: " + " ".join(card_text(c) for c in view["talon"]) if took else ""), line


def test_one_deal_against_random_by_clicking_and_keys(browser):
    server = _serve(web.WebOptions(seat=0, seed=3, rules=Rules(num_deals=1), pace=0))
    page = browser.new_page()
    errors = _watch(page)
    try:
        page.goto(server.url)
        assert _your_turn_or_over(page) == "your-turn"
        game = next(iter(server.games.values()))
        # Every move shown carries its action id; the legal ones are the engine's.
        legal = sorted(int(a) for a in page.locator('[data-legal="true"]').evaluate_all(
            "nodes => nodes.map(n => n.dataset.action)"))
        assert legal == [int(a) for a in np.flatnonzero(engine.legal_action_mask(game.state)[0])]
        # A click on an illegal card changes nothing but the message, which gives the rule.
        illegal = page.locator('#hand [data-action]:not([data-legal="true"])')
        assert illegal.count() > 0  # seed 3, seat 0: the first decision must follow suit (R13)
        before, events, hand = game.moves, len(game.events), page.inner_html("#hand")
        illegal.first.click(force=True)  # aria-disabled: Playwright would wait for it to be enabled
        assert "is not allowed now: R13: you must follow suit" in page.inner_text("#message")
        # Issue 50, item 7: the message covers neither the "new game" button nor your hand.
        for scroll in ("0", "document.body.scrollHeight"):
            page.evaluate(f"window.scrollTo(0, {scroll})")
            assert not _overlaps(page, "#message", "#new-game") and not _overlaps(page, "#message", "#hand")
        page.evaluate("window.scrollTo(0, 0)")
        assert (game.moves, len(game.events), page.inner_html("#hand")) == (before, events, hand)
        # Keyboard: the arrow keys move between the legal moves, Enter plays.
        page.keyboard.press("ArrowRight")
        focused = int(page.evaluate("document.activeElement.dataset.action"))
        page.keyboard.press("Enter")
        page.wait_for_selector(f'#hand [data-action="{focused}"]', state="detached")  # played: gone from the hand
        _your_turn_or_over(page)
        assert game.moves == 1 and focused in legal
        game, _ = _play_by_clicking(page, server)
        assert game.over and _final_scores_shown(page) == game.state.final_scores[0].tolist()
        assert errors == []
    finally:
        page.close()
        server.shutdown()
        server.server_close()


def test_every_decision_kind_by_clicking_then_replay_and_play_again(browser):
    """Mode, exchange give and return, discards, play: a seed and seat found with the engine."""
    rules = Rules(num_deals=3)
    found = next(((seed, seat) for seed in range(200) for seat in range(3)
                  if _person_kinds(seed, seat, rules) == set(KINDS.values())), None)
    assert found is not None, "no seed below 200 gives the person every decision kind"
    seed, seat = found
    server = _serve(web.WebOptions(seat=seat, seed=seed, rules=rules, pace=0))
    page = browser.new_page()
    errors = _watch(page)
    try:
        page.goto(server.url)
        game, kinds = _play_by_clicking(page, server, _talon_and_discards_as_they_lie)
        assert kinds == set(KINDS.values())
        assert _final_scores_shown(page) == game.state.final_scores[0].tolist()
        assert page.inner_text("#final-note") == f"Seed {seed}."
        with page.context.expect_page() as replay:
            page.click("#replay-link")
        replay.value.wait_for_load_state()
        assert replay.value.locator("#replay-data").count() == 1
        assert replay.value.locator("#sheet tbody tr").count() > 0  # its script ran: the score sheet is drawn
        replay.value.close()
        page.click("#again")
        page.wait_for_selector("#final", state="hidden")
        assert len(server.games) == 2
        assert errors == []
    finally:
        page.close()
        server.shutdown()
        server.server_close()


def _hostile_site(port: int) -> http.server.ThreadingHTTPServer:
    """Another site (another port of 127.0.0.1, so another origin) whose page, once opened,
    posts a form (text/plain) and a fetch to the game server at ``port`` and frames its page."""
    target = f"http://127.0.0.1:{port}"
    html = f"""<!DOCTYPE html><html><head><title>hostile</title></head><body>
<form id="form" method="POST" action="{target}/api/games" enctype="text/plain" target="sink">
<input name='{{"a": "' value='"}}'></form>
<iframe name="sink"></iframe><iframe id="framed" src="{target}/"></iframe>
<script>
fetch("{target}/api/games", {{method: "POST", mode: "no-cors", body: "{{}}"}}).finally(() => document.title = "sent");
document.getElementById("form").submit();
</script></body></html>""".encode()

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(html)))
            self.end_headers()
            self.wfile.write(html)

        def log_message(self, format, *args) -> None:  # noqa: A002
            pass

    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=site.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return site


def test_a_hostile_page_starts_no_game_frames_nothing_and_rebinding_gets_421(browser):
    server = _serve(web.WebOptions(seat=0, seed=3, rules=Rules(num_deals=1), pace=0))
    port = server.server_address[1]
    site = _hostile_site(port)
    page = browser.new_page()
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text))
    try:
        page.goto(f"http://127.0.0.1:{site.server_address[1]}/")
        page.wait_for_function("document.title === 'sent'")  # the hostile page ran its script: the fetch is answered
        for _ in range(200):  # the form's answer and the framed page: each refused a frame
            if sum("frame-ancestors 'none'" in text for text in console) == 2:
                break
            page.wait_for_timeout(50)
        assert server.games == {}  # neither the form nor the fetch started a game
        framed = [frame for frame in page.frames if frame is not page.main_frame]
        assert len(framed) == 2 and all(frame.url.startswith("chrome-error://") for frame in framed)
        assert sum("frame-ancestors 'none'" in text for text in console) == 2
        answer = page.goto(f"http://evil.example:{port}/")  # DNS rebinding: the page is not served
        assert answer.status == 421 and "does not answer for host 'evil.example:" in page.inner_text("body")
        assert server.games == {}
    finally:
        page.close()
        site.shutdown()
        site.server_close()
        server.shutdown()
        server.server_close()


RED, BLACK = "rgb(193, 18, 31)", "rgb(33, 37, 41)"
"""The ink of the hearts and diamonds, and of the spades and clubs, on a white card face."""


def _play_out(seed: int, seat: int, rules: Rules) -> engine.State:
    """The game's end as the server plays it when the person clicks the first legal move."""
    state, rng, bot = engine.init([seed], rules), np.random.default_rng(seed), RandomPolicy()
    while int(state.phase[0]) != engine.OVER:
        legal = engine.legal_action_mask(state)
        action = (_first_legal(legal[0]) if int(state.to_act[0]) == seat
                  else int(decide(bot, state, np.zeros(1, np.intp), legal, rng)[0]))
        engine.step(state, np.array([action]))
    return state


def _face_colours(page) -> dict[str, list[str]]:
    """The computed colour of every card face on the page, by suit class."""
    return page.evaluate("""() => Object.fromEntries([0, 1, 2, 3].map(suit => [suit,
        [...document.querySelectorAll('.card.suit-' + suit)].map(face => getComputedStyle(face).color)]))""")


def test_the_table_red_suits_the_trick_in_the_middle_unknown_keys_and_the_games_winner(browser):
    rules = Rules(num_deals=1)
    # A game whose last trick is won by a seat that does not win the game: the gold must follow the game.
    seed = next(seed for seed in range(100) if (lambda end: int(end.last_trick_winner[0]) not in np.flatnonzero(
        end.final_scores[0] == end.final_scores[0].max()))(_play_out(seed, 0, rules)))
    server = _serve(web.WebOptions(seat=0, seed=seed, rules=rules, pace=0))
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors = _watch(page)
    try:
        page.goto(server.url)
        assert _your_turn_or_over(page) == "your-turn"
        game = next(iter(server.games.values()))
        # No empty band: the first thing under the header starts right under it.
        gap = page.evaluate("""() => document.querySelector('#seats').getBoundingClientRect().top
                                     - document.querySelector('header').getBoundingClientRect().bottom""")
        assert 0 <= gap <= 16, gap
        # A key the page does not know: a short message, nothing sent.
        moves, events = game.moves, len(game.events)
        page.keyboard.press("x")
        assert "The key \u201cx\u201d does nothing here" in page.inner_text("#message")
        assert (game.moves, len(game.events)) == (moves, events)
        red_seen = black_seen = 0
        tricks_checked = 0
        while _your_turn_or_over(page) == "your-turn":
            view = game.events[-1]["view"]
            colours = _face_colours(page)
            assert set(colours["2"] + colours["3"]) <= {RED} and set(colours["0"] + colours["1"]) <= {BLACK}, colours
            red_seen += len(colours["2"] + colours["3"])
            black_seen += len(colours["0"] + colours["1"])
            if view["decision"] == "play":  # the trick in the middle: its number, each card in its seat's place
                done = int(game.state.tricks_won[0].sum())
                cards, title = view["trick"], f"Trick {done + 1}"
                if not cards and view["last_trick"]:  # to lead: the last trick stays on the table, its winner named
                    cards = view["last_trick"]["cards"]
                    title = f"Trick {done} \u00b7 won by {game.labels[view['last_trick']['winner']]}"
                assert page.inner_text("#trick-title") == title
                shown = {seat: page.locator(f'#trick-cards .slot[data-seat="{seat}"] .card').get_attribute("aria-label")
                         for seat in range(3)}
                assert shown == {seat: next((card_text(card) for s, card in cards if s == seat), None)
                                 for seat in range(3)}
                tricks_checked += 1
            page.locator('[data-legal="true"]').first.click()
        assert red_seen > 0 and black_seen > 0 and tricks_checked >= 10
        # The end: the game's winners in gold, with a word; the last trick's winner only in the trick area.
        finals = game.state.final_scores[0]
        winners = [int(s) for s in np.flatnonzero(finals == finals.max())]
        last = int(game.state.last_trick_winner[0])
        assert last not in winners
        marked = [seat for seat in range(3) if "winner" in page.get_attribute(f"#seat-{seat}", "class").split()]
        assert marked == winners
        assert page.inner_text(f"#seat-{winners[0]} .badge") in ("wins the game", "shares the win")
        assert page.inner_text(f"#seat-{last} .badge") == ""
        assert page.locator("#final-scores tr.winner").count() == len(winners)
        assert page.inner_text("#trick-title") == f"Trick 16 \u00b7 won by {game.labels[last]}"
        assert 'won' in page.get_attribute(f'#trick-cards .slot[data-seat="{last}"]', "class").split()
        page.keyboard.press("x")  # at the end too, a key it does not know gets its answer
        assert "n starts a new game" in page.inner_text("#message")
        # Issue 50, item 6: a ten reads 10 in the log and on the faces, never T.
        log = page.inner_text("#log")
        assert re.search("10[\u2660\u2663\u2665\u2666]", log) and not re.search("T[\u2660\u2663\u2665\u2666]", log)
        assert "T" not in page.locator(".card .rank").all_inner_texts()
        # Issue 50, item 7: at 1280 px no cell of the score sheet wraps (its text is one line).
        lines = page.locator("#sheet td").evaluate_all("""cells => cells.map(cell => {
            const range = document.createRange();
            range.selectNodeContents(cell);
            return new Set([...range.getClientRects()].map(box => Math.round(box.top))).size; })""")
        assert len(lines) == 5 and set(lines) == {1}, lines
        assert errors == []
    finally:
        page.close()
        server.shutdown()
        server.server_close()


def test_at_a_phones_width_nothing_is_wider_than_the_screen(browser):
    server = _serve(web.WebOptions(seat=0, seed=3, rules=Rules(num_deals=1), pace=0))
    page = browser.new_page(viewport={"width": 390, "height": 844})
    errors = _watch(page)
    try:
        page.goto(server.url)
        assert _your_turn_or_over(page) == "your-turn"
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        slots = page.locator("#trick-cards .slot").evaluate_all(
            "nodes => nodes.map(n => n.getBoundingClientRect().right)")
        assert len(slots) == 3 and max(slots) <= 390
        assert errors == []
    finally:
        page.close()
        server.shutdown()
        server.server_close()
