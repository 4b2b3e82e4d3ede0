"""A game record as one self-contained HTML page that steps through the game (`records html`).

[`page_data`][] replays a record through the engine (after [`records.check_record`][] has
found it clean) and keeps a *frame* at each moment the page shows: a deal as dealt, the mode
and the roles, each exchange, the talon, the discards, each trick with its winner, the deal's
points, and the final scores. Everything a frame says comes from the engine state at that
moment (the record supplies only the cards dealt and the decisions), and every card, mode and
role is written with the one renderer's vocabulary (`sergeant_major_env.render`).

[`page_html`][] puts that data, as JSON, into one HTML file with its CSS and script inline
(the files `pages/replay.html`, `replay.css` and `replay.js`, with the card and table
drawing shared with the page played in the browser, `sergeant_major_env.pages`): no
network, no server. The script only shows frames (arrow keys and buttons step; the URL
hash `#frame-N`, `#deal-D` or `#final` opens a frame); it knows no rule of the game.
"""

from __future__ import annotations

import html
import json
from typing import Any, Sequence

import numpy as np

from . import engine
from .cards import MINIMUM, MODE_ACTION_OFFSET, SUIT_SYMBOLS, suit_of
from .limits import cut_middle
from .pages import assemble
from .records import RecordError, check_record, parse_record
from .render import MODE_TEXT, card_text, hand_text, seat_labels

FORMAT = "sergeant-major-replay-page/1"


def page_data(record: dict[str, Any], title: str = "3-5-8 game") -> dict[str, Any]:
    """The page's data: the players, one entry per deal and the frames, from an engine replay.
    A record that does not replay exactly is refused with its first problem (RecordError)."""
    problem = check_record(record)
    if problem is not None:
        raise RecordError(f"the record does not replay: {problem}")
    game = parse_record(record)
    story = _Story(game, seat_labels(record["players"]))
    for deal in game["deals"]:
        story.play_deal(deal)
    story.game_over()
    return {"format": FORMAT, "title": fit_title(title), "players": list(record["players"]), "seats": list(story.seats),
            "seed": game["seed"], "rules": game["rules"].to_dict(), "suits": SUIT_SYMBOLS,
            "deals": story.deals, "frames": story.frames, "final_scores": story.final_scores}


class _Story:
    """One clean record stepped through a batch-of-one engine game; keeps the page's frames."""

    def __init__(self, game: dict[str, Any], seats: Sequence[str]) -> None:
        self.seats = tuple(seats)
        self.state = engine.init(np.array([game["seed"]], dtype=np.uint64), game["rules"])
        self.state.first_dealer[0] = self.state.dealer[0] = game["first_dealer"]
        self.deals: list[dict[str, Any]] = []
        self.frames: list[dict[str, Any]] = []
        self.final_scores: list[int] = []

    def decide(self, action: int) -> None:
        engine.step(self.state, np.array([action]))

    def frame(self, kind: str, caption: str, hands=None, tricks_won=None, scores=None,
              trick: Sequence[tuple[int, int]] = (), winner: int = -1) -> None:
        """Keep what the page shows now; `hands`, `tricks_won` and `scores` default to the
        engine's (a deal's last trick passes them in: the engine has dealt the next deal already).
        The talon and the discards are shown from the frames that turn them up on."""
        state, deal = self.state, self.deals[-1]
        shown = kind in ("talon", "discards", "trick", "points")
        self.frames.append({
            "deal": len(self.deals) - 1, "kind": kind, "caption": caption,
            "talon": " ".join(deal["talon"]) if shown else "",
            "discards": deal["discards"] if shown and kind != "talon" else "",
            "hands": [hand_text(int(h)) if h else "" for h in (state.hands[0] if hands is None else hands)],
            "tricks_won": (state.tricks_won[0] if tricks_won is None else tricks_won).tolist(),
            "scores": (state.scores[0] if scores is None else scores).tolist(),
            "trick": [[seat, card_text(card)] for seat, card in trick], "winner": winner,
        })

    def hands_before_talon(self) -> np.ndarray:
        """The hands without the talon: once the exchanges are done the engine has put it in the
        playmaker's hand (section 5, step 4), but the page shows it joining in a frame of its own."""
        hands = self.state.hands[0].copy()
        if self.state.phase[0] == engine.DISCARD:
            hands[self.playmaker] &= ~self.state.talon[0]
        return hands

    @property
    def playmaker(self) -> int:
        return (int(self.state.dealer[0]) + engine.PLAYMAKER) % 3

    # ------------------------------------------------------------------ one deal

    def play_deal(self, deal: dict[str, Any]) -> None:
        state, seats = self.state, self.seats
        engine.set_cards(state, np.array([0]), np.array(deal["hands"], dtype=np.int8)[None],
                         np.array(deal["talon"], dtype=np.int8)[None])
        number, playmaker = int(state.deal[0]) + 1, self.playmaker
        roles = [engine.ROLE_NAMES[role] for role in engine.roles(state)[0]]
        info = {"number": number, "roles": roles, "mode": "", "targets": [], "talon": [], "exchanges": [],
                "discards": "", "points": [], "scores": []}
        self.deals.append(info)
        self.frame("deal", f"Deal {number} of {state.rules.num_deals}: {seats[int(state.dealer[0])]} deals, "
                           f"{seats[playmaker]} is the playmaker and chooses the mode from its first six "
                           f"cards (R9). The hands as dealt.")
        self.decide(MODE_ACTION_OFFSET + deal["mode"])
        mode = int(state.mode[0])
        info["mode"] = MODE_TEXT[mode]
        info["targets"] = engine.targets(state.dealer, state.mode)[0].tolist()
        rule = "R24" if mode == MINIMUM else "R23"
        targets = ", ".join(f"{seats[s]} {t}" for s, t in enumerate(info["targets"]))
        self.frame("mode", f"{seats[playmaker]} chooses {MODE_TEXT[mode]}. Targets in tricks ({rule}): {targets}.",
                   hands=self.hands_before_talon())
        for index, exchange in enumerate(deal["exchanges"], start=1):
            self.exchange(index, exchange["given"], exchange["returned"], info)
        info["talon"] = [card_text(card) for card in state.talon_cards[0]]
        self.frame("talon", f"The talon is turned face up, {' '.join(info['talon'])}, and joins the hand of "
                            f"{seats[playmaker]} (section 5).")
        for card in deal["discards"]:
            self.decide(card)
        info["discards"] = hand_text(int(state.discards[0]))
        self.frame("discards", f"{seats[playmaker]} discards four cards face down: {info['discards']}.")
        for number_in_deal, trick in enumerate(deal["tricks"], start=1):
            self.trick(number_in_deal, trick["cards"])
        info["points"], info["scores"] = state.deal_points[0].tolist(), state.scores[0].tolist()
        won = self.frames[-1]["tricks_won"]
        points = ", ".join(f"{seats[s]} {p:+d}" for s, p in enumerate(info["points"]))
        formula = "target - tricks" if mode == MINIMUM else "tricks - target"
        self.frame("points", f"Deal {number} is over: tricks {won} against targets {info['targets']}; points "
                             f"({rule}: {formula}): {points}.",
                   hands=np.zeros(3, dtype=np.uint64), tricks_won=np.array(won), scores=state.scores[0])

    def exchange(self, index: int, given: int, returned: int, info: dict[str, Any]) -> None:
        """One exchange (R18-R21): the giver's card, then the receiver's return (the engine
        applies a forced return itself; after a trump the receiver decides)."""
        state, seats = self.state, self.seats
        pair = int(state.exchange_pair[0])
        giver, receiver = int(state.exchange_giver[0, pair]), int(state.exchange_receiver[0, pair])
        self.decide(given)
        if state.phase[0] == engine.RETURN:
            self.decide(returned)
            why = "a card of its choice after a trump"
        else:
            why = f"its highest {SUIT_SYMBOLS[suit_of(given)]}: what was given is not a trump"
        back = card_text(int(state.last_returned[0]))
        info["exchanges"].append({"giver": giver, "receiver": receiver, "given": card_text(given), "returned": back})
        self.frame("exchange", f"Exchange {index} (R18-R20): {seats[giver]} gives {card_text(given)} to "
                               f"{seats[receiver]}, who returns {back} ({why}, R21).", hands=self.hands_before_talon())

    def trick(self, number: int, cards: Sequence[int]) -> None:
        """One trick (R12-R16). The frame is read just before the last card, which may end the deal."""
        state, seats = self.state, self.seats
        for card in cards[:2]:
            self.decide(card)
        hands, won, scores = state.hands[0].copy(), state.tricks_won[0].copy(), state.scores[0].copy()
        hands[int(state.to_act[0])] &= ~np.uint64(1 << cards[2])
        self.decide(cards[2])
        leader, winner = int(state.last_trick_leader[0]), int(state.last_trick_winner[0])
        won[winner] += 1
        played = [((leader + position) % 3, int(card)) for position, card in enumerate(state.last_trick[0])]
        listed = ", ".join(f"{seats[seat]} {card_text(card)}" for seat, card in played)
        self.frame("trick", f"Trick {number}: {listed}. {seats[winner]} wins it (R16).",
                   hands=hands, tricks_won=won, scores=scores, trick=played, winner=winner)

    def game_over(self) -> None:
        scores = self.state.final_scores[0]
        self.final_scores = scores.tolist()
        best = [self.seats[s] for s in np.flatnonzero(scores == scores.max())]
        result = f"{best[0]} wins" if len(best) == 1 else f"{' and '.join(best)} share the win (R6)"
        listed = ", ".join(f"{self.seats[s]} {p:+d}" for s, p in enumerate(self.final_scores))
        self.frame("final", f"Game over after {len(self.deals)} deals. Final scores: {listed}. {result}.",
                   hands=np.zeros(3, dtype=np.uint64), tricks_won=np.zeros(3, dtype=np.int8), scores=scores)


def page_html(data: dict[str, Any]) -> str:
    """One HTML file holding `data` (JSON) and the CSS and script that show it
    (`pages/replay.*`, put together by `pages.assemble`).

    The placeholders are filled in one pass, so text put in for one placeholder is never
    searched for another: a title (a file name) holding `__DATA__` stays that text, and the
    game's JSON is not copied into the title."""
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    # Inside <script> only "</" could end the element early; \u003c is the same character to JSON.
    payload = payload.replace("<", "\\u003c")
    return assemble("replay", {"__TITLE__": html.escape(data["title"]), "__DATA__": payload})


MAX_TITLE = 200
"""Longest page title kept (a longer one, from a long file name, keeps its start and end)."""


def fit_title(title: Any) -> str:
    """`title` as a page shows it: text of at most [`MAX_TITLE`][] characters."""
    if not isinstance(title, str):
        raise ValueError(f"the page title must be text, got {type(title).__name__}")
    return cut_middle(title, MAX_TITLE)
