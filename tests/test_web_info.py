"""Only the seat's view leaves the server of ``play --web`` (sergeant_major_env.web).

Random games are played through the server's own request handler (a server in this process,
plain HTTP, no browser), the person's moves chosen at random among the legal ones. Every
engine step the game takes is watched, and every event the server ever sent is checked:

* no card outside what the seat knows at that moment appears in it, in a field or in its
  words: the seat's own hand (the first six cards during its own mode choice, R9), the cards
  played, the talon once turned face up, its own discards and exchange cards (R22);
* each view is :func:`web.seat_view` of a real moment, and that view is the same in every
  world consistent with the seat's knowledge (``worlds.sample_worlds``: the other hands,
  the talon before it is shown, the others' discards and exchanges redrawn);
* the seed, which decides every deal, is sent only once the game is over.
"""

from __future__ import annotations

import http.client
import json
import re
import threading

import numpy as np
import pytest

from sergeant_major_env import engine, web
from sergeant_major_env.cards import SUIT_SYMBOLS
from sergeant_major_env.observation import decode, observe
from sergeant_major_env.policies import RandomPolicy
from sergeant_major_env.render import RANK_TEXT
from sergeant_major_env.rules import Rules
from sergeant_major_env.worlds import sample_worlds

CARD_TEXT = re.compile(f"({'|'.join(RANK_TEXT)})([{SUIT_SYMBOLS}])")
"""A card as a person reads it (render.card_text: Q♥, 10♥) in an event's words."""
CARD_FIELDS = ("hand", "talon", "discards", "given", "received", "legal")


class Client:
    """Requests to a server running in this process."""

    def __init__(self, server: web.WebServer) -> None:
        self.host, self.port = server.server_address[:2]
        self.token = ""

    def request(self, method: str, path: str, body=None) -> tuple[int, str]:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        data = None if body is None else json.dumps(body)
        headers = {"X-Token": self.token, **({"Content-Type": "application/json"} if method == "POST" else {})}
        connection.request(method, path, body=data, headers=headers)
        response = connection.getresponse()
        text = response.read().decode()
        connection.close()
        return response.status, text


def _serve(options: web.WebOptions) -> web.WebServer:
    server = web.WebServer(("127.0.0.1", 0), lambda: [RandomPolicy(), RandomPolicy()], ["random", "random"], options)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server


def _known(state: engine.State, seat: int) -> set[int]:
    """The cards ``seat`` sees now (its observation's card planes)."""
    obs = decode(observe(state, seat)[0])
    cards = set(obs["hand"]) | set(obs["talon"]) | set(obs["discards"]) | set(obs["exchange_given"])
    cards |= set(obs["exchange_received"]) | {c for c in obs["trick"] if c >= 0}
    for played in obs["played"]:
        cards |= set(played)
    return cards


def _cards_of(event: dict) -> set[int]:
    """Every card an event shows: in the view's fields and in its words."""
    view = event["view"]
    cards = {c for name in CARD_FIELDS for c in view[name] if c < 52}
    cards |= {int(a) for a in view["refusals"] if int(a) < 52}
    cards |= {card for _, card in view["trick"]}
    if view["last_trick"]:
        cards |= {card for _, card in view["last_trick"]["cards"]}
    for line in event["text"] + [view["hint"]]:
        cards |= {SUIT_SYMBOLS.index(s) * 13 + RANK_TEXT.index(r) for r, s in CARD_TEXT.findall(line)}
    return cards


def _same_in_worlds(state: engine.State, seat: int, labels, moves: int, rng: np.random.Generator) -> None:
    """The seat's view is the same in worlds redrawn from its knowledge (the seat to act's, so a
    copy where ``seat`` is to act when it is not: in play and discards that changes no knowledge)."""
    probe = state.copy()
    if int(probe.to_act[0]) != seat:
        if int(probe.phase[0]) not in (engine.DISCARD, engine.PLAY):
            return
        probe.to_act[0] = seat
    expected = web.seat_view(probe, seat, labels, moves)
    worlds = sample_worlds(probe, np.array([0]), 3, rng)
    for w in range(3):
        assert web.seat_view(worlds.take([w]), seat, labels, moves) == expected


@pytest.fixture()
def watched(monkeypatch):
    """Every step of every game: (game id, state before, state after, events before, events after, moves)."""
    steps: list[tuple] = []
    original = web.WebGame._step

    def watch(self, action):
        before, count = self.state.copy(), len(self.events)
        original(self, action)
        steps.append((self.id, before, self.state.copy(), count, len(self.events), self.moves))

    monkeypatch.setattr(web.WebGame, "_step", watch)
    return steps


def _play(client: Client, rng: np.random.Generator) -> tuple[str, list[dict], list[dict]]:
    """A whole game with random legal moves; (game id, every answer, the whole event stream)."""
    status, text = client.request("POST", "/api/games", {})
    assert status == 201
    answer = json.loads(text)
    client.token, game = answer["token"], answer["game"]
    answers, seen = [answer], answer["next"]
    while not answer["over"]:
        view = answer["events"][-1]["view"] if answer["events"] else None
        if view is not None and view["legal"]:
            status, text = client.request("POST", f"/api/games/{game}/move",
                                          {"move": view["move"], "action": int(rng.choice(view["legal"])),
                                           "since": seen})
        else:
            status, text = client.request("GET", f"/api/games/{game}?since={seen}&wait=5")
        assert status == 200, text
        answer = json.loads(text)
        answers.append(answer)
        seen = answer["next"]
    status, text = client.request("GET", f"/api/games/{game}?since=0")
    return game, answers, json.loads(text)["events"]


@pytest.mark.slow
@pytest.mark.parametrize("seat", [0, 1, 2])
def test_every_response_holds_only_what_the_seat_knows(watched, seat):
    """R9, R22, section 5: per seat, random games of four deals with exchanges (R17-R21)."""
    server = _serve(web.WebOptions(seat=seat, seed=40 + seat, rules=Rules(num_deals=4), pace=0))
    rng = np.random.default_rng(seat)
    client = Client(server)
    kinds = set()
    try:
        for _ in range(2):
            watched.clear()
            game_id, answers, events = _play(client, rng)
            game = server.games[game_id]
            for answer in answers:  # the seed decides every deal: not before the end
                assert ("seed" in answer) == answer["over"]
            _check_events(game, [step for step in watched if step[0] == game_id], events, rng)
            kinds |= {event["view"]["decision"] for event in events}
    finally:
        server.shutdown()
        server.server_close()
    assert {"mode", "discard", "play"} <= kinds  # the person's decisions the games reached


def _check_events(game: web.WebGame, steps: list[tuple], events: list[dict], rng: np.random.Generator) -> None:
    seat, labels = game.seat, game.labels
    first = steps[0][1]
    known = {int(first.deal[0]) + 1: _known(first, seat)}
    produced = {0: first}  # event number -> the state it shows (the first event: the game's start)
    assert events[0]["view"] == web.seat_view(first, seat, labels, 0)
    for _, before, after, start, stop, moves in steps:
        deal_before, deal_after = int(before.deal[0]) + 1, int(after.deal[0]) + 1
        known.setdefault(deal_before, set()).update(_known(before, seat))
        if int(after.phase[0]) != engine.OVER:
            known.setdefault(deal_after, set()).update(_known(after, seat))
        if after.deal_ended[0]:  # the last trick of a deal, shown to all (R12)
            known[deal_before].update(int(c) for c in after.last_trick[0])
        _same_in_worlds(before, seat, labels, moves - (int(before.to_act[0]) == seat), rng)
        for number in range(start, stop):
            event = events[number]
            assert _cards_of(event) <= known[event["deal"]], (number, event)
            if event["view"]["deal_over"] is None:
                produced[number] = after
                assert event["view"] == web.seat_view(after, seat, labels, moves)
    assert len(produced) + sum(e["view"]["deal_over"] is not None for e in events) == len(events)
