"""pimc's rollouts as compiled loops: the engine, the heuristic and a policy network in one kernel.

`agents.pimc` rolls every world x action out to the end of the deal. With the heuristic as
both rollout policies (the default `pimc`), or a policy network in one or both roles, and
no exploration, a rollout needs no Python step: `_rollouts_k` plays all the rollout
games of a batch in rounds. In a round, `_advance_k` takes each live game in turn and
plays it on until a policy must choose: it applies the action chosen for it in the last
round, then the moves without a real choice (one legal action, or cards that are all
equivalent, R16: `_distinct_k`, as `pimc.choices`), with the engine's own per-game rules (`engine.apply_action_k`,
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

import numpy as np

from sergeant_major_env.cards import count_cards_k
from sergeant_major_env.engine import (DEAL_ENDED, DEAL_POINTS_, DEALER, DISCARD, DISCARDS, EXCHANGE_DONE, GIVE, GIVEN,
                                       HANDS, LEADER, MIN_TARGETS, MINIMUM, MODE, MODE_, MODES_USED, PHASE, PLAY,
                                       PLAYED, TALON, TARGETS, TO_ACT, TRICK, TRICKS_WON, apply_action_k,
                                       legal_actions_k, state_arrays_k, trick_winner_k)
from sergeant_major_env.jit import kernel
from sergeant_major_env.observation import CARD_SETS_WIDTH, OBSERVATION_SIZE, observe_game_k

from .heuristic_kernels import choose_card_k, gather_seat_k, miss_chances_k, suit_log_sums_k
from .network_kernels import lowest_bit_k, network_action_k

DONE, CUT, ASK_CARDS, ASK_POLICY = range(4)
"""A rollout game's state after a round (`_advance_k`): the deal ended (points written), the
horizon reached, waiting for the heuristic's card decision, waiting for the policy (numpy)."""

_ALL_CARDS = np.uint64((1 << 52) - 1)
_RANK_0 = np.uint64(sum(1 << (13 * suit) for suit in range(4)))
_ONE, _NONE = np.uint64(1), np.uint64(0)
_TARGETS, _MIN_TARGETS = TARGETS.copy(), MIN_TARGETS.copy()
_REST_WIDTH = OBSERVATION_SIZE - CARD_SETS_WIDTH


@kernel(inline=True)
def _distinct_k(legal, played):
    """`pimc.distinct_cards` of one game: `legal` without the cards equivalent to a lower
    legal card of their suit (every card between them in `played`, R16)."""
    cards = legal & _ALL_CARDS
    reach, through = cards, played & ~_RANK_0
    for shift in (1, 2, 4, 8):
        reach |= through & (reach << np.uint64(shift))
        through &= through << np.uint64(shift)
    return legal & ~(cards & (reach << _ONE) & ~_RANK_0)


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


@kernel(counted=False)
def _advance_k(s, live, pending, seat, decisions, horizon, rules, points, status, legal_out, asked, net_asked,
               by_network, q_hand, q_unseen, q_played, q_talon, q_given, q_legal, q_exchange_done, q_role, q_trick,
               q_mode, q_decision, q_position, keys, order):
    """The moves of a round of `_rollouts_k` (the state `s` as the engine's per-game rules take it;
    without reference counting, as `engine._apply_range_k`: every array read from the tuple
    would otherwise cost two atomic operations). Returns the numbers of ASK_CARDS games for the
    heuristic (listed in `asked`) and for the network (`net_asked`: the seats whose
    `by_network` entry is set, [searching seat, the others], decide every kind there)."""
    phase, to_act, dealer, hands, talon, mode, modes_used = (s[PHASE], s[TO_ACT], s[DEALER], s[HANDS], s[TALON],
                                                             s[MODE_], s[MODES_USED])
    exchange_done, given, discards, played, trick = s[EXCHANGE_DONE], s[GIVEN], s[DISCARDS], s[PLAYED], s[TRICK]
    leader, tricks_won, deal_ended, deal_points = s[LEADER], s[TRICKS_WON], s[DEAL_ENDED], s[DEAL_POINTS_]
    batch_size = phase.size
    n_asked = n_net = 0
    for i in range(live.size):
        g = live[i]
        action = pending[i]
        while True:
            if action >= 0:
                decisions[g] += 1
                if _last_card_k(g, action, phase, to_act, hands, trick):  # scored here, the next deal not dealt
                    points[g] = _final_points_k(g, action, seat[g], dealer, mode, trick, leader, tricks_won)
                    status[i] = DONE
                    break
                apply_action_k(s, g, action, False, batch_size, rules, keys, order)
                action = -1
            if deal_ended[g]:
                points[g] = deal_points[g, seat[g]]
                status[i] = DONE
                break
            if horizon and decisions[g] >= horizon:
                status[i] = CUT
                break
            bits = legal_actions_k(phase, to_act, hands, modes_used, trick, mode, g, rules)
            ph = phase[g]
            options = bits
            if ph == DISCARD or ph == PLAY:
                on_table = _NONE
                for r in range(3):
                    if trick[g, r] >= 0:
                        on_table |= _ONE << np.uint64(trick[g, r])
                options = _distinct_k(bits, (played[g, 0] | played[g, 1] | played[g, 2]) & ~on_table)
            if count_cards_k(options) == 1:  # no real choice: played directly
                action = lowest_bit_k(options)
                continue
            legal_out[i] = bits
            if to_act[g] >= 0 and options != _NONE and by_network[0 if to_act[g] == seat[g] else 1]:
                status[i] = ASK_CARDS
                net_asked[n_net] = i
                n_net += 1
                break
            if ph == GIVE or ph == MODE or to_act[g] < 0 or options == _NONE:
                status[i] = ASK_POLICY
                break
            status[i] = ASK_CARDS
            asked[n_asked] = i
            gather_seat_k(n_asked, g, bits, s, q_hand, q_unseen, q_played, q_talon, q_given, q_legal, q_exchange_done,
                          q_role, q_trick, q_mode, q_decision, q_position)
            n_asked += 1
            break
    return n_asked, n_net


@kernel(counted=False)
def _network_round_k(net_asked, live, to_act, fields, legal_out, pending, planes, rest, first, first_bias, hidden,
                     hidden_bias, shapes, output, output_bias, activation, h, h2, logits, rows, values):
    """The network's moves of a round of `_rollouts_k`: for each rollout game listed in
    `net_asked` (rows of `live`), the deciding seat's observation and the network's action,
    written to `pending`. Without reference counting: the observation reads some twenty
    arrays from `fields`, each of which would otherwise cost two atomic operations a decision."""
    for k in range(net_asked.size):
        i = net_asked[k]
        g = live[i]
        observe_game_k(g, np.int64(to_act[g]), fields, planes, rest)
        pending[i] = network_action_k(planes, rest, legal_out[i], first, first_bias, hidden, hidden_bias, shapes,
                                      output, output_bias, activation, h, h2, logits, rows, values)


@kernel(ahead="search", seconds=35, signature=(
        "uint8[::1], int64[::1], int64[::1], int64, int64[::1], int64[::1], int64, int64, float64[::1], "
        "int64[::1], uint64[::1], int64[::1], int64, float64[::1], float64[::1], float64[::1], float64[::1], "
        "float64[::1], int64[::1], float32[:, ::1], float32[::1], float32[::1], float32[::1], int64[:, ::1], "
        "float32[:, ::1], float32[::1], int64, int64"))
def _rollouts_k(buffer, live, pending, n_live, seat, decisions, horizon, rules, points, status, legal_out, cut, n_cut,
                params, tie, rank_tie, known_mass, log_known, by_network, first, first_bias, hidden, hidden_bias,
                shapes, output, output_bias, activation, width):
    """Plays the rollout games `live[:n_live]` (game numbers; `pending`: an action to apply
    first, -1 none) in rounds (module docstring) until every one has ended its deal or reached
    the horizon, or until some wait for the policy (an exchange give). `points` (the deal's
    points for `seat`) and `decisions` (played so far) are indexed by game number; the
    games cut at the horizon are listed in `cut` (`n_cut` so far). Returns (n_live, n_cut):
    `live[:n_live]` the games still running, `pending` their actions, -1 where `status`
    is ASK_POLICY (`legal_out`: their legal actions); n_live is 0 when all are done.
    `by_network` (int64[2]: the searching seat, the others): whose decisions the network
    (`first` ... `width`: `network_kernels.NetworkWeights`) makes, of every kind; the
    heuristic (`params`) makes the rest of the card decisions."""
    s = state_arrays_k(buffer)
    n = live.size
    to_act = s[TO_ACT]
    fields = state_arrays_k(buffer)  # the network's observation of a seat (observation.observe_game_k)
    planes, rest = np.empty(14, dtype=np.uint64), np.empty(_REST_WIDTH, dtype=np.float32)
    h, h2 = np.empty(width, dtype=np.float32), np.empty(width, dtype=np.float32)
    logits = np.empty(output_bias.shape[0], dtype=np.float32)
    rows, values = np.empty(max(OBSERVATION_SIZE, width), dtype=np.int64), np.empty(max(OBSERVATION_SIZE, width),
                                                                                    dtype=np.float32)
    net_asked = np.empty(n, dtype=np.int64)
    keys, order = np.empty(52, dtype=np.uint64), np.empty(52, dtype=np.int64)
    asked, q_action = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    # The heuristic's inputs of the games asking in a round (gather_seat_k), rows 0..
    q_hand, q_unseen, q_talon, q_given, q_legal = (np.empty(n, dtype=np.uint64), np.empty(n, dtype=np.uint64),
                                                   np.empty(n, dtype=np.uint64), np.empty(n, dtype=np.uint64),
                                                   np.empty(n, dtype=np.uint64))
    q_played, q_trick = np.empty((n, 3), dtype=np.uint64), np.empty((n, 3), dtype=np.int64)
    q_exchange_done, q_role = np.empty((n, 6), dtype=np.int16), np.empty((n, 3), dtype=np.int8)
    q_mode, q_decision, q_position = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    q_miss, q_entries, q_start = np.empty((n, 2)), np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    while n_live > 0:
        asking, n_net = _advance_k(s, live[:n_live], pending[:n_live], seat, decisions, horizon, rules, points,
                                   status, legal_out, asked, net_asked, by_network, q_hand, q_unseen, q_played,
                                   q_talon, q_given, q_legal, q_exchange_done, q_role, q_trick, q_mode, q_decision,
                                   q_position, keys, order)
        if n_net:
            _network_round_k(net_asked[:n_net], live, to_act, fields, legal_out, pending, planes, rest, first,
                             first_bias, hidden, hidden_bias, shapes, output, output_bias, activation, h, h2, logits,
                             rows, values)
        if asking:
            _heuristic_cards_k(asking, q_hand, q_unseen, q_played, q_talon, q_given, q_legal, q_exchange_done, q_role,
                               q_trick, q_mode, q_decision, q_position, q_miss, q_entries, q_start, params, tie,
                               rank_tie, known_mass, log_known, q_action)
            for k in range(asking):
                pending[asked[k]] = q_action[k]
        # The games still running, packed to the front; those cut at the horizon listed.
        kept, waiting = 0, False
        for i in range(n_live):
            if status[i] == CUT:
                cut[n_cut] = live[i]
                n_cut += 1
            elif status[i] == ASK_CARDS or status[i] == ASK_POLICY:
                live[kept], status[kept], legal_out[kept] = live[i], status[i], legal_out[i]
                pending[kept] = pending[i] if status[i] == ASK_CARDS else -1
                waiting = waiting or status[i] == ASK_POLICY
                kept += 1
        n_live = kept
        if waiting:
            return n_live, n_cut
    return 0, n_cut


@kernel
def _heuristic_cards_k(rows, hand, unseen, played, talon, given, legal, exchange_done, role, trick, mode, decision,
                       position, miss, entries, start, params, tie, rank_tie, known_mass, log_known, actions):
    """The heuristic's cards for rows 0..rows-1 of the gathered inputs: the steps of
    `heuristic_kernels.card_actions_of_sets` (its kernels' per-game routines), with the
    compiled `log` and `exp` between them (module docstring), the `exp` once over the
    three kinds of arguments in one buffer."""
    total = 0
    for k in range(rows):
        miss_chances_k(k, legal, unseen, played, talon, given, exchange_done, role, known_mass, miss, entries)
        start[k] = total
        total += entries[k]
    log_miss = np.empty((rows, 2))
    for k in range(rows):
        log_miss[k, 0], log_miss[k, 1] = np.log(miss[k, 0]), np.log(miss[k, 1])
    arguments = np.empty(8 * rows + 4 * total)
    void_arg = arguments[:8 * rows].reshape((rows, 2, 4))
    higher_arg = arguments[8 * rows:8 * rows + 2 * total].reshape((total, 2))
    lower_arg = arguments[8 * rows + 2 * total:].reshape((total, 2))
    for k in range(rows):
        suit_log_sums_k(k, legal, unseen, talon, given, exchange_done, role, log_miss, log_known, start, void_arg,
                  higher_arg, lower_arg)
    values = np.empty_like(arguments)
    for k in range(arguments.size):
        values[k] = np.exp(arguments[k])
    void = values[:8 * rows].reshape((rows, 2, 4))
    higher = values[8 * rows:8 * rows + 2 * total].reshape((total, 2))
    lower = values[8 * rows + 2 * total:].reshape((total, 2))
    for k in range(rows):
        choose_card_k(k, hand, unseen, legal, trick, mode, decision, position, void, higher, lower, start, params, tie,
                    rank_tie, actions)
