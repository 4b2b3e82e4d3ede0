"""Game records (RULES.md section 11): recording, JSON Lines and replay checking.

A record is one JSON object per finished game (`"format": "sergeant-major-record/1"`):

```text
{"format", "rules": {section 9 options}, "seed", "players": [3 names], "first_dealer",
 "deals": [{"number", "dealer", "playmaker", "third",
            "hands": [[16 cards as dealt] x 3], "talon": [4 cards], "mode",
            "exchanges": [{"giver", "receiver", "given", "returned"}, ...],
            "discards": [4 cards], "tricks": [{"leader", "cards": [3], "winner"} x 16],
            "tricks_won": [3], "points": [3]}, ...],
 "scores": [3 totals]}
```

Cards are written as in R3 (`"QH"`), modes as `S C H D NT MIN`, seats as 0..2. Every
key is required (`"exchanges": []` included) and no other key is allowed. The record holds
the cards of every deal and every decision, so it replays without the seed; the seed is the
game's own per-game seed, which alone reproduces the cards of an engine game.

* [`Recorder`][] wraps [`engine.step`][] and turns each finished game of a batch into a
  record (`Recorder.finished`); [`simulate`][] plays random games with it.
* [`replay`][] re-runs a record through the engine and raises [`RecordError`][] naming
  the first inconsistency and the rule broken, e.g.
  `deal 3, trick 5, seat 1 played 7H: R13: seat 1 must follow suit S`. Legality is the
  engine's (`legal_bits` / `illegal_reason`) and so are winners and points: this module
  only compares the record with what the engine does. [`check_records`][] replays many
  records as one engine batch per rule set (one `engine.step` per decision for all of
  them), each record's problem worded as [`replay`][] words it alone.
* [`write_jsonl`][] / [`read_jsonl`][]: one record per line.

Command line (`sergeant-major records`, `sergeant_major_env.cli.records`; `--help` on each):

```text
sergeant-major records simulate --games N --seed S --out FILE [--option NAME=VALUE ...] [--overwrite]
sergeant-major records check FILE
sergeant-major records html FILE [--game N] --out PAGE.html [--overwrite]
```

`simulate` plays N games with uniformly random legal decisions (game i has seed S + i,
which must stay at most 2**63 - 1), batched, and writes their records; `--out` is checked
writable before the first game and written whole or not at all (a temporary file renamed at
the end), so an interrupted run leaves no truncated file; an existing file is replaced only
with `--overwrite`. `check` replays every record of a file, `CHECK_BATCH` records
at a time as one batch, and exits 0 only if all replay exactly, printing one line per bad
record otherwise. `html` writes record N as one self-contained page that steps through
the game ([`replay_page`][]), with the same `--out` rules.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from . import engine
from .cards import MODE_ACTION_OFFSET, MODE_NAMES, NUM_ACTIONS, NUM_CARDS, MINIMUM, card_name, parse_card
from .files import atomic_write, check_regular_file
from .limits import cut_middle, shorten
from .rules import Rules
from .seeding import check_seed_span

FORMAT = "sergeant-major-record/1"
RECORD_KEYS = ("format", "rules", "seed", "players", "first_dealer", "deals", "scores")
DEAL_KEYS = ("number", "dealer", "playmaker", "third", "hands", "talon", "mode", "exchanges",
             "discards", "tricks", "tricks_won", "points")
EXCHANGE_KEYS = ("giver", "receiver", "given", "returned")
TRICK_KEYS = ("leader", "cards", "winner")
DEFAULT_PLAYERS = ("random", "random", "random")
CHECK_BATCH = 1024  # records replayed together by ``sergeant-major records check``: one batch per rule set

_CARD_NAMES = tuple(card_name(c) for c in range(NUM_CARDS))
_CARD_IDS = {name: card for card, name in enumerate(_CARD_NAMES)}  # parse_card's answers, looked up


MAX_PLAYER_NAME = 200
"""Longest player name a record holds (an agent spec with its path fits; a 100 KB name would
be repeated in every caption of a replay page). [`fit_player_names`][] shortens longer
names when a game is recorded; [`parse_record`][] refuses them in a file."""

MAX_RECORD_CHARS = 1_000_000
"""Longest line of a records file read: a record of 18 deals is about 26,000 characters. A
file with a longer line is refused at that line, without reading the line whole ([`record_lines`][])."""


def fit_player_names(names: Sequence[Any]) -> list[str]:
    """Three player names as a record holds them: each at most [`MAX_PLAYER_NAME`][]
    characters (a longer one keeps its start and end around `...`); a one-line ValueError
    unless there are three strings."""
    names = list(names)
    if len(names) != 3 or not all(isinstance(name, str) for name in names):
        raise ValueError(f"players must be three names, got {shorten(names)}")
    return [cut_middle(name, MAX_PLAYER_NAME) for name in names]


class RecordError(ValueError):
    """A record that is malformed or does not replay; the message names the first problem."""


# ============================================================================ recording

# Columns of the per-step rows the Recorder keeps (int8 each): what the decision was and
# what the step did. Everything else of a record follows from these and the dealt cards.
_PHASE, _SEAT, _RECEIVER, _ACTION, _RETURNED, _WINNER = range(6)
_COLUMNS = 6


class Recorder:
    """Records the games of a batch while they are stepped; finished games become records.

    `rec = Recorder(state, players)`, then `rec.step(actions)` instead of
    `engine.step(state, actions)`. Each step stores one small row per game (decision
    kind, seat, exchange receiver, action, card returned, trick winner) in a growing array,
    and the cards of each deal as dealt. The per-game Python work (building the dict) is
    done once, when a game ends; its record is appended to `finished`. With
    `autoreset` the slot's next game is recorded as a new record.
    """

    def __init__(self, state: engine.State, players: Sequence[str] | None = None) -> None:
        players = fit_player_names(DEFAULT_PLAYERS if players is None else players)
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
        """[`engine.step`][], recording the decision and its outcome."""
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
        """Keep the new deal's cards: `hands` of a record are as dealt (section 11)."""
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


def record_of_actions(seed: int, rules: Rules, actions: Sequence[int], players: Sequence[str] | None = None) -> dict:
    """The record (RULES.md section 11) of the finished game of `seed` and `rules` whose
    decisions were `actions`, in order: replayed through a [`Recorder`][]. A view that steps
    its game through [`one_game.OneGame`][sergeant_major_env.one_game.OneGame] keeps only the
    actions and makes the record here when asked (recording live would cost about as much as
    the step itself)."""
    recorder = Recorder(engine.init([seed], rules), players)
    for action in actions:
        recorder.step(np.array([action]))
    return recorder.finished[0]


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
    """Yield the records of `games` games with uniformly random legal decisions.

    Game i has per-game seed `seed + i` ([`engine.game_seeds`][]), so its cards are
    reproducible alone; the decisions come from one `numpy` Generator seeded with
    `seed`. Games advance together, `batch_size` at a time, one `engine.step` per
    decision. Records come in game order; `on_finished(n)` reports n newly finished games.
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
    """`seed` by the one seed rule (`seeding`), and so is the seed of the
    last game, `seed + games - 1`: a one-line ValueError names the largest seed that fits."""
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
    if type(value) is list and len(value) == length:
        try:  # the common case, a list of card names, without wording a place for each card
            return [_CARD_IDS[v] for v in value]
        except (KeyError, TypeError):  # TypeError: an unhashable entry (a list, say)
            pass
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
        raise _fail("players", f"expected three names (strings), got {shorten(players)}")
    for seat, name in enumerate(players):
        if len(name) > MAX_PLAYER_NAME:
            raise _fail(f"players[{seat}]", f"a name is at most {MAX_PLAYER_NAME} characters, got {len(name):,}")
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
    """Re-run a record through the engine; raise [`RecordError`][] at the first inconsistency."""
    problem = _Replays([parse_record(record)]).run()[0]
    if problem is not None:
        raise RecordError(problem)


def check_record(record: Any) -> str | None:
    """The first problem of a record (structure or replay), or `None` if it replays exactly."""
    try:
        replay(record)
    except RecordError as error:
        return str(error)
    return None


def check_records(records: Sequence[Any]) -> list[str | None]:
    """[`check_record`][] of each record, the records replayed together: one engine batch per
    rule set, one [`engine.step`][] per decision for all of them. Each record's problem is
    word for word the one [`check_record`][] gives it alone."""
    problems: list[str | None] = [None] * len(records)
    by_rules: dict[Rules, list[tuple[int, dict[str, Any]]]] = {}
    for index, record in enumerate(records):
        try:
            game = parse_record(record)
        except RecordError as error:
            problems[index] = str(error)
            continue
        by_rules.setdefault(game["rules"], []).append((index, game))
    for members in by_rules.values():
        indices, games = zip(*members)
        for index, problem in zip(indices, _Replays(list(games)).run()):
            problems[index] = problem
    return problems


# Per-deal fields of a parsed record read into arrays (game, deal, ...) for the batch:
# name -> (shape of one deal's entry, how to read it from a parsed deal).
_DEAL_ARRAYS: dict[str, tuple[tuple[int, ...], Callable[[dict], Any]]] = {
    "dealer": ((), lambda deal: deal["dealer"]),
    "playmaker": ((), lambda deal: deal["playmaker"]),
    "third": ((), lambda deal: deal["third"]),
    "hands": ((3, 16), lambda deal: deal["hands"]),
    "talon": ((4,), lambda deal: deal["talon"]),
    "mode": ((), lambda deal: deal["mode"]),
    "discards": ((4,), lambda deal: deal["discards"]),
    "leaders": ((16,), lambda deal: [trick["leader"] for trick in deal["tricks"]]),
    "cards": ((16, 3), lambda deal: [trick["cards"] for trick in deal["tricks"]]),
    "winners": ((16,), lambda deal: [trick["winner"] for trick in deal["tricks"]]),
    "tricks_won": ((3,), lambda deal: deal["tricks_won"]),
    "points": ((3,), lambda deal: deal["points"]),
}


class _Replays:
    """Parsed records of one rule set against one engine batch, game g for record g.

    All games advance together, deal by deal and decision by decision, one
    [`engine.step`][] per decision for all of them: the engine decides, this compares.
    A game leaves the batch at its first problem, which is worded from the engine state of
    that game at that moment, as a batch of one would word it (a batch of one is what
    [`replay`][] runs). Checks are vector comparisons over the games still replaying; the
    Python wording of a problem runs only for the games that have one.
    """

    def __init__(self, games: list[dict[str, Any]]) -> None:
        self.games = games
        self.rules: Rules = games[0]["rules"]
        self.state = engine.init(np.array([game["seed"] for game in games], dtype=np.uint64), self.rules)
        first_dealer = np.array([game["first_dealer"] for game in games], dtype=np.int8)
        self.state.first_dealer[:] = first_dealer
        self.state.dealer[:] = first_dealer
        self.deal_counts = np.array([len(game["deals"]) for game in games])
        # A record gets no further than deal num_deals + 1: the game is over there (R4).
        self.deals_replayed = min(int(self.deal_counts.max()), self.rules.num_deals + 1)
        self.deal = _deal_arrays(games, self.deals_replayed)  # the records' deals as arrays [game, deal, ...]
        self.problems: list[str | None] = [None] * len(games)
        self.replaying = np.ones(len(games), dtype=bool)  # no problem found yet

    def run(self) -> list[str | None]:
        """The first problem of each record, `None` for those that replay exactly."""
        num_deals = self.rules.num_deals
        for number in range(1, self.deals_replayed + 1):
            self.finish(self.among(self.deal_counts == number - 1))
            over = self.playing(number)
            for g in over[self.state.phase[over] == engine.OVER]:
                self.fail(g, f"deal {number}", f"R4: a game of num_deals={num_deals} has {num_deals} deals, "
                                               f"the record has {self.deal_counts[g]}")
            self.play_deal(number)
        self.finish(self.among(self.deal_counts == self.deals_replayed))
        return self.problems

    # ------------------------------------------------------------------ bookkeeping

    def among(self, wanted: np.ndarray) -> np.ndarray:
        """The games still replaying where `wanted` holds (increasing game numbers)."""
        return np.flatnonzero(self.replaying & wanted)

    def playing(self, number: int) -> np.ndarray:
        """The games still replaying whose record has a deal `number`."""
        return self.among(self.deal_counts >= number)

    def fail(self, g: int, where: str, message: str) -> None:
        self.problems[g] = str(_fail(where, message))
        self.replaying[g] = False

    def record_deal(self, g: int, number: int) -> dict[str, Any]:
        return self.games[g]["deals"][number - 1]

    def decide(self, games: np.ndarray, actions: np.ndarray, where: Callable[[int], str]) -> np.ndarray:
        """Step one decision of each game; the engine refuses an illegal one and says why
        (`where(g)` places it). Returns the games stepped."""
        if games.size == 0:
            return games
        legal = engine.legal_bits(self.state, games)
        allowed = (legal >> actions.astype(np.uint64)) & np.uint64(1) != 0
        if not allowed.all():
            for g, action in zip(games[~allowed].tolist(), actions[~allowed].tolist()):
                self.fail(g, where(g), engine.illegal_reason(self.state, g, action))
            games, actions, legal = games[allowed], actions[allowed], legal[allowed]
        engine.step(self.state, actions, games=games, legal=legal)
        return games

    def finish(self, games: np.ndarray) -> None:
        """After a record's last deal: R4 (the game is over) and R25 (the totals)."""
        state, num_deals = self.state, self.rules.num_deals
        for g in games[state.phase[games] != engine.OVER]:
            self.fail(g, "", f"R4: the record has {self.deal_counts[g]} deal(s), a game of "
                             f"num_deals={num_deals} has {num_deals}")
        for g in games:
            scores = state.final_scores[g].tolist()
            if self.replaying[g] and self.games[g]["scores"] != scores:
                self.fail(g, "scores", f"R25: the totals of the deals' points are {scores}, "
                                       f"not {self.games[g]['scores']}")

    # ------------------------------------------------------------------ one deal

    def play_deal(self, number: int) -> None:
        k, state = number - 1, self.state
        self.check_roles(number)
        self.install_cards(number)
        games = self.playing(number)
        mode = self.deal["mode"][games, k]
        self.decide(games, MODE_ACTION_OFFSET + mode,
                    lambda g: f"deal {number}, seat {self.deal['playmaker'][g, k]} chose mode "
                              f"{MODE_NAMES[self.deal['mode'][g, k]]}")
        self.exchange(number)
        for i in range(4):
            games = self.playing(number)
            self.decide(games, self.deal["discards"][games, k, i],
                        lambda g: f"deal {number}, discard {i + 1}, seat {self.deal['playmaker'][g, k]} "
                                  f"discarded {_CARD_NAMES[self.deal['discards'][g, k, i]]}")
        for t in range(16):
            self.play_trick(number, t)
        games = self.playing(number)
        if not state.deal_ended[games].all():
            raise RuntimeError(f"deal {number}: the engine did not end the deal after 16 tricks")
        won = (self.deal["winners"][games, k, :, None] == np.arange(3)).sum(axis=1)  # the engine's, checked
        wrong = (won != self.deal["tricks_won"][games, k]).any(axis=1)
        for g, tricks in zip(games[wrong], won[wrong].tolist()):
            self.fail(g, f"deal {number}", f"R23: the tricks give tricks_won {tricks}, "
                                           f"not {self.record_deal(g, number)['tricks_won']}")
        games = self.playing(number)
        for g in games[(state.deal_points[games] != self.deal["points"][games, k]).any(axis=1)]:
            deal, points = self.record_deal(g, number), state.deal_points[g].tolist()
            rule = "R24" if deal["mode"] == MINIMUM else "R23"
            self.fail(g, f"deal {number}", f"{rule}: in mode {MODE_NAMES[deal['mode']]} the points are {points} "
                                           f"(tricks {deal['tricks_won']}, dealer seat {deal['dealer']}), "
                                           f"not {deal['points']}")

    def check_roles(self, number: int) -> None:
        """R4 (deal number, dealer rotation) and R5 (playmaker, third), from the engine's roles."""
        games, k, dealer = self.playing(number), number - 1, self.state.dealer
        wrong = ((self.deal["dealer"][games, k] != dealer[games])
                 | (self.deal["playmaker"][games, k] != (dealer[games] + engine.PLAYMAKER) % 3)
                 | (self.deal["third"][games, k] != (dealer[games] + engine.THIRD) % 3))
        numbered = np.array([self.record_deal(g, number)["number"] != number for g in games], dtype=bool)
        for g in games[wrong | numbered]:
            self.fail(g, f"deal {number}", self.roles_problem(g, number))

    def roles_problem(self, g: int, number: int) -> str:
        deal = self.record_deal(g, number)
        if deal["number"] != number:
            return f"section 11: deals are numbered 1, 2, ... in order; this one says {deal['number']}"
        dealer = int(self.state.dealer[g])
        if deal["dealer"] != dealer:
            why = "first_dealer" if number == 1 else f"left of deal {number - 1}'s dealer"
            return f"R4: the dealer is seat {dealer} ({why}), not seat {deal['dealer']}"
        seat_of = {int(role): seat for seat, role in enumerate(engine.roles(self.state)[g])}
        for role, key, why in ((engine.PLAYMAKER, "playmaker", "left of the dealer"),
                               (engine.THIRD, "third", "right of the dealer")):
            if deal[key] != seat_of[role]:
                return f"R5: the {key} is seat {seat_of[role]} ({why}), not seat {deal[key]}"
        raise AssertionError("roles_problem called for roles that agree")

    def install_cards(self, number: int) -> None:
        """R2, R10: the three hands and the talon are the 52 cards, each once."""
        games, k = self.playing(number), number - 1
        hands, talon = self.deal["hands"][games, k], self.deal["talon"][games, k]
        cards = np.concatenate([hands.reshape(len(games), 48), talon], axis=1)
        twice = (np.sort(cards, axis=1) != np.arange(NUM_CARDS)).any(axis=1)
        for g in games[twice]:
            self.fail(g, f"deal {number}", self.dealt_twice(self.record_deal(g, number)))
        engine.set_cards(self.state, games[~twice], hands[~twice], talon[~twice])

    @staticmethod
    def dealt_twice(deal: dict[str, Any]) -> str:
        seen: dict[int, str] = {}
        places = [(f"hand of seat {s}", hand) for s, hand in enumerate(deal["hands"])] + [("talon", deal["talon"])]
        for place, cards in places:
            for card in cards:
                if card in seen:
                    return f"R2, R10: {_CARD_NAMES[card]} is dealt twice ({seen[card]} and {place})"
                seen[card] = place
        raise AssertionError("dealt_twice called for 52 distinct cards")

    # ------------------------------------------------------------------ exchanges (R17-R21)

    def exchange(self, number: int) -> None:
        """Each record's exchanges of deal `number` in order, one round per exchange index."""
        state = self.state
        exchanges = {g: self.record_deal(g, number)["exchanges"] for g in self.playing(number).tolist()}
        listed = np.zeros(len(self.games), dtype=np.int64)  # exchanges in each record's deal
        listed[list(exchanges)] = [len(ex) for ex in exchanges.values()]
        for e in range(int(listed.max())):
            where = f"deal {number}, exchange {e + 1}"

            def column(games: np.ndarray, key: str) -> np.ndarray:
                return np.array([exchanges[g][e][key] for g in games.tolist()], dtype=np.int8)

            games = self.among(listed > e)
            if games.size == 0:  # the records left have no more exchanges in this deal
                break
            for g in games[state.phase[games] != engine.GIVE]:
                self.fail(g, where, self.no_more_exchanges(g, number))
            games = self.among(listed > e)
            giver, receiver = self.current_pair(games)
            for g in games[(column(games, "giver") != giver) | (column(games, "receiver") != receiver)]:
                self.fail(g, where, self.wrong_pair(g, exchanges[g][e]))
            games = self.among(listed > e)
            games = self.decide(games, column(games, "given"),
                                lambda g: f"{where}, seat {exchanges[g][e]['giver']} gave "
                                          f"{_CARD_NAMES[exchanges[g][e]['given']]}")
            choosing = state.phase[games] == engine.RETURN  # a trump was given: the receiver chooses (R21)
            free, forced = games[choosing], games[~choosing]
            self.decide(free, column(free, "returned"),
                        lambda g: f"{where}, seat {exchanges[g][e]['receiver']} returned "
                                  f"{_CARD_NAMES[exchanges[g][e]['returned']]}")
            for g in forced[state.last_returned[forced] != column(forced, "returned")]:
                self.fail(g, where, self.forced_return(g, exchanges[g][e]))
        games = self.playing(number)
        for g in games[(state.phase[games] == engine.GIVE) | (state.phase[games] == engine.RETURN)]:
            owed = ", ".join(f"seat {giver} -> seat {receiver}: {n}" for giver, receiver, n in self.pairs(g, owed=True) if n)
            self.fail(g, f"deal {number}, exchange {listed[g] + 1}",
                      f"R19: the record stops after {listed[g]} exchange(s), but cards are still due ({owed})")

    def current_pair(self, games: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The engine's (giver, receiver) exchanging now in each game."""
        pair = self.state.exchange_pair[games]
        return self.state.exchange_giver[games, pair], self.state.exchange_receiver[games, pair]

    def pairs(self, g: int, owed: bool = False) -> list[tuple[int, int, int]]:
        """The engine's exchange pairs of this deal in R20 order: (giver, receiver, cards due or still owed)."""
        state, result = self.state, []
        for p in range(2):
            giver, receiver, due = (int(a[g, p]) for a in (state.exchange_giver, state.exchange_receiver,
                                                             state.exchange_count))
            if giver >= 0:
                result.append((giver, receiver, due - int(state.exchange_done[g, giver, receiver]) if owed else due))
        return result

    def forced_return(self, g: int, ex: dict[str, int]) -> str:
        given, returned = _CARD_NAMES[ex["given"]], _CARD_NAMES[ex["returned"]]
        forced = _CARD_NAMES[self.state.last_returned[g]]
        return (f"R21: seat {ex['receiver']} received {given}, not a trump, and must return "
                f"{forced} (the highest {given[1]} it holds), not {returned}")

    def no_more_exchanges(self, g: int, number: int) -> str:
        """Why the engine expects no (further) exchange: the wording only, the engine decided."""
        if number == 1:
            return "R17: there are no exchanges in the first deal"
        mode = self.record_deal(g, number)["mode"]
        if mode >= 4:
            return f"R17: there are no exchanges in {MODE_NAMES[mode]} deals"
        if not self.rules.exchanges:
            return "R17: exchanges are off (rule option exchanges=false)"
        points = self.state.prev_points[g].tolist()
        due = self.pairs(g)
        if not due:
            return f"R18: nobody scored in the previous deal (points {points}), so there is no exchange"
        listed = ", ".join(f"seat {giver} -> seat {receiver}: {n}" for giver, receiver, n in due)
        return f"R19: all cards due after the previous deal's points {points} were exchanged ({listed}); this one is extra"

    def wrong_pair(self, g: int, ex: dict[str, int]) -> str:
        pair = (ex["giver"], ex["receiver"])
        giver, receiver = (int(seat[0]) for seat in self.current_pair(np.array([g])))
        planned = [(giver_, receiver_) for giver_, receiver_, _ in self.pairs(g)]
        current = planned.index((giver, receiver))
        expected = f"seat {giver} -> seat {receiver}"
        if pair in planned[current + 1:]:
            return (f"R20: {expected} exchanges first (the giver with the larger target first, then its "
                    f"receiver with the larger target; a pair completes all its cards first), not seat "
                    f"{pair[0]} -> seat {pair[1]}")
        if pair in planned[:current]:
            return f"R19: seat {pair[0]} -> seat {pair[1]} already exchanged all its cards; next is {expected}"
        points = self.state.prev_points[g].tolist()
        return (f"R18: seat {pair[0]} -> seat {pair[1]} is not an exchange after the previous deal's points "
                f"{points} (givers scored > 0, receivers < 0); next is {expected}")

    # ------------------------------------------------------------------ tricks

    def play_trick(self, number: int, t: int) -> None:
        """Play trick t + 1 of every game (R12-R15 by the engine); check its leader and winner (R16)."""
        state, k, where = self.state, number - 1, f"deal {number}, trick {t + 1}"
        games = self.playing(number)
        for g in games[state.leader[games] != self.deal["leaders"][games, k, t]]:
            why = "the playmaker leads the first trick" if t == 0 else f"the winner of trick {t} leads"
            self.fail(g, where, f"section 5: seat {state.leader[g]} leads ({why}), not seat "
                                f"{self.deal['leaders'][g, k, t]}")
        for p in range(3):
            games = self.playing(number)
            self.decide(games, self.deal["cards"][games, k, t, p],
                        lambda g: f"{where}, seat {state.to_act[g]} played {_CARD_NAMES[self.deal['cards'][g, k, t, p]]}")
        games = self.playing(number)
        for g in games[state.last_trick_winner[games] != self.deal["winners"][games, k, t]]:
            trick = self.record_deal(g, number)["tricks"][t]
            self.fail(g, where, f"R16: seat {state.last_trick_winner[g]} wins {' '.join(_names(trick['cards']))} "
                                f"(led by seat {trick['leader']}), not seat {trick['winner']}")


def _deal_arrays(games: list[dict[str, Any]], count: int) -> dict[str, np.ndarray]:
    """The fields of `_DEAL_ARRAYS` of each record's first `count` deals as arrays
    [game, deal, ...] (zeros past a record's last deal)."""
    arrays = {name: np.zeros((len(games), count, *shape), dtype=np.int8)
              for name, (shape, _) in _DEAL_ARRAYS.items()}
    for g, game in enumerate(games):
        deals = game["deals"][:count]
        if deals:
            for name, (_, read) in _DEAL_ARRAYS.items():
                arrays[name][g, : len(deals)] = [read(deal) for deal in deals]
    return arrays


# ============================================================================ JSON Lines

def write_jsonl(records: Iterable[dict], path: str) -> int:
    """Write records one JSON object a line; returns how many. `records` may be a generator
    ([`simulate`][]): the lines go to a temporary file that replaces `path` only once the
    last record is written, so an interrupted run leaves `path` as it was."""
    count = 0
    with atomic_write(path) as file:
        for record in records:
            file.write(json.dumps(record, separators=(",", ":")) + "\n")
            count += 1
    return count


def record_lines(path: str) -> Iterator[tuple[int, str]]:
    """(line number, text) of each non-blank line: each is one record. What is not a records
    file is refused with one ValueError line before it is read whole: a path that is not a
    regular file (a folder, a device such as `/dev/zero`, a pipe), and a file at its first line
    longer than [`MAX_RECORD_CHARS`][] (a RecordError; at most that many characters are read
    of it). A file that cannot be opened is the OSError."""
    check_regular_file(path, "records file")
    with open(path, encoding="utf-8") as file:
        number = 0
        while line := file.readline(MAX_RECORD_CHARS + 1):
            number += 1
            if len(line) > MAX_RECORD_CHARS:
                raise RecordError(f"{cut_middle(str(path), 80)} line {number}: longer than {MAX_RECORD_CHARS:,} "
                                  f"characters (a game record of 18 deals is about 26,000); not a game-record file")
            if line.strip():
                yield number, line


def decode_line(number: int, line: str) -> Any:
    """The JSON value of a line, or a RecordError naming the line."""
    try:
        return json.loads(line)
    except (ValueError, RecursionError) as error:
        detail = f"{error.msg} (column {error.colno})" if isinstance(error, json.JSONDecodeError) else str(error)
        return RecordError(f"line {number} is not valid JSON: {detail}")


def parse_lines(path: str) -> Iterator[tuple[int, Any]]:
    """(line number, parsed JSON or a RecordError) for each non-blank line; a ValueError for a
    file that is not a records file ([`record_lines`][])."""
    for number, line in record_lines(path):
        yield number, decode_line(number, line)


def read_jsonl(path: str) -> list[dict]:
    """All records of a JSON Lines file; [`RecordError`][] names the first bad line."""
    records = []
    for number, value in parse_lines(path):
        if isinstance(value, RecordError):
            raise value
        if not isinstance(value, dict):
            raise RecordError(f"line {number}: expected a JSON object, got {type(value).__name__}")
        records.append(value)
    return records
