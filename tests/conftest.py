"""Shared helpers for the engine's tests.

RULES.md (``/work/shared/RULES.md`` in the project's shared folder, the rule book) is the
authority: the reference functions below (``reference_*``) are written from its text,
independently of the engine, and the tests compare the engine against them.

Conventions used throughout the tests:

* cards are written in R3 notation: ``"QH"``; :func:`cards` also reads a hand suit by suit,
  ``"S:AKQ H:3 C:2345 D:"``;
* a *move* is a card name or a mode name (``"S" "C" "H" "D" "NT" "MIN"``, section 10);
* :func:`new_deal` builds a one-game state at the start of a deal with chosen cards;
* :func:`random_play` drives a batch of games with uniformly random legal actions.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import importlib.util
import re
import signal
from typing import Iterator, Sequence

import numpy as np
import pytest
from hypothesis import strategies as st

from sergeant_major_env import Rules, engine
from sergeant_major_env.cards import (
    MODE_ACTION_OFFSET,
    MODE_NAMES,
    NUM_ACTIONS,
    action_name,
    card_list,
    card_name,
    parse_card,
)
from sergeant_major_env.engine import DISCARD, GIVE, MODE, OVER, PLAY, RETURN

ALL_CARDS = (1 << 52) - 1
CARD_SUIT = np.arange(52) // 13
CARD_RANK = np.arange(52) % 13
# Roles (R5): the seat of role r is (dealer + r) % 3.
DEALER_ROLE, PLAYMAKER_ROLE, THIRD_ROLE = 0, 1, 2
# R23 / R24 targets by role (dealer, playmaker, third), written from the rule book.
TRUMP_TARGETS = {DEALER_ROLE: 3, PLAYMAKER_ROLE: 8, THIRD_ROLE: 5}
MIN_TARGETS = {DEALER_ROLE: 8, PLAYMAKER_ROLE: 3, THIRD_ROLE: 5}
NT, MIN = 4, 5

# Every field of State that holds cards (as ids or as uint64 sets).
CARD_ID_FIELDS = ("dealt", "talon_cards", "trick", "past_tricks", "last_trick", "last_returned", "exchange_trump")
CARD_SET_FIELDS = ("hands", "first_six", "talon", "discards", "given", "received", "played")


# ----------------------------------------------------------------------------- optional packages

EXTRA_OF = {
    "torch": "train", "stable_baselines3": "train", "sb3_contrib": "train", "safetensors": "train",
    "matplotlib": "train", "tqdm": "train", "tensorboard": "train", "cloudpickle": "train",
    "pyspiel": "openspiel", "open_spiel": "openspiel", "scipy": "openspiel",
    "ray": "rllib",
    "torchrl": "interop", "tianshou": "interop",
    "mkdocs": "docs", "material": "docs", "mkdocstrings": "docs", "mkdocstrings_handlers": "docs",
    "yaml": "docs",
    "playwright": "test", "hypothesis": "test",
}
"""The extra of pyproject.toml that brings each optional package (its import name); scipy comes
with open_spiel, PyYAML with mkdocs, cloudpickle with stable-baselines3. The one place a test
finds which extra it needs."""
_NO_MODULE = re.compile(r"No module named '([\w.]+)'|\b([\w.]+) is not installed")
"""How Python and the package's own messages name a module that is not installed."""


def extra_reason(module: str) -> str:
    """The one line a test that needs ``module`` skips with where it is missing."""
    extra = EXTRA_OF[module.split(".")[0]]
    return f"needs the {extra} extra (pip install -e '.[{extra}]')"


def needs(module: str):
    """``module`` imported, or the test (or the test module) skipped naming the extra that brings it."""
    return pytest.importorskip(module, reason=extra_reason(module))


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module.split(".")[0]) is not None


def missing_extra(modules) -> str | None:
    """The skip line of the first of ``modules`` that an extra brings and is not installed, or None."""
    for module in modules:
        if module.split(".")[0] in EXTRA_OF and not _installed(module):
            return extra_reason(module)
    return None


def imported_modules(code: str) -> list[str]:
    """The modules a piece of Python source imports (``import a.b``, ``from a.b import c``), in order."""
    modules = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            modules += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules.append(node.module)
    return modules


SLOW_EXAMPLE_PACKAGES = ("torch", "stable_baselines3", "sb3_contrib", "torchrl", "tianshou", "ray", "playwright")
"""Packages whose import alone takes seconds in a fresh interpreter (torch and what is built on
it, Ray, a browser): an example (a docs or README block, run in a subprocess) that imports one
is marked ``slow``, so ``pytest -m "not slow"`` stays a few minutes; the whole suite runs it."""


def example_param(*values, code: str, id: str):
    """``pytest.param(*values, id=id)``, marked ``slow`` when ``code`` imports a package of
    :data:`SLOW_EXAMPLE_PACKAGES`."""
    slow = any(module.split(".")[0] in SLOW_EXAMPLE_PACKAGES for module in imported_modules(code))
    return pytest.param(*values, id=id, marks=[pytest.mark.slow] if slow else [])


def missing_extra_of_code(code: str, stderr: str = "") -> str | None:
    """The skip line of an example (a docs or README block) that needs an extra that is not
    installed: one its code imports, or (``stderr`` of its run) one a module it uses imported
    (an agent by name, an env built on stable-baselines3)."""
    named = [one or other for one, other in _NO_MODULE.findall(stderr)]
    return missing_extra([*imported_modules(code), *named])


# ----------------------------------------------------------------------------- time

@contextlib.contextmanager
def within(seconds: int) -> Iterator[None]:
    """Fails the test with a TimeoutError when the block runs longer than ``seconds``: the guard
    of a test of code that once hung (SIGALRM; the main thread, where pytest runs a test)."""
    def expire(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# ----------------------------------------------------------------------------- child processes

def default_stop_signals() -> None:
    """``preexec_fn`` of a child process that a test stops with a signal: SIGINT, SIGTERM and
    SIGHUP at their default action in the child, whatever this process has. A test suite run in
    the background (``nohup python -m pytest ... &``) has SIGINT and SIGHUP ignored, children
    inherit that, and an ignored signal stays ignored in a command (as it should), so without
    this the child would not stop."""
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)


# ----------------------------------------------------------------------------- cards

def cards(text: str) -> list[int]:
    """Card ids from ``"AS KS 3H"`` or suit by suit ``"S:AKQ H:3"`` (order kept)."""
    ids: list[int] = []
    for token in text.split():
        if ":" in token:
            suit, ranks = token.split(":")
            ids += [parse_card(rank + suit) for rank in ranks]
        else:
            ids.append(parse_card(token))
    return ids


def to_bits(ids) -> int:
    out = 0
    for c in ids:
        out |= 1 << int(c)
    return out


def names(bits_or_ids) -> set[str]:
    """Card names of a set given as an int/uint64 bit set or as an iterable of ids."""
    if isinstance(bits_or_ids, (int, np.integer)):
        return {card_name(c) for c in card_list(int(bits_or_ids))}
    return {card_name(int(c)) for c in bits_or_ids}


def popcount(bits) -> int:
    return bin(int(bits)).count("1")


def bool_cards(bits: np.ndarray) -> np.ndarray:
    """uint64[...] sets -> bool[..., 52], independent of the engine's own helpers."""
    bits = np.asarray(bits, dtype=np.uint64)
    return ((bits[..., None] >> np.arange(52, dtype=np.uint64)) & np.uint64(1)).astype(bool)


def highest_of_suit(bits: int, suit: int) -> int:
    """The highest card id of ``suit`` in the set, -1 if none (R2: 2 lowest, A highest)."""
    in_suit = [c for c in card_list(int(bits)) if c // 13 == suit]
    return max(in_suit, key=lambda c: c % 13) if in_suit else -1


# ----------------------------------------------------------------------------- moves

def action_of(move: str) -> int:
    """Action id of a move: a mode name (section 10: 52 + mode) or a card (R3)."""
    if move in MODE_NAMES:
        return MODE_ACTION_OFFSET + MODE_NAMES.index(move)
    return parse_card(move)


def act(state: engine.State, *moves: str) -> engine.State:
    """Apply moves one by one to game 0 of a one-game state."""
    assert state.batch_size == 1
    for move in moves:
        engine.step(state, np.array([action_of(move)]))
    return state


def legal(state: engine.State, game: int = 0) -> set[str]:
    """Names of the legal actions of a game: cards ``'QH'`` and modes ``'mode NT'``."""
    mask = engine.legal_action_mask(state)[game]
    return {action_name(a) for a in np.flatnonzero(mask)}


def held(state: engine.State, seat: int, game: int = 0) -> set[str]:
    return names(state.hands[game, seat])


def seat_of(state: engine.State, role: int, game: int = 0) -> int:
    return (int(state.dealer[game]) + role) % 3


# ----------------------------------------------------------------------------- situations

def new_deal(
    hands: Sequence[str | None],
    talon: str | None = None,
    *,
    dealer: int = 0,
    deal: int = 0,
    prev_points: Sequence[int] = (0, 0, 0),
    scores: Sequence[int] | None = None,
    modes_used: Sequence[int] = (0, 0, 0),
    rules: Rules | None = None,
    seed: int = 0,
) -> engine.State:
    """A one-game state at the start of a deal (mode choice) with chosen cards.

    ``hands[seat]`` lists the seat's 16 cards in dealing order (R10), or ``None``: the cards
    nobody named fill the ``None`` hands, then the talon if it is ``None``, in id order.
    ``deal`` is the 0-based deal index; ``prev_points`` are by seat (R17, R18).
    The cards are installed with the engine's own dealing step, :func:`engine.set_cards`.
    """
    named = [cards(h) if h is not None else None for h in hands]
    talon_ids = cards(talon) if talon is not None else None
    used = [c for h in named if h is not None for c in h] + (talon_ids or [])
    assert len(used) == len(set(used)), f"a card is named twice: {sorted(names(used))}"
    rest = [c for c in range(52) if c not in set(used)]
    for seat in range(3):
        if named[seat] is None:
            named[seat], rest = rest[:16], rest[16:]
    if talon_ids is None:
        talon_ids, rest = rest[:4], rest[4:]
    assert not rest, f"cards left over: {sorted(names(rest))}"
    assert all(len(h) == 16 for h in named) and len(talon_ids) == 4

    state = engine.init([seed], rules)
    state.dealer[:] = dealer
    state.first_dealer[:] = (dealer - deal) % 3
    state.deal[:] = deal
    state.prev_points[0] = prev_points
    state.scores[0] = scores if scores is not None else (0, 0, 0)
    state.modes_used[0] = modes_used
    dealt = np.array([named], dtype=np.int8)
    engine.set_cards(state, np.array([0]), dealt, np.array([talon_ids], dtype=np.int8))
    return state


def discard_talon(state: engine.State) -> engine.State:
    """Section 5 step 5: the playmaker discards the four talon cards (four decisions)."""
    assert int(state.phase[0]) == DISCARD
    return act(state, *[card_name(c) for c in state.talon_cards[0]])


def finish_deal_with_tricks(state: engine.State, tricks_by_seat: Sequence[int], rng=None) -> engine.State:
    """Play the current deal of a one-game state to its end with random legal cards, so that
    the seats end with ``tricks_by_seat`` tricks: ``tricks_won`` is set just before the last
    card of the deal (a unit situation), the last trick's winner computed with R16."""
    assert sum(tricks_by_seat) == 16
    rng = rng or np.random.default_rng(0)
    deal = int(state.deal[0])
    while True:
        assert int(state.deal[0]) == deal and int(state.phase[0]) != OVER
        if int(state.phase[0]) == PLAY and int(state.tricks_won[0].sum()) == 15 and int((state.trick[0] >= 0).sum()) == 2:
            hand = int(state.hands[0, state.to_act[0]])
            last = card_list(hand)
            assert len(last) == 1
            trick = np.array([[*state.trick[0, :2], last[0]]])
            winner = (int(state.leader[0]) + reference_trick_winner(trick, state.mode[:1])[0]) % 3
            wanted = np.array(tricks_by_seat, dtype=np.int8)
            wanted[winner] -= 1
            assert wanted.min() >= 0, "the last trick's winner cannot reach the wanted counts"
            state.tricks_won[0] = wanted
            engine.step(state, np.array([last[0]]))
            return state
        engine.step(state, random_actions(state, rng))


# ----------------------------------------------------------------------------- random play

def random_actions(state: engine.State, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per game (0, ignored, for finished games)."""
    mask = engine.legal_action_mask(state)
    return np.where(mask, rng.random(mask.shape), -1.0).argmax(axis=1)


def random_play(
    state: engine.State,
    rng: np.random.Generator,
    *,
    autoreset: bool = False,
    max_steps: int = 100_000,
) -> Iterator[tuple[engine.State, np.ndarray, engine.State]]:
    """Step random legal actions until every game is over (or ``max_steps``), yielding
    ``(before, actions, state)`` for each step: ``before`` is a copy, ``state`` the live
    (mutated) state after the step."""
    for _ in range(max_steps):
        if not autoreset and (state.phase == OVER).all():
            return
        before = state.copy()
        actions = random_actions(state, rng)
        engine.step(state, actions, autoreset=autoreset)
        yield before, actions, state


def every_kth_state(state: engine.State, rng: np.random.Generator, k: int) -> Iterator[tuple[int, engine.State]]:
    """``(step, state)`` after every ``k``-th step of :func:`random_play` (steps 0, k, 2k ...):
    positions of every phase, fewer of them."""
    for step, (_, _, live) in enumerate(random_play(state, rng)):
        if step % k == 0:
            yield step, live


def play_to(state: engine.State, rng: np.random.Generator, done, max_steps: int = 5000) -> engine.State:
    """Random legal play of a one-game state until ``done(state)`` holds."""
    for _ in range(max_steps):
        if done(state):
            return state
        assert int(state.phase[0]) != OVER, "the game ended before the situation was reached"
        engine.step(state, random_actions(state, rng))
    raise AssertionError("situation not reached")


rules_strategy = st.builds(
    Rules,
    num_deals=st.integers(1, 18),
    exchanges=st.booleans(),
    must_overtake=st.booleans(),
    must_overtrump=st.booleans(),
    dealer_builds_talon=st.booleans(),
)
seed_strategy = st.integers(0, 2**40)


# ----------------------------------------------------------------------------- comparisons

def assert_states_equal(a: engine.State, b: engine.State, ignore: Sequence[str] = (), games_a=None, games_b=None) -> None:
    """Every array of two states equal (optionally only some games of each)."""
    assert a.rules == b.rules
    for name, value in a.arrays().items():
        if name in ignore:
            continue
        left = value if games_a is None else value[games_a]
        right = getattr(b, name) if games_b is None else getattr(b, name)[games_b]
        if not np.array_equal(left, right):
            np.testing.assert_array_equal(left, right, err_msg=f"State.{name} differs")


def relabel_cards(state: engine.State, game: int, mapping: dict[int, int]) -> None:
    """Rename cards (a permutation given as ``{old: new}``) in every card field of a game.

    Applied to cards a seat has not seen, this gives a state that the seat cannot tell from
    the original (the tests of information use it)."""
    assert sorted(mapping) == sorted(mapping.values()), "mapping must be a permutation"
    lookup = np.arange(52)
    for old, new in mapping.items():
        lookup[old] = new
    for name in CARD_ID_FIELDS:
        if not hasattr(state, name):
            continue
        ids = np.asarray(getattr(state, name)[game])
        getattr(state, name)[game] = np.where(ids >= 0, lookup[np.maximum(ids, 0)], ids).astype(ids.dtype)
    for name in CARD_SET_FIELDS:
        if not hasattr(state, name):
            continue
        row = getattr(state, name)[game]
        flat = np.atleast_1d(row)
        new_sets = [to_bits(lookup[c] for c in card_list(int(x))) for x in flat]
        getattr(state, name)[game] = np.array(new_sets, dtype=np.uint64).reshape(np.shape(row))


# ----------------------------------------------------------------------------- references
# Written from RULES.md only; the engine is never called here.

def reference_plays(hand: np.ndarray, trick: np.ndarray, mode: np.ndarray, rules: Rules) -> np.ndarray:
    """R12-R15: bool[n, 52] cards a player may play. ``hand`` bool[n, 52], ``trick`` int[n, 3]
    by position (-1 empty), ``mode`` 0..3 trumps S C H D, 4 NT, 5 MIN."""
    hand = np.asarray(hand, dtype=bool)
    trick = np.asarray(trick)
    led = trick[:, 0]
    leading = led < 0
    led_suit = np.where(leading, -1, led // 13)
    trump = np.where(np.asarray(mode) < 4, mode, -1)
    of_led = CARD_SUIT[None, :] == led_suit[:, None]
    of_trump = (CARD_SUIT[None, :] == trump[:, None]) & (trump[:, None] >= 0)
    can_follow = (hand & of_led).any(axis=1)
    holds_trump = (hand & of_trump).any(axis=1)
    # R13 follow suit; R14 else a trump (any trump); else any card.
    allowed = np.where(can_follow[:, None], hand & of_led,
                       np.where(holds_trump[:, None], hand & of_trump, hand))
    on_table = trick >= 0
    table_suit = np.where(on_table, trick // 13, -2)
    table_rank = np.where(on_table, trick % 13, -1)
    table_trumps = on_table & (table_suit == trump[:, None]) & (trump[:, None] >= 0)
    if rules.must_overtake:
        # Following suit, beat the best card of the led suit when possible, unless the trick
        # is already trumped (a trump played to a non-trump lead). Applies when trumps lead.
        trumped = (table_trumps & (led_suit != trump)[:, None]).any(axis=1)
        best = np.where(table_suit == led_suit[:, None], table_rank, -1).max(axis=1)
        higher = hand & of_led & (CARD_RANK[None, :] > best[:, None])
        apply = can_follow & ~trumped & higher.any(axis=1)
        allowed = np.where(apply[:, None], higher, allowed)
    if rules.must_overtrump:
        # Trumping (cannot follow, plays a trump), beat a trump already on the table if possible.
        best_trump = np.where(table_trumps, table_rank, -1).max(axis=1)
        higher = hand & of_trump & (CARD_RANK[None, :] > best_trump[:, None])
        apply = ~can_follow & holds_trump & (best_trump >= 0) & higher.any(axis=1)
        allowed = np.where(apply[:, None], higher, allowed)
    return np.where(leading[:, None], hand, allowed)  # R12: the leader plays any card


def reference_legal_mask(state: engine.State) -> np.ndarray:
    """bool[B, 58]: the legal actions of section 10 in each game, from the rule book."""
    n = state.batch_size
    rows = np.arange(n)
    seat = np.maximum(state.to_act, 0)
    hand = bool_cards(state.hands[rows, seat])
    mask = np.zeros((n, NUM_ACTIONS), dtype=bool)
    choosing = state.phase == MODE
    used = state.modes_used[rows, seat].astype(np.int64)
    mask[choosing, MODE_ACTION_OFFSET:] = ((used[choosing, None] >> np.arange(6)) & 1) == 0  # R8
    any_card = np.isin(state.phase, (GIVE, RETURN, DISCARD))  # R21, section 5
    mask[any_card, :52] = hand[any_card]
    playing = state.phase == PLAY
    mask[playing, :52] = reference_plays(hand[playing], state.trick[playing], state.mode[playing], state.rules)
    return mask


def reference_trick_winner(trick: np.ndarray, mode: np.ndarray) -> np.ndarray:
    """R16: position (0 = leader) of the highest trump, else of the highest card of the led suit."""
    out = []
    for cards_, m in zip(np.asarray(trick).tolist(), np.asarray(mode).tolist()):
        trumps = [i for i, c in enumerate(cards_) if m < 4 and c // 13 == m]
        candidates = trumps or [i for i, c in enumerate(cards_) if c // 13 == cards_[0] // 13]
        out.append(max(candidates, key=lambda i: cards_[i] % 13))
    return np.array(out, dtype=np.int64)


def reference_points(tricks_by_seat: Sequence[int], dealer: int, mode: int) -> list[int]:
    """R23, R24: P = W - Z (trump, NT) or Z - W (MIN), targets by role."""
    points = []
    for seat in range(3):
        role = (seat - dealer) % 3
        if mode == MIN:
            points.append(MIN_TARGETS[role] - tricks_by_seat[seat])
        else:
            points.append(tricks_by_seat[seat] - TRUMP_TARGETS[role])
    return points


def reference_exchanges(prev_points: Sequence[int], dealer: int) -> list[tuple[int, int, int]]:
    """R18-R20: ``[(giver, receiver, cards), ...]`` in serving order, for a trump deal with
    this dealer after a deal whose points by seat were ``prev_points``."""
    prev_points = [int(p) for p in prev_points]
    target = {seat: TRUMP_TARGETS[(seat - dealer) % 3] for seat in range(3)}
    givers = sorted((s for s in range(3) if prev_points[s] > 0), key=lambda s: -target[s])
    receivers = sorted((s for s in range(3) if prev_points[s] < 0), key=lambda s: -target[s])
    pairs = []
    for giver in givers:
        for receiver in receivers:
            if len(givers) == 1 and len(receivers) == 1:
                n = prev_points[giver]            # one giver, one receiver
            elif len(givers) == 1:
                n = -prev_points[receiver]        # one giver, two receivers
            else:
                n = prev_points[giver]            # two givers, one receiver
            pairs.append((giver, receiver, n))
    return pairs


@dataclasses.dataclass
class ExchangeTracker:
    """Follows the exchanges of every game of a batch step by step against R17-R22.

    Call :meth:`check` with each ``(before, actions, after)``; it asserts who acts, what moves
    where, the forced returns and the order, and that the exchange phase ends when (and only
    when) the planned cards have all been exchanged. The counters show how much was exercised."""

    plans: dict = dataclasses.field(default_factory=dict)
    cards_exchanged: int = 0
    deals_with_exchanges: int = 0
    trump_gives: int = 0

    def check(self, before: engine.State, actions: np.ndarray, after: engine.State) -> None:
        rules = before.rules
        for g in np.flatnonzero(np.isin(before.phase, (MODE, GIVE, RETURN))):
            phase, action = int(before.phase[g]), int(actions[g])
            if phase == MODE:
                mode = action - MODE_ACTION_OFFSET
                exchanging = rules.exchanges and mode < 4 and int(before.deal[g]) > 0  # R17
                plan = reference_exchanges(before.prev_points[g], int(before.dealer[g])) if exchanging else []
                self.plans[g] = [(giver, receiver) for giver, receiver, n in plan for _ in range(n)]
                if self.plans[g]:
                    self.deals_with_exchanges += 1
                    assert int(after.phase[g]) == GIVE and int(after.to_act[g]) == self.plans[g][0][0]
                else:
                    assert int(after.phase[g]) == DISCARD, "no exchange was due (R17, R18)"
                    assert int(after.to_act[g]) == seat_of(after, PLAYMAKER_ROLE, g)
                continue
            giver, receiver = self.plans[g][0]
            seat = int(before.to_act[g])
            mode = int(before.mode[g])
            expected = [int(h) for h in before.hands[g]]
            if phase == GIVE:
                assert seat == giver, f"R20: seat {giver} should give now, seat {seat} was asked"
                assert expected[giver] >> action & 1
                expected[giver] &= ~(1 << action)
                expected[receiver] |= 1 << action
                if action // 13 == mode:  # R21: a trump was given, the receiver chooses
                    self.trump_gives += 1
                    assert int(after.phase[g]) == RETURN and int(after.to_act[g]) == receiver
                    assert [int(h) for h in after.hands[g]] == expected
                    continue
                returned = highest_of_suit(expected[receiver], action // 13)  # R21 forced return
                assert int(after.last_returned[g]) == returned, (
                    f"R21: {names(expected[receiver])} received {card_name(action)}, must return "
                    f"{card_name(returned)}, returned {after.last_returned[g]}")
            else:
                assert seat == receiver, "R21: the receiver returns after a trump"
                returned = action
            expected[receiver] &= ~(1 << returned)
            expected[giver] |= 1 << returned
            self.cards_exchanged += 1
            self.plans[g].pop(0)
            playmaker = seat_of(after, PLAYMAKER_ROLE, g)
            if self.plans[g]:
                assert int(after.phase[g]) == GIVE and int(after.to_act[g]) == self.plans[g][0][0], "R20 order"
                sizes = [16, 16, 16]  # R22
            else:
                assert int(after.phase[g]) == DISCARD, "all R19 cards exchanged: the talon comes next"
                assert int(after.to_act[g]) == playmaker
                expected[playmaker] |= int(before.talon[g])
                sizes = [20 if s == playmaker else 16 for s in range(3)]
            assert [int(h) for h in after.hands[g]] == expected
            assert [popcount(h) for h in after.hands[g]] == sizes


def tiny_maskable_ppo(obs_size: int, n_actions: int):
    """A MaskablePPO model (8 hidden units) of an env with these spaces and nothing else: for tests
    of model files and their spaces. Skips the test where the train extra is not installed."""
    gymnasium = pytest.importorskip("gymnasium")
    contrib = needs("sb3_contrib")

    class Blank(gymnasium.Env):
        observation_space = gymnasium.spaces.Box(-np.inf, np.inf, (obs_size,), np.float32)
        action_space = gymnasium.spaces.Discrete(n_actions)

        def reset(self, *, seed=None, options=None):
            return np.zeros(obs_size, np.float32), {}

        def step(self, action):
            return np.zeros(obs_size, np.float32), 0.0, True, False, {}

        def action_masks(self):
            return np.ones(n_actions, dtype=bool)

    return contrib.MaskablePPO("MlpPolicy", Blank(), n_steps=8, batch_size=8, seed=0, device="cpu",
                               policy_kwargs={"net_arch": [8]})
