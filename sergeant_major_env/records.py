"""Game records (RULES.md section 11): recording, JSON Lines, replay checking, and a CLI.

A record is one JSON object per finished game (``"format": "sergeant-major-record/1"``)::

    {"format", "rules": {section 9 options}, "seed", "players": [3 names], "first_dealer",
     "deals": [{"number", "dealer", "playmaker", "third",
                "hands": [[16 cards as dealt] x 3], "talon": [4 cards], "mode",
                "exchanges": [{"giver", "receiver", "given", "returned"}, ...],
                "discards": [4 cards], "tricks": [{"leader", "cards": [3], "winner"} x 16],
                "tricks_won": [3], "points": [3]}, ...],
     "scores": [3 totals]}

Cards are written as in R3 (``"QH"``), modes as ``S C H D NT MIN``, seats as 0..2. Every
key is required (``"exchanges": []`` included) and no other key is allowed. The record holds
the cards of every deal and every decision, so it replays without the seed; the seed is the
game's own per-game seed, which alone reproduces the cards of an engine game.

* :class:`Recorder` wraps :func:`engine.step` and turns each finished game of a batch into a
  record (``Recorder.finished``); :func:`simulate` plays random games with it.
* :func:`replay` re-runs a record through the engine (a batch of one game) and raises
  :class:`RecordError` naming the first inconsistency and the rule broken, e.g.
  ``deal 3, trick 5, seat 1 played 7H: R13: seat 1 must follow suit S``. Legality is the
  engine's (``legal_bits`` / ``illegal_reason``) and so are winners and points: this module
  only compares the record with what the engine does.
* :func:`write_jsonl` / :func:`read_jsonl`: one record per line.

Command line (``--help`` on each)::

    python -m sergeant_major_env.records simulate --games N --seed S --out FILE [--option NAME=VALUE ...]
    python -m sergeant_major_env.records check FILE

``simulate`` plays N games with uniformly random legal decisions (game i has seed S + i,
which must stay at most 2**63 - 1), batched, and writes their records; ``--out`` is checked
writable before the first game and written whole or not at all (a temporary file renamed at
the end), so an interrupted run leaves no truncated file. ``check`` replays every record of
a file and exits 0 only if all replay exactly, printing one line per bad record otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from . import engine
from .cards import MODE_ACTION_OFFSET, MODE_NAMES, NUM_ACTIONS, NUM_CARDS, MINIMUM, card_name, parse_card
from .files import atomic_write, check_writable
from .rules import Rules
from .seeding import SEED_RULE, check_seed_span, seed_argument

FORMAT = "sergeant-major-record/1"
RECORD_KEYS = ("format", "rules", "seed", "players", "first_dealer", "deals", "scores")
DEAL_KEYS = ("number", "dealer", "playmaker", "third", "hands", "talon", "mode", "exchanges",
             "discards", "tricks", "tricks_won", "points")
EXCHANGE_KEYS = ("giver", "receiver", "given", "returned")
TRICK_KEYS = ("leader", "cards", "winner")
DEFAULT_PLAYERS = ("random", "random", "random")

_CARD_NAMES = tuple(card_name(c) for c in range(NUM_CARDS))


class RecordError(ValueError):
    """A record that is malformed or does not replay; the message names the first problem."""


# ============================================================================ recording

# Columns of the per-step rows the Recorder keeps (int8 each): what the decision was and
# what the step did. Everything else of a record follows from these and the dealt cards.
_PHASE, _SEAT, _RECEIVER, _ACTION, _RETURNED, _WINNER = range(6)
_COLUMNS = 6


class Recorder:
    """Records the games of a batch while they are stepped; finished games become records.

    ``rec = Recorder(state, players)``, then ``rec.step(actions)`` instead of
    ``engine.step(state, actions)``. Each step stores one small row per game (decision
    kind, seat, exchange receiver, action, card returned, trick winner) in a growing array,
    and the cards of each deal as dealt. The per-game Python work (building the dict) is
    done once, when a game ends; its record is appended to ``finished``. With
    ``autoreset`` the slot's next game is recorded as a new record.
    """

    def __init__(self, state: engine.State, players: Sequence[str] | None = None) -> None:
        players = list(DEFAULT_PLAYERS if players is None else players)
        if len(players) != 3 or not all(isinstance(p, str) for p in players):
            raise ValueError(f"players must be three names, got {players!r}")
        fresh = (state.deal == 0) & (state.phase == engine.MODE) & (state.modes_used == 0).all(axis=1)
        if not fresh.all():
            raise ValueError(f"Recorder needs games at their start (deal 1, before the mode choice); "
                             f"game {int(np.flatnonzero(~fresh)[0])} is not")
        self.state = state
        self.players = players
        self.finished: list[dict[str, Any]] = []
        batch = state.batch_size
        self._rows = np.empty((256, batch, _COLUMNS), dtype=np.int8)
        self._offset = 0  # global step number of self._rows[0]
        self._steps = 0  # steps recorded so far
        self._start = np.zeros(batch, dtype=np.int64)  # global step at which each slot's game began
        self._games: list[dict[str, Any] | None] = [None] * batch
        self._begin_games(np.arange(batch))

    def step(self, actions, autoreset: bool = False) -> engine.State:
        """:func:`engine.step`, recording the decision and its outcome."""
        state = self.state
        actions = np.asarray(actions)
        row = np.empty((state.batch_size, _COLUMNS), dtype=np.int8)
        row[:, _PHASE] = state.phase
        row[:, _SEAT] = state.to_act
        pair = np.minimum(state.exchange_pair, 1)
        row[:, _RECEIVER] = state.exchange_receiver[np.arange(state.batch_size), pair]
        running = state.phase != engine.OVER
        engine.step(state, actions, autoreset)  # raises, changing nothing, on an illegal action
        row[:, _ACTION] = np.where(running, actions, -1)
        row[:, _RETURNED] = state.last_returned
        row[:, _WINNER] = state.last_trick_winner
        self._append(row)
        self._after_step(autoreset)
        return state

    # ------------------------------------------------------------------ bookkeeping

    def _begin_games(self, slots: np.ndarray) -> None:
        for g in slots:
            self._games[g] = {"seed": int(self.state.seed[g]),
                              "first_dealer": int(self.state.first_dealer[g]), "deals": []}
        self._start[slots] = self._steps
        self._begin_deals(slots)

    def _begin_deals(self, slots: np.ndarray) -> None:
        """Keep the new deal's cards: ``hands`` of a record are as dealt (section 11)."""
        dealt, talon, dealer = self.state.dealt[slots], self.state.talon_cards[slots], self.state.dealer[slots]
        for i, g in enumerate(slots):
            self._games[g]["deals"].append({"dealer": int(dealer[i]), "hands": dealt[i], "talon": talon[i]})

    def _after_step(self, autoreset: bool) -> None:
        state = self.state
        for g in np.flatnonzero(state.deal_ended):
            self._games[g]["deals"][-1]["points"] = state.deal_points[g].tolist()
        ended = np.flatnonzero(state.game_ended)
        for g in ended:
            self.finished.append(self._export(g, state.final_scores[g].tolist()))
            self._games[g] = None
        self._begin_deals(np.flatnonzero(state.deal_ended & ~state.game_ended))
        if autoreset:
            self._begin_games(ended)

    def _append(self, row: np.ndarray) -> None:
        if self._steps - self._offset == len(self._rows):
            self._make_room()
        self._rows[self._steps - self._offset] = row
        self._steps += 1

    def _make_room(self) -> None:
        """Drop rows no live game needs (automatic reset runs forever), else grow."""
        live = [self._start[g] for g, game in enumerate(self._games) if game is not None]
        drop = int(min(live, default=self._steps)) - self._offset
        used = self._steps - self._offset
        self._rows[: used - drop] = self._rows[drop:used]
        self._offset += drop
        if drop < len(self._rows) // 2:
            grown = np.empty((2 * len(self._rows),) + self._rows.shape[1:], dtype=np.int8)
            grown[: used - drop] = self._rows[: used - drop]
            self._rows = grown

    # ------------------------------------------------------------------ export

    def _export(self, g: int, scores: list[int]) -> dict[str, Any]:
        game = self._games[g]
        rows = self._rows[self._start[g] - self._offset : self._steps - self._offset, g]
        bounds = [*np.flatnonzero(rows[:, _PHASE] == engine.MODE), len(rows)]  # a deal starts with its mode
        deals = [_export_deal(number, info, rows[a:b])
                 for number, (info, a, b) in enumerate(zip(game["deals"], bounds[:-1], bounds[1:]), start=1)]
        return {"format": FORMAT, "rules": self.state.rules.to_dict(), "seed": game["seed"],
                "players": list(self.players), "first_dealer": game["first_dealer"],
                "deals": deals, "scores": scores}


def _names(cards: Iterable[int]) -> list[str]:
    return [_CARD_NAMES[c] for c in cards]


def _export_deal(number: int, info: dict[str, Any], rows: np.ndarray) -> dict[str, Any]:
    """One deal of a record from the cards dealt and the rows of its decisions."""
    phase, seat, receiver, action, returned, winner = rows.T.tolist()
    exchanges = []
    for i, kind in enumerate(phase):
        if kind == engine.GIVE:
            # A forced return is the step's own event; after a trump the receiver's
            # decision is the next row (R21).
            back = returned[i] if returned[i] >= 0 else action[i + 1]
            exchanges.append({"giver": seat[i], "receiver": receiver[i],
                              "given": _CARD_NAMES[action[i]], "returned": _CARD_NAMES[back]})
    plays = [i for i, kind in enumerate(phase) if kind == engine.PLAY]
    tricks = [{"leader": seat[plays[t]], "cards": _names(action[i] for i in plays[t : t + 3]),
               "winner": winner[plays[t + 2]]} for t in range(0, len(plays), 3)]
    dealer = info["dealer"]
    return {
        "number": number, "dealer": dealer,
        "playmaker": (dealer + engine.PLAYMAKER) % 3, "third": (dealer + engine.THIRD) % 3,
        "hands": [_names(hand) for hand in info["hands"].tolist()],
        "talon": _names(info["talon"].tolist()),
        "mode": MODE_NAMES[action[0] - MODE_ACTION_OFFSET],
        "exchanges": exchanges,
        "discards": _names(a for k, a in zip(phase, action) if k == engine.DISCARD),
        "tricks": tricks,
        "tricks_won": np.bincount([t["winner"] for t in tricks], minlength=3).tolist(),
        "points": info["points"],
    }


def random_actions(state: engine.State, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per game (0 for finished games, which ignore it)."""
    legal = engine.legal_action_mask(state)
    return np.where(legal, rng.random((state.batch_size, NUM_ACTIONS)), -1.0).argmax(axis=1)


def simulate(games: int, seed: int = 0, rules: Rules | None = None, players: Sequence[str] | None = None,
             batch_size: int = 1024, on_finished: Callable[[int], None] | None = None) -> Iterator[dict]:
    """Yield the records of ``games`` games with uniformly random legal decisions.

    Game i has per-game seed ``seed + i`` (:func:`engine.game_seeds`), so its cards are
    reproducible alone; the decisions come from one ``numpy`` Generator seeded with
    ``seed``. Games advance together, ``batch_size`` at a time, one ``engine.step`` per
    decision. Records come in game order; ``on_finished(n)`` reports n newly finished games.
    """
    if isinstance(games, bool) or not isinstance(games, int) or games < 0:
        raise ValueError(f"games must be a non-negative integer, got {games!r}")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    seed = check_game_seeds(seed, games)
    rng = np.random.default_rng(seed)
    for first in range(0, games, batch_size):
        size = min(batch_size, games - first)
        state = engine.init(engine.game_seeds(seed + first, size), rules)
        recorder = Recorder(state, players)
        while len(recorder.finished) < size:
            done = len(recorder.finished)
            recorder.step(random_actions(state, rng))
            if on_finished and len(recorder.finished) > done:
                on_finished(len(recorder.finished) - done)
        yield from sorted(recorder.finished, key=lambda record: record["seed"])


def check_game_seeds(seed: Any, games: int) -> int:
    """``seed`` by the one seed rule (:mod:`~sergeant_major_env.seeding`), and so is the seed of the
    last game, ``seed + games - 1``: a one-line ValueError names the largest seed that fits."""
    return check_seed_span(seed, games)


# ============================================================================ structure

def _fail(where: str, message: str) -> RecordError:
    return RecordError(f"{where}: {message}" if where else message)


def _object(value: Any, keys: Sequence[str], where: str) -> dict:
    if not isinstance(value, dict):
        raise _fail(where, f"expected a JSON object, got {type(value).__name__}")
    for key in keys:
        if key not in value:
            raise _fail(where, f"missing key {key!r}")
    for key in value:
        if key not in keys:
            raise _fail(where, f"unknown key {key!r} (the keys are {', '.join(keys)})")
    return value


def _integer(value: Any, where: str, low: int = 0, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        span = f"{low}..{high}" if high is not None else f">= {low}"
        raise _fail(where, f"expected an integer {span}, got {value!r}")
    return value


def _list(value: Any, where: str, length: int | None = None, why: str = "") -> list:
    if not isinstance(value, list):
        raise _fail(where, f"expected a list, got {type(value).__name__}")
    if length is not None and len(value) != length:
        raise _fail(where, f"{why}expected {length} entries, got {len(value)}")
    return value


def _card(value: Any, where: str) -> int:
    try:
        return parse_card(value)
    except ValueError as error:
        raise _fail(where, str(error)) from None


def _cards(value: Any, where: str, length: int, why: str) -> list[int]:
    return [_card(v, f"{where}[{i}]") for i, v in enumerate(_list(value, where, length, why))]


def _seats(value: Any, where: str, low: int, high: int) -> list[int]:
    return [_integer(v, f"{where}[{i}]", low, high) for i, v in enumerate(_list(value, where, 3))]


def parse_record(record: Any) -> dict[str, Any]:
    """Check a record's structure (keys, types, cards); return it with cards as ids.

    Counts that follow from the rules are checked here too, citing them: 16 cards a
    hand and 4 in the talon (R10), 4 discards (section 5), 16 tricks of 3 cards (R12).
    """
    _object(record, RECORD_KEYS, "")
    if record["format"] != FORMAT:
        raise _fail("format", f"expected {FORMAT!r}, got {record['format']!r}")
    players = _list(record["players"], "players", 3)
    if not all(isinstance(p, str) for p in players):
        raise _fail("players", f"expected three names (strings), got {players!r}")
    return {
        "rules": _parse_rules(record["rules"]),
        "seed": _integer(record["seed"], "seed", 0, 2**64 - 1),
        "first_dealer": _integer(record["first_dealer"], "first_dealer", 0, 2),
        "deals": [_parse_deal(deal, f"deal {i}") for i, deal in enumerate(_list(record["deals"], "deals"), start=1)],
        "scores": _seats(record["scores"], "scores", -(2**31), 2**31),
    }


def _parse_rules(value: Any) -> Rules:
    if not isinstance(value, dict):
        raise _fail("rules", f"expected a JSON object, got {type(value).__name__}")
    try:
        rules = Rules.from_dict(value)  # names unknown options and bad values
    except ValueError as error:
        raise _fail("rules", str(error)) from None
    _object(value, Rules.names(), "rules")  # and every option is written out
    return rules


def _parse_deal(deal: Any, where: str) -> dict[str, Any]:
    _object(deal, DEAL_KEYS, where)
    if deal["mode"] not in MODE_NAMES:
        raise _fail(f"{where}, mode", f"expected one of {', '.join(MODE_NAMES)}, got {deal['mode']!r}")
    hands = _list(deal["hands"], f"{where}, hands", 3, "one hand per seat: ")
    return {
        "number": _integer(deal["number"], f"{where}, number", 1),
        **{key: _integer(deal[key], f"{where}, {key}", 0, 2) for key in ("dealer", "playmaker", "third")},
        "hands": [_cards(hand, f"{where}, hands[{s}]", 16, "R10: 16 cards a hand: ") for s, hand in enumerate(hands)],
        "talon": _cards(deal["talon"], f"{where}, talon", 4, "R10: 4 cards in the talon: "),
        "mode": MODE_NAMES.index(deal["mode"]),
        "exchanges": [_parse_exchange(e, f"{where}, exchange {i}")
                      for i, e in enumerate(_list(deal["exchanges"], f"{where}, exchanges"), start=1)],
        "discards": _cards(deal["discards"], f"{where}, discards", 4, "section 5: 4 discards: "),
        "tricks": [_parse_trick(t, f"{where}, trick {i}")
                   for i, t in enumerate(_list(deal["tricks"], f"{where}, tricks", 16, "R10: 16 tricks a deal: "), start=1)],
        "tricks_won": _seats(deal["tricks_won"], f"{where}, tricks_won", 0, 16),
        "points": _seats(deal["points"], f"{where}, points", -16, 16),
    }


def _parse_exchange(exchange: Any, where: str) -> dict[str, int]:
    _object(exchange, EXCHANGE_KEYS, where)
    return {"giver": _integer(exchange["giver"], f"{where}, giver", 0, 2),
            "receiver": _integer(exchange["receiver"], f"{where}, receiver", 0, 2),
            "given": _card(exchange["given"], f"{where}, given"),
            "returned": _card(exchange["returned"], f"{where}, returned")}


def _parse_trick(trick: Any, where: str) -> dict[str, Any]:
    _object(trick, TRICK_KEYS, where)
    return {"leader": _integer(trick["leader"], f"{where}, leader", 0, 2),
            "cards": _cards(trick["cards"], f"{where}, cards", 3, "R12: one card a seat: "),
            "winner": _integer(trick["winner"], f"{where}, winner", 0, 2)}


# ============================================================================ replay

def replay(record: Any) -> None:
    """Re-run a record through the engine; raise :class:`RecordError` at the first inconsistency."""
    _Replay(parse_record(record)).run()


def check_record(record: Any) -> str | None:
    """The first problem of a record (structure or replay), or ``None`` if it replays exactly."""
    try:
        replay(record)
    except RecordError as error:
        return str(error)
    return None


class _Replay:
    """One record against a batch-of-one engine game. The engine decides; this compares."""

    def __init__(self, game: dict[str, Any]) -> None:
        self.game = game
        self.state = engine.init([game["seed"]], game["rules"])
        self.state.first_dealer[0] = game["first_dealer"]
        self.state.dealer[0] = game["first_dealer"]

    def run(self) -> None:
        deals, num_deals = self.game["deals"], self.game["rules"].num_deals
        for number, deal in enumerate(deals, start=1):
            if self.state.phase[0] == engine.OVER:
                raise _fail(f"deal {number}", f"R4: a game of num_deals={num_deals} has {num_deals} deals, "
                                              f"the record has {len(deals)}")
            self.play_deal(number, deal)
        if self.state.phase[0] != engine.OVER:
            raise RecordError(f"R4: the record has {len(deals)} deal(s), a game of num_deals={num_deals} has {num_deals}")
        scores = self.state.final_scores[0].tolist()
        if self.game["scores"] != scores:
            raise _fail("scores", f"R25: the totals of the deals' points are {scores}, not {self.game['scores']}")

    def play_deal(self, number: int, deal: dict[str, Any]) -> None:
        where = f"deal {number}"
        self.check_roles(number, deal, where)
        self.install_cards(deal, where)
        mode = MODE_NAMES[deal["mode"]]
        self.decide(MODE_ACTION_OFFSET + deal["mode"], f"{where}, seat {deal['playmaker']} chose mode {mode}")
        self.exchange(number, deal)
        for i, card in enumerate(deal["discards"], start=1):
            self.decide(card, f"{where}, discard {i}, seat {deal['playmaker']} discarded {_CARD_NAMES[card]}")
        won = [0, 0, 0]
        for t, trick in enumerate(deal["tricks"], start=1):
            won[self.play_trick(trick, f"{where}, trick {t}", t)] += 1
        if not self.state.deal_ended[0]:
            raise RuntimeError(f"{where}: the engine did not end the deal after 16 tricks")
        if deal["tricks_won"] != won:
            raise _fail(where, f"R23: the tricks give tricks_won {won}, not {deal['tricks_won']}")
        points = self.state.deal_points[0].tolist()
        if deal["points"] != points:
            rule = "R24" if deal["mode"] == MINIMUM else "R23"
            raise _fail(where, f"{rule}: in mode {mode} the points are {points} (tricks {won}, dealer seat "
                               f"{deal['dealer']}), not {deal['points']}")

    def check_roles(self, number: int, deal: dict[str, Any], where: str) -> None:
        """R4 (deal number, dealer rotation) and R5 (playmaker, third), from the engine's roles."""
        if deal["number"] != number:
            raise _fail(where, f"section 11: deals are numbered 1, 2, ... in order; this one says {deal['number']}")
        dealer = int(self.state.dealer[0])
        if deal["dealer"] != dealer:
            why = "first_dealer" if number == 1 else f"left of deal {number - 1}'s dealer"
            raise _fail(where, f"R4: the dealer is seat {dealer} ({why}), not seat {deal['dealer']}")
        seat_of = {int(role): seat for seat, role in enumerate(engine.roles(self.state)[0])}
        for role, key, why in ((engine.PLAYMAKER, "playmaker", "left of the dealer"),
                               (engine.THIRD, "third", "right of the dealer")):
            if deal[key] != seat_of[role]:
                raise _fail(where, f"R5: the {key} is seat {seat_of[role]} ({why}), not seat {deal[key]}")

    def install_cards(self, deal: dict[str, Any], where: str) -> None:
        """R2, R10: the three hands and the talon are the 52 cards, each once."""
        seen: dict[int, str] = {}
        places = [(f"hand of seat {s}", hand) for s, hand in enumerate(deal["hands"])] + [("talon", deal["talon"])]
        for place, cards in places:
            for card in cards:
                if card in seen:
                    raise _fail(where, f"R2, R10: {_CARD_NAMES[card]} is dealt twice ({seen[card]} and {place})")
                seen[card] = place
        dealt = np.array(deal["hands"], dtype=np.int8)
        engine.set_cards(self.state, np.array([0]), dealt[None], np.array(deal["talon"], dtype=np.int8)[None])

    def decide(self, action: int, where: str) -> None:
        """Step one decision; the engine refuses an illegal one (state unchanged) and says why."""
        try:
            engine.step(self.state, np.array([action]))
        except engine.IllegalActionError:
            raise _fail(where, engine.illegal_reason(self.state, 0, action)) from None

    # ------------------------------------------------------------------ exchanges (R17-R21)

    def exchange(self, number: int, deal: dict[str, Any]) -> None:
        state = self.state
        for index, ex in enumerate(deal["exchanges"], start=1):
            where = f"deal {number}, exchange {index}"
            if state.phase[0] != engine.GIVE:
                raise _fail(where, self.no_more_exchanges(number, deal))
            giver, receiver = self.current_pair()
            if (ex["giver"], ex["receiver"]) != (giver, receiver):
                raise _fail(where, self.wrong_pair(ex, giver, receiver))
            given, returned = _CARD_NAMES[ex["given"]], _CARD_NAMES[ex["returned"]]
            self.decide(ex["given"], f"{where}, seat {giver} gave {given}")
            if state.phase[0] == engine.RETURN:  # a trump was given: the receiver chooses (R21)
                self.decide(ex["returned"], f"{where}, seat {receiver} returned {returned}")
            elif state.last_returned[0] != ex["returned"]:
                forced = _CARD_NAMES[state.last_returned[0]]
                raise _fail(where, f"R21: seat {receiver} received {given}, not a trump, and must return "
                                   f"{forced} (the highest {given[1]} it holds), not {returned}")
        if state.phase[0] in (engine.GIVE, engine.RETURN):
            owed = ", ".join(f"seat {g} -> seat {r}: {n}" for g, r, n in self.pairs(owed=True) if n)
            raise _fail(f"deal {number}, exchange {len(deal['exchanges']) + 1}",
                        f"R19: the record stops after {len(deal['exchanges'])} exchange(s), but cards are "
                        f"still due ({owed})")

    def current_pair(self) -> tuple[int, int]:
        pair = int(self.state.exchange_pair[0])
        return int(self.state.exchange_giver[0, pair]), int(self.state.exchange_receiver[0, pair])

    def pairs(self, owed: bool = False) -> list[tuple[int, int, int]]:
        """The engine's exchange pairs of this deal in R20 order: (giver, receiver, cards due or still owed)."""
        state, result = self.state, []
        for p in range(2):
            giver, receiver, due = (int(a[0, p]) for a in (state.exchange_giver, state.exchange_receiver,
                                                             state.exchange_count))
            if giver >= 0:
                result.append((giver, receiver, due - int(state.exchange_done[0, giver, receiver]) if owed else due))
        return result

    def no_more_exchanges(self, number: int, deal: dict[str, Any]) -> str:
        """Why the engine expects no (further) exchange: the wording only, the engine decided."""
        if number == 1:
            return "R17: there are no exchanges in the first deal"
        if deal["mode"] >= 4:
            return f"R17: there are no exchanges in {MODE_NAMES[deal['mode']]} deals"
        if not self.game["rules"].exchanges:
            return "R17: exchanges are off (rule option exchanges=false)"
        points = self.state.prev_points[0].tolist()
        due = self.pairs()
        if not due:
            return f"R18: nobody scored in the previous deal (points {points}), so there is no exchange"
        listed = ", ".join(f"seat {g} -> seat {r}: {n}" for g, r, n in due)
        return f"R19: all cards due after the previous deal's points {points} were exchanged ({listed}); this one is extra"

    def wrong_pair(self, ex: dict[str, int], giver: int, receiver: int) -> str:
        pair = (ex["giver"], ex["receiver"])
        planned = [(g, r) for g, r, _ in self.pairs()]
        current = planned.index((giver, receiver))
        expected = f"seat {giver} -> seat {receiver}"
        if pair in planned[current + 1:]:
            return (f"R20: {expected} exchanges first (the giver with the larger target first, then its "
                    f"receiver with the larger target; a pair completes all its cards first), not seat "
                    f"{pair[0]} -> seat {pair[1]}")
        if pair in planned[:current]:
            return f"R19: seat {pair[0]} -> seat {pair[1]} already exchanged all its cards; next is {expected}"
        points = self.state.prev_points[0].tolist()
        return (f"R18: seat {pair[0]} -> seat {pair[1]} is not an exchange after the previous deal's points "
                f"{points} (givers scored > 0, receivers < 0); next is {expected}")

    # ------------------------------------------------------------------ tricks

    def play_trick(self, trick: dict[str, Any], where: str, number: int) -> int:
        """Play one trick (R12-R15 by the engine); check its leader and winner (R16)."""
        state = self.state
        leader = int(state.leader[0])
        if trick["leader"] != leader:
            why = "the playmaker leads the first trick" if number == 1 else f"the winner of trick {number - 1} leads"
            raise _fail(where, f"section 5: seat {leader} leads ({why}), not seat {trick['leader']}")
        for card in trick["cards"]:
            self.decide(card, f"{where}, seat {int(state.to_act[0])} played {_CARD_NAMES[card]}")
        winner = int(state.last_trick_winner[0])
        if trick["winner"] != winner:
            raise _fail(where, f"R16: seat {winner} wins {' '.join(_names(trick['cards']))} "
                               f"(led by seat {leader}), not seat {trick['winner']}")
        return winner


# ============================================================================ JSON Lines

def write_jsonl(records: Iterable[dict], path: str) -> int:
    """Write records one JSON object a line; returns how many. ``records`` may be a generator
    (:func:`simulate`): the lines go to a temporary file that replaces ``path`` only once the
    last record is written, so an interrupted run leaves ``path`` as it was."""
    count = 0
    with atomic_write(path) as file:
        for record in records:
            file.write(json.dumps(record, separators=(",", ":")) + "\n")
            count += 1
    return count


def _parse_lines(path: str) -> Iterator[tuple[int, Any]]:
    """(line number, parsed JSON or a RecordError) for each non-blank line."""
    with open(path, encoding="utf-8") as file:
        for number, line in enumerate(file, start=1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except (ValueError, RecursionError) as error:
                detail = f"{error.msg} (column {error.colno})" if isinstance(error, json.JSONDecodeError) else str(error)
                yield number, RecordError(f"line {number} is not valid JSON: {detail}")


def read_jsonl(path: str) -> list[dict]:
    """All records of a JSON Lines file; :class:`RecordError` names the first bad line."""
    records = []
    for number, value in _parse_lines(path):
        if isinstance(value, RecordError):
            raise value
        if not isinstance(value, dict):
            raise RecordError(f"line {number}: expected a JSON object, got {type(value).__name__}")
        records.append(value)
    return records


# ============================================================================ command line

def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m sergeant_major_env.records",
        description="Simulate 3-5-8 games into game records (RULES.md section 11) and check records by replay.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sim = commands.add_parser("simulate", help="play random games and write their records as JSON Lines",
                              description="Play N games with uniformly random legal decisions (game i uses "
                                          "per-game seed S+i), batched, and write their records as JSON Lines.")
    sim.add_argument("--games", type=int, required=True, metavar="N", help="number of games, at least 1")
    sim.add_argument("--seed", type=seed_argument, default=0, metavar="S",
                     help=f"seed of game 0 (game i plays S+i) and of the random decisions; {SEED_RULE} (default 0)")
    sim.add_argument("--out", required=True, metavar="FILE",
                     help="JSON Lines file to write (checked before the first game, written whole or not at all)")
    sim.add_argument("--option", "--options", dest="option", action="extend", nargs="+", default=[],
                     metavar="NAME=VALUE",
                     help=f"rule options (RULES.md section 9): {', '.join(Rules.names())} (default: the rule book's)")
    sim.add_argument("--batch-size", type=int, default=1024, metavar="B", help="games stepped together (default 1024)")
    sim.set_defaults(run=_simulate_command)
    check = commands.add_parser("check", help="replay every record of a JSON Lines file",
                                description="Replay every record; exit 0 only if all replay exactly, else print "
                                            "one line per bad record naming its first problem.")
    check.add_argument("file", metavar="FILE", help="JSON Lines file of game records")
    check.set_defaults(run=_check_command)
    parser.set_defaults(subparsers={"simulate": sim, "check": check})
    return parser


def _progress_bar(total: int):
    """A tqdm bar on stderr when tqdm is installed (an optional dependency), else None."""
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit="game", file=sys.stderr, disable=None)


def _simulate_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    try:
        rules = Rules.from_strings(args.option)
    except ValueError as error:
        message = str(error)
        if "known options" not in message:
            message += f"; known options: {', '.join(Rules.names())}"
        parser.error(message)
    if args.games < 1 or args.batch_size < 1:
        parser.error(f"--games and --batch-size must be at least 1, got --games {args.games} "
                     f"--batch-size {args.batch_size}")
    try:
        check_game_seeds(args.seed, args.games)
        check_writable(args.out, "--out file")
    except ValueError as error:
        parser.error(str(error))
    bar = _progress_bar(args.games)
    try:
        count = write_jsonl(simulate(args.games, args.seed, rules, batch_size=args.batch_size,
                                     on_finished=bar.update if bar else None), args.out)
    except OSError as error:
        print(f"error: cannot write {args.out}: {error.strerror or error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"interrupted: {args.out} not written", file=sys.stderr)
        return 130
    finally:
        if bar:
            bar.close()
    print(f"wrote {count} records to {args.out}", file=sys.stderr)
    return 0


def _check_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    total = bad = 0
    try:
        for line, value in _parse_lines(args.file):
            total += 1
            problem = str(value) if isinstance(value, RecordError) else _check_safely(value)
            if problem:
                bad += 1
                print(f"record {total} (line {line}): {problem}")
    except (OSError, UnicodeDecodeError) as error:
        print(f"error: cannot read {args.file}: {getattr(error, 'strerror', None) or error}", file=sys.stderr)
        return 2
    if total == 0:
        print(f"{args.file} holds no records")
        return 1
    if bad:
        print(f"{bad} of {total} records have problems")
        return 1
    print(f"{total} records OK")
    return 0


def _check_safely(record: Any) -> str | None:
    """check_record, with an engine failure reported as one line rather than a traceback."""
    try:
        return check_record(record)
    except Exception as error:  # noqa: BLE001 - a CLI prints one line per record, never a traceback
        return f"internal error while replaying ({type(error).__name__}: {error}); please report it"


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    return args.run(args, args.subparsers[args.command])


if __name__ == "__main__":
    sys.exit(main())
