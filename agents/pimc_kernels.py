"""pimc's rollouts as compiled loops: the engine, the heuristic and a policy network in one kernel.

`agents.pimc` rolls every world x action out to the end of the deal. With the heuristic as
both rollout policies (the default `pimc`), or a policy network in one or both roles, and
no exploration, a rollout needs no Python step: `rollouts_k` plays all the rollout
games of a batch in rounds. In a round, `_advance_k` takes each live game in turn and
plays it on until a policy must choose: it applies the action chosen for it in the last
round, then the moves without a real choice (one legal action, or cards that are all
equivalent, R16: `distinct_cards_k`, as `pimc.choices`), with the engine's own per-game rules (`engine.apply_action_k`,
`engine.legal_actions_k`), and stops the game

* at the end of the deal: its points for the searching seat are written (the last card is
  scored by `_final_points_k`, without dealing the next deal, which a rollout never
  plays), or after `horizon` decisions (scored in numpy, `pimc._partial_points`);
* at a free return, a discard or a play with a real choice: it writes the seat's view of the
  game as the heuristic's card kernels read it (`gather_seat_k`: the fields that
  `observe_card_sets` and `view.View` would give); `_heuristic_cards_k` then runs
  the heuristic's per-game routines (`heuristic_kernels.miss_chances_k`, `suit_log_sums_k`,
  `choose_card_k`) over all such games of the round, with the compiled `log` and `exp`
  between them. The heuristic agent itself calls numpy's (its actions stay 0.3.0's bit for
  bit, see `heuristic_kernels`); the two differ in the last bit on a few arguments in a
  hundred, which flips the rollout policy's choice where two cards' scores tie to the last
  bit: 6 of 50,640 rollouts of a 6-game table end otherwise, and the search's choices are
  pimc's of 0.3.0 at the same strength (tests/test_pimc.py; docs/results.md, "Search"). In
  object mode, numpy's `exp` and `log` took a quarter of the kernel's time;
* at an exchange give (or a mode choice), whose heuristic rules stay numpy: the kernel
  returns, pimc asks the policy for those games (`policies.decide`) and calls it again.

A policy network in the rollouts (`pimc:rollout=learned`: the searching seat's moves; with
`others=rollout` every seat's) decides every kind of move of the seats it plays inside the
round: the seat's observation (`observation.observe_game_k`) and the network's most likely
legal action (`network_kernels.network_action_k`), game by game.

No engine state is copied: the games stay where they are in the batch.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from sergeant_major_env.cards import ALL_CARDS, count_cards_k
from sergeant_major_env.engine import (DEAL_ENDED, DEAL_POINTS_, DEALER, DISCARD, GIVE, HANDS, LEADER, MIN_TARGETS,
                                       MINIMUM, MODE, MODE_, MODES_USED, PHASE, PLAY, PLAYED, TARGETS, TO_ACT, TRICK,
                                       TRICKS_WON, apply_action_k, legal_actions_k, state_arrays_k, trick_winner_k)
from sergeant_major_env.jit import BUFFER, GAMES, INT, INTS, REALS, RULES, SETS, kernel, tuple_of
from sergeant_major_env.observation import CARD_SETS_WIDTH, OBSERVATION_SIZE, observe_game_k

from .heuristic_kernels import choose_card_k, gather_seat_k, miss_chances_k, suit_log_sums_k
from .network_kernels import NETWORK_WEIGHTS_TYPE, NetworkScratch, NetworkWeights, lowest_bit_k, network_action_k, \
    network_scratch_k

DONE, CUT, ASK_CARDS, ASK_POLICY = range(4)
"""A rollout game's state after a round (`_advance_k`): the deal ended (points written), the
horizon reached, waiting for the heuristic's card decision, waiting for the policy (numpy)."""

_RANK_0 = np.uint64(sum(1 << (13 * suit) for suit in range(4)))  # the twos: nothing of the suit below
_ONE, _NONE = np.uint64(1), np.uint64(0)
_TARGETS, _MIN_TARGETS = TARGETS.copy(), MIN_TARGETS.copy()
_REST_WIDTH = OBSERVATION_SIZE - CARD_SETS_WIDTH


# ----------------------------------------------------------------------------- what rollouts_k takes

class RolloutGames(NamedTuple):
    """The rollout games of a `rollouts_k` call: the first five by row (the call's games, the
    live ones packed to the front), the last three by game number (the state's rows)."""

    live: np.ndarray
    """int64[n]: the game number of each row; `live[:n_live]` the games still running"""
    pending: np.ndarray
    """int64[n]: the action to apply first in each row's game, -1 for none"""
    status: np.ndarray
    """int64[n]: where each row's game stopped in the last round (DONE, CUT, ASK_CARDS, ASK_POLICY)"""
    legal: np.ndarray
    """uint64[n]: the legal actions of each row's game where it waits for a decision"""
    cut: np.ndarray
    """int64[n]: the games cut at the horizon, `cut[:n_cut]`"""
    seat: np.ndarray
    """int64[games]: the searching seat of each game"""
    decisions: np.ndarray
    """int64[games]: the decisions each game has played in its rollout"""
    points: np.ndarray
    """float64[games]: the deal's points for the searching seat of each game that ended its deal"""


class HeuristicWeights(NamedTuple):
    """The heuristic's card weights and tables (`heuristic_kernels`): what its card kernels read."""

    params: np.ndarray
    """float64[len(PARAM_ORDER)]: the card weights (`heuristic_kernels.PARAM_ORDER`)"""
    tie: np.ndarray
    """float64[52]: `heuristic_kernels.TIE`"""
    rank_tie: np.ndarray
    """float64[52]: `heuristic_kernels.RANK_TIE`"""
    known_mass: np.ndarray
    """float64[3]: `heuristic_kernels.KNOWN_MASS`"""
    log_known: np.ndarray
    """float64[3]: `heuristic_kernels.LOG_MISS_KNOWN`"""


# The types of rollouts_k's arguments, declared once (jit's named types; Python passes the named
# tuples as plain tuples, `tuple(...)`, and tests/test_pimc.py checks these against them).
ROLLOUT_GAMES_TYPE = tuple_of(GAMES, INTS, INTS, SETS, GAMES, INTS, INTS, REALS)
"""`RolloutGames` as a plain tuple."""
HEURISTIC_WEIGHTS_TYPE = tuple_of(REALS, REALS, REALS, REALS, REALS)
"""`HeuristicWeights` as a plain tuple (to numba a `UniTuple`: its fields are all of one type)."""
ROLLOUTS_SIGNATURE = ", ".join((BUFFER, ROLLOUT_GAMES_TYPE, INT, INT, INT, RULES, INTS, HEURISTIC_WEIGHTS_TYPE,
                                NETWORK_WEIGHTS_TYPE))
"""`rollouts_k(buffer, games, n_live, n_cut, horizon, rules, by_network, heuristic, network)`."""


# ----------------------------------------------------------------------------- scratch of a call

class CardRows(NamedTuple):
    """The heuristic's inputs and outputs for the games of a round that ask it for a card, row
    `k` the k-th asking game: the seat's view (`heuristic_kernels.gather_seat_k` writes it, in this
    order), the card reading's entries and the card chosen."""

    hand: np.ndarray
    unseen: np.ndarray
    played: np.ndarray
    talon: np.ndarray
    given: np.ndarray
    legal: np.ndarray
    exchange_done: np.ndarray
    role: np.ndarray
    trick: np.ndarray
    mode: np.ndarray
    decision: np.ndarray
    position: np.ndarray
    miss: np.ndarray
    """float64[n, 2]: P(each opponent misses a card), `miss_chances_k`"""
    entries: np.ndarray
    """int64[n]: each row's number of entries of the per-card sums"""
    start: np.ndarray
    """int64[n]: each row's first entry"""
    action: np.ndarray
    """int64[n]: the card chosen"""


class RoundScratch(NamedTuple):
    """The working arrays of `rollouts_k`'s rounds, made once a call (`_round_scratch_k`)."""

    asked: np.ndarray
    """int64[n]: the rows whose games ask the heuristic, in the order of `cards`' rows"""
    net_asked: np.ndarray
    """int64[n]: the rows whose games ask the network"""
    keys: np.ndarray
    """uint64[52]: the engine's shuffle keys (`engine.apply_action_k`)"""
    order: np.ndarray
    """int64[52]: their order"""
    cards: CardRows
    planes: np.ndarray
    """uint64[14]: the card sets of one seat's observation (the network's input)"""
    rest: np.ndarray
    """float32: the observation's other entries"""
    network: NetworkScratch


@kernel(inline=True)
def _card_rows_k(n):
    """A `CardRows` of `n` rows."""
    return CardRows(np.empty(n, dtype=np.uint64), np.empty(n, dtype=np.uint64), np.empty((n, 3), dtype=np.uint64),
                    np.empty(n, dtype=np.uint64), np.empty(n, dtype=np.uint64), np.empty(n, dtype=np.uint64),
                    np.empty((n, 6), dtype=np.int16), np.empty((n, 3), dtype=np.int8), np.empty((n, 3), dtype=np.int64),
                    np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64),
                    np.empty((n, 2)), np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64),
                    np.empty(n, dtype=np.int64))


@kernel(inline=True)
def _round_scratch_k(n, weights):
    """A `RoundScratch` for `n` rollout games and the network of `weights`."""
    return RoundScratch(np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64), np.empty(52, dtype=np.uint64),
                        np.empty(52, dtype=np.int64), _card_rows_k(n), np.empty(14, dtype=np.uint64),
                        np.empty(_REST_WIDTH, dtype=np.float32), network_scratch_k(weights))


# ----------------------------------------------------------------------------- the rules a rollout needs

@kernel(inline=True)
def distinct_cards_k(legal, played):
    """`legal` without the cards that are equivalent to a lower legal card of the same suit:
    when every card between them was played in earlier tricks, the two take and lose the
    same tricks (R16), so only the lowest of each such run needs searching (mode actions
    are kept). `played`: the cards of completed tricks (the current trick's still count).

    Written in operators numpy applies elementwise: `pimc.distinct_cards` runs this function's
    Python code on whole arrays (`distinct_cards_k.py_func`), the rule is coded once."""
    cards = legal & ALL_CARDS
    # reach: the legal cards and the played cards just above them (through runs of played
    # cards, never into the next suit): a fill in four doubling steps.
    reach, through = cards, played & ~_RANK_0
    for shift in (1, 2, 4, 8):
        reach |= through & (reach << np.uint64(shift))
        through &= through << np.uint64(shift)
    # A legal card is redundant when the card just below it is legal or reached.
    return legal & ~(cards & (reach << _ONE) & ~_RANK_0)


@kernel(inline=True)
def _choices_k(g, bits, phase, played, trick):
    """`pimc.choices` of game `g` (`bits` its legal actions): equivalent cards merged where the
    card leaves play (discards, play: R16), every card kept in exchanges (R21)."""
    if phase[g] != DISCARD and phase[g] != PLAY:
        return bits
    on_table = _NONE
    for r in range(3):
        if trick[g, r] >= 0:
            on_table |= _ONE << np.uint64(trick[g, r])
    return distinct_cards_k(bits, (played[g, 0] | played[g, 1] | played[g, 2]) & ~on_table)


@kernel(inline=True)
def _last_card_k(g, action, phase, to_act, hands, trick):
    """Whether `action` is the last card of game `g`'s deal: the third card of a trick played
    from a hand of one card (every hand then empty, R12)."""
    return (phase[g] == PLAY and trick[g, 1] >= 0
            and hands[g, to_act[g]] == _ONE << np.uint64(action))


@kernel(inline=True)
def _final_points_k(g, action, seat, dealer, mode, trick, leader, tricks_won):
    """The deal's points for `seat` (R23, R24) when `action` completes its last trick: what
    `engine._end_deal_k` writes, without dealing the next deal (a rollout ends here)."""
    winner = (leader[g] + trick_winner_k(trick[g, 0], trick[g, 1], np.int8(action), mode[g])) % 3  # R16
    won = np.int64(tricks_won[g, seat]) + (1 if winner == seat else 0)
    role = (seat - dealer[g]) % 3
    return np.int64(_MIN_TARGETS[role]) - won if mode[g] == MINIMUM else won - np.int64(_TARGETS[role])


# ----------------------------------------------------------------------------- a round

@kernel(counted=False)
def _advance_k(s, games, n_live, horizon, rules, by_network, scratch):
    """The moves of a round of `rollouts_k`: each of the rows 0..n_live-1 of `games` (a
    `RolloutGames`) played on until a policy must choose or its rollout ends (module docstring),
    its `status` written. Returns the numbers of ASK_CARDS games for the heuristic (their rows
    in `scratch.asked`, their inputs gathered in `scratch.cards`) and for the network (rows in
    `scratch.net_asked`: the seats whose `by_network` entry is set, [searching seat, the
    others], decide every kind there). `s`: the state as the engine's per-game rules take it;
    without reference counting, as `engine._apply_range_k`: every array read from the tuples
    would otherwise cost two atomic operations."""
    phase, to_act, dealer, hands, mode, modes_used = s[PHASE], s[TO_ACT], s[DEALER], s[HANDS], s[MODE_], s[MODES_USED]
    played, trick = s[PLAYED], s[TRICK]
    leader, tricks_won, deal_ended, deal_points = s[LEADER], s[TRICKS_WON], s[DEAL_ENDED], s[DEAL_POINTS_]
    live, pending, status, legal, _, seat, decisions, points = games
    q = scratch.cards
    batch_size = phase.size
    n_asked = n_net = 0
    for i in range(n_live):
        g = live[i]
        action = pending[i]
        while True:
            if action >= 0:
                decisions[g] += 1
                if _last_card_k(g, action, phase, to_act, hands, trick):  # scored here, the next deal not dealt
                    points[g] = _final_points_k(g, action, seat[g], dealer, mode, trick, leader, tricks_won)
                    status[i] = DONE
                    break
                apply_action_k(s, g, action, False, batch_size, rules, scratch.keys, scratch.order)
                action = -1
            if deal_ended[g]:
                points[g] = deal_points[g, seat[g]]
                status[i] = DONE
                break
            if horizon and decisions[g] >= horizon:
                status[i] = CUT
                break
            bits = legal_actions_k(phase, to_act, hands, modes_used, trick, mode, g, rules)
            options = _choices_k(g, bits, phase, played, trick)
            if count_cards_k(options) == 1:  # no real choice: played directly
                action = lowest_bit_k(options)
                continue
            legal[i] = bits
            if to_act[g] >= 0 and options != _NONE and by_network[0 if to_act[g] == seat[g] else 1]:
                status[i] = ASK_CARDS
                scratch.net_asked[n_net] = i
                n_net += 1
                break
            ph = phase[g]
            if ph == GIVE or ph == MODE or to_act[g] < 0 or options == _NONE:
                status[i] = ASK_POLICY
                break
            status[i] = ASK_CARDS
            scratch.asked[n_asked] = i
            gather_seat_k(n_asked, g, bits, s, q.hand, q.unseen, q.played, q.talon, q.given, q.legal, q.exchange_done,
                          q.role, q.trick, q.mode, q.decision, q.position)
            n_asked += 1
            break
    return n_asked, n_net


@kernel(counted=False)
def _network_round_k(n_net, games, to_act, fields, weights, scratch):
    """The network's moves of a round of `rollouts_k`: for each of the first `n_net` rows of
    `scratch.net_asked`, the deciding seat's observation and the network's action, written to
    the row's `pending`. Without reference counting: the observation reads some twenty arrays
    from `fields`, each of which would otherwise cost two atomic operations a decision."""
    live, pending, legal = games.live, games.pending, games.legal
    for k in range(n_net):
        i = scratch.net_asked[k]
        g = live[i]
        observe_game_k(g, np.int64(to_act[g]), fields, scratch.planes, scratch.rest)
        pending[i] = network_action_k(scratch.planes, scratch.rest, legal[i], weights, scratch.network)


@kernel
def _heuristic_cards_k(rows, q, heuristic):
    """The heuristic's cards `q.action` for rows 0..rows-1 of the gathered inputs `q` (a
    `CardRows`; `heuristic` a `HeuristicWeights`): the steps of
    `heuristic_kernels.card_actions_of_sets` (its kernels' per-game routines), with the
    compiled `log` and `exp` between them (module docstring), the `exp` once over the three
    kinds of arguments in one buffer. Only the buffers are allocated here: the steps run
    without reference counting (a shared weight array's count, touched a row, would be
    fought over by the threads of `threads.spread`)."""
    total = _miss_rows_k(rows, q, heuristic)
    log_miss, arguments = np.empty((rows, 2)), np.empty(8 * rows + 4 * total)
    _sums_rows_k(rows, total, q, heuristic, log_miss, arguments)
    values = np.empty_like(arguments)
    _choose_rows_k(rows, total, q, heuristic, arguments, values)


@kernel(counted=False)
def _miss_rows_k(rows, q, heuristic):
    """Each row's chance that each opponent misses a card (`q.miss`) and its entries of the
    per-card sums (`q.entries`, from `q.start`); returns the entries of all the rows."""
    total = 0
    for k in range(rows):
        miss_chances_k(k, q.legal, q.unseen, q.played, q.talon, q.given, q.exchange_done, q.role, heuristic.known_mass,
                  q.miss, q.entries)
        q.start[k] = total
        total += q.entries[k]
    return total


@kernel(counted=False)
def _sums_rows_k(rows, total, q, heuristic, log_miss, arguments):
    """The `log` of `q.miss` (`log_miss`), then each row's sums of logs (`suit_log_sums_k`) into
    `arguments`: the void arguments [rows, 2, 4], then the higher and the lower [total, 2]."""
    for k in range(rows):
        log_miss[k, 0], log_miss[k, 1] = np.log(q.miss[k, 0]), np.log(q.miss[k, 1])
    void_arg = arguments[:8 * rows].reshape((rows, 2, 4))
    higher_arg = arguments[8 * rows:8 * rows + 2 * total].reshape((total, 2))
    lower_arg = arguments[8 * rows + 2 * total:].reshape((total, 2))
    for k in range(rows):
        suit_log_sums_k(k, q.legal, q.unseen, q.talon, q.given, q.exchange_done, q.role, log_miss, heuristic.log_known,
                  q.start, void_arg, higher_arg, lower_arg)


@kernel(counted=False)
def _choose_rows_k(rows, total, q, heuristic, arguments, values):
    """The `exp` of `arguments` (`values`, laid out alike), then each row's card (`choose_card_k`)
    into `q.action`."""
    for k in range(arguments.size):
        values[k] = np.exp(arguments[k])
    void = values[:8 * rows].reshape((rows, 2, 4))
    higher = values[8 * rows:8 * rows + 2 * total].reshape((total, 2))
    lower = values[8 * rows + 2 * total:].reshape((total, 2))
    for k in range(rows):
        choose_card_k(k, q.hand, q.unseen, q.legal, q.trick, q.mode, q.decision, q.position, void, higher, lower,
                    q.start, heuristic.params, heuristic.tie, heuristic.rank_tie, q.action)


@kernel(counted=False)
def _pend_cards_k(rows, games, scratch):
    """The heuristic's cards of a round (`scratch.cards.action`) as the pending actions of the
    rows that asked for them (`scratch.asked`)."""
    for k in range(rows):
        games.pending[scratch.asked[k]] = scratch.cards.action[k]


@kernel(counted=False)
def _keep_live_k(games, n_live, n_cut):
    """After a round: the rows still running (waiting for a decision) packed to the front of
    `games`, those cut at the horizon listed in `games.cut` (from `n_cut`). Returns the new
    (n_live, n_cut) and whether any waits for the policy (ASK_POLICY, its `pending` -1)."""
    live, pending, status, legal, cut = games.live, games.pending, games.status, games.legal, games.cut
    kept, waiting = 0, False
    for i in range(n_live):
        if status[i] == CUT:
            cut[n_cut] = live[i]
            n_cut += 1
        elif status[i] == ASK_CARDS or status[i] == ASK_POLICY:
            live[kept], status[kept], legal[kept] = live[i], status[i], legal[i]
            pending[kept] = pending[i] if status[i] == ASK_CARDS else -1
            waiting = waiting or status[i] == ASK_POLICY
            kept += 1
    return kept, n_cut, waiting


# ----------------------------------------------------------------------------- the entry kernel

@kernel(ahead="search", seconds=35, signature=ROLLOUTS_SIGNATURE)
def rollouts_k(buffer, games, n_live, n_cut, horizon, rules, by_network, heuristic, network):
    """Plays the rollout games `games.live[:n_live]` (`games`: a `RolloutGames` as a plain
    tuple; `pending`: an action to apply first, -1 none) of the engine state `buffer` in
    rounds (module docstring) until every one has ended its deal or reached the horizon (after
    `horizon` decisions, 0: none), or until some wait for the policy (an exchange give).
    Returns (n_live, n_cut): `live[:n_live]` the games still running, `pending` their actions,
    -1 where `status` is ASK_POLICY (`legal`: their legal actions); n_live is 0 when all are
    done; `cut[:n_cut]` the games cut at the horizon so far. `rules`: the state's rule code.
    `by_network` (int64[2]: the searching seat, the others): whose decisions the network
    (`network`: a `NetworkWeights` as a plain tuple) makes, of every kind; the heuristic
    (`heuristic`: a `HeuristicWeights` as a plain tuple) makes the rest of the card decisions."""
    games, heuristic, weights = RolloutGames(*games), HeuristicWeights(*heuristic), NetworkWeights(*network)
    s = state_arrays_k(buffer)
    to_act = s[TO_ACT]
    fields = state_arrays_k(buffer)  # the network's observation of a seat (observation.observe_game_k)
    scratch = _round_scratch_k(games.live.size, weights)
    while n_live > 0:
        asking, n_net = _advance_k(s, games, n_live, horizon, rules, by_network, scratch)
        if n_net:
            _network_round_k(n_net, games, to_act, fields, weights, scratch)
        if asking:
            _heuristic_cards_k(asking, scratch.cards, heuristic)
            _pend_cards_k(asking, games, scratch)
        n_live, n_cut, waiting = _keep_live_k(games, n_live, n_cut)
        if waiting:
            return n_live, n_cut
    return 0, n_cut
