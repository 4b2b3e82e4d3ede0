"""What one seat knows, as a flat float32 vector per game.

``observe(state, seat)`` returns ``float32[B, OBSERVATION_SIZE]`` for one seat per game.
Seats inside the vector are *relative* to the observer: index 0 is the observer, 1 the
player on its left (next to play after it), 2 the player on its right. Card planes are
52 wide in card-id order (R3). Everything here is what that seat legitimately knows:

=====================  ====  ===================================================================
segment                size  meaning
=====================  ====  ===================================================================
``hand``                 52  own cards; during its own mode choice the playmaker sees only its
                             first six cards (R9)
``played``              156  cards each relative seat has played in this deal
``trick``               156  the current trick, by position (first card = the leader's)
``talon``                52  the talon, once turned face up (section 5, step 4)
``discards``             52  own discards (the playmaker only)
``exchange_given``       52  cards this seat handed over in this deal's exchanges
``exchange_received``    52  cards this seat received in them
``decision``              5  one-hot decision kind of the seat to act: mode, exchange give,
                             exchange return, discard, play
``to_act``                3  relative seat to act (all zero once the game is over)
``mode``                  6  one-hot mode: S C H D NT MIN (zero before the choice)
``roles``                 9  per relative seat, one-hot role: dealer, playmaker, third
``targets``               3  per relative seat, tricks to make (R23, R24) / 8
``tricks_won``            3  per relative seat / 16
``trick_leader``          3  relative seat leading the current trick
``exchange_due``          6  cards due per (giver, receiver) pair of relative seats / 13
``exchange_done``         6  cards handed so far per pair / 13 (R22: public counts)
``prev_points``           3  per relative seat, points of the previous deal / 13
``scores``                3  per relative seat / 50
``deal``                  1  index of the current deal / 18
``modes_available``      18  per relative seat, the modes it may still choose (R8)
=====================  ====  ===================================================================

``SEGMENTS`` maps each name to its slice. Pairs in ``exchange_*`` are ordered
(0→1, 0→2, 1→0, 1→2, 2→0, 2→1) in relative seats.
"""

from __future__ import annotations

import numpy as np

from .cards import bit, bits_to_bool, cards_to_bits
from .engine import DISCARD, MINIMUM, MIN_TARGETS, MODE, OVER, PLAY, PLAYMAKER, TARGETS, State

_LAYOUT = (
    ("hand", 52), ("played", 156), ("trick", 156), ("talon", 52), ("discards", 52),
    ("exchange_given", 52), ("exchange_received", 52),
    ("decision", 5), ("to_act", 3), ("mode", 6), ("roles", 9), ("targets", 3), ("tricks_won", 3),
    ("trick_leader", 3), ("exchange_due", 6), ("exchange_done", 6), ("prev_points", 3),
    ("scores", 3), ("deal", 1), ("modes_available", 18),
)
SEGMENTS: dict[str, slice] = {}
_offset = 0
for _name, _size in _LAYOUT:
    SEGMENTS[_name] = slice(_offset, _offset + _size)
    _offset += _size
OBSERVATION_SIZE = _offset
_CARD_PLANES = 11  # hand, played x3, trick x3, talon, discards, given, received
_PAIRS = np.array([(0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1)])


def observe(state: State, seat) -> np.ndarray:
    """float32[B, OBSERVATION_SIZE]: the view of ``seat`` (an int or int[B]) in each game."""
    n = state.batch_size
    rows = np.arange(n)
    seat = np.broadcast_to(np.asarray(seat, dtype=np.int64), (n,))
    if ((seat < 0) | (seat > 2)).any():
        raise ValueError("seat must be 0, 1 or 2")
    others = (seat[:, None] + np.arange(3)) % 3  # relative -> absolute seat
    playmaker = (state.dealer + PLAYMAKER) % 3
    is_playmaker = seat == playmaker
    phase = state.phase.astype(np.intp)

    hand = state.hands[rows, seat]
    choosing = (phase == MODE) & is_playmaker
    first_six = cards_to_bits(state.dealt[rows, seat, :6])
    hand = np.where(choosing, first_six, hand)  # R9
    talon_shown = (phase == DISCARD) | (phase == PLAY) | (phase == OVER)
    planes = np.empty((n, _CARD_PLANES), dtype=np.uint64)
    planes[:, 0] = hand
    planes[:, 1:4] = state.played[rows[:, None], others]
    planes[:, 4:7] = bit(state.trick)
    planes[:, 7] = np.where(talon_shown, state.talon, np.uint64(0))
    planes[:, 8] = np.where(is_playmaker, state.discards, np.uint64(0))
    planes[:, 9] = state.given[rows, seat]
    planes[:, 10] = state.received[rows, seat]

    obs = np.zeros((n, OBSERVATION_SIZE), dtype=np.float32)
    obs[:, : 52 * _CARD_PLANES] = bits_to_bool(planes).reshape(n, -1)

    running = phase != OVER
    obs[rows[running], SEGMENTS["decision"].start + phase[running]] = 1
    relative_to_act = (state.to_act.astype(np.intp) - seat) % 3
    obs[rows[running], SEGMENTS["to_act"].start + relative_to_act[running]] = 1
    chosen = state.mode >= 0
    obs[rows[chosen], SEGMENTS["mode"].start + state.mode[chosen].astype(np.intp)] = 1

    role = (others - state.dealer[:, None].astype(np.intp)) % 3  # role of each relative seat
    obs[rows[:, None], SEGMENTS["roles"].start + 3 * np.arange(3) + role] = 1
    minimum = (state.mode == MINIMUM)[:, None]
    obs[:, SEGMENTS["targets"]] = np.where(minimum, MIN_TARGETS[role], TARGETS[role]) / 8
    obs[:, SEGMENTS["tricks_won"]] = state.tricks_won[rows[:, None], others] / 16
    leading = state.leader >= 0
    relative_leader = (state.leader.astype(np.intp) - seat) % 3
    obs[rows[leading], SEGMENTS["trick_leader"].start + relative_leader[leading]] = 1

    giver, receiver = others[:, _PAIRS[:, 0]], others[:, _PAIRS[:, 1]]
    due = np.zeros((n, 3, 3), dtype=np.float32)
    for slot in range(2):
        paired = np.flatnonzero(state.exchange_giver[:, slot] >= 0)
        due[paired, state.exchange_giver[paired, slot], state.exchange_receiver[paired, slot]] = \
            state.exchange_count[paired, slot]
    due = due[rows[:, None], giver, receiver]
    obs[:, SEGMENTS["exchange_due"]] = due / 13
    obs[:, SEGMENTS["exchange_done"]] = state.exchange_done[rows[:, None], giver, receiver] / 13
    obs[:, SEGMENTS["prev_points"]] = state.prev_points[rows[:, None], others] / 13
    obs[:, SEGMENTS["scores"]] = state.scores[rows[:, None], others] / 50
    obs[:, SEGMENTS["deal"]] = state.deal[:, None] / 18
    used = state.modes_used[rows[:, None], others]  # [n, 3] bit sets
    available = ((used[:, :, None] >> np.arange(6, dtype=np.uint8)) & 1) == 0
    obs[:, SEGMENTS["modes_available"]] = available.reshape(n, 18)
    return obs
