"""What the person's seat sees of a game played in the browser, as the page draws it.

Everything is made from the seat's observation, `observation.decode(observe(state, seat))`
(own hand, the first six cards only during the own mode choice, R9; the talon once turned face
up; own discards; own exchange cards, R22; the public table), plus, when the seat is to act,
the legal moves and the reasons the others are refused, which depend on the own hand and the
table alone. Nothing here reads another seat's hidden cards.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import engine, render
from ..cards import MODE_ACTION_OFFSET, NUM_ACTIONS
from ..observation import decode, observe
from ..terminal_game import reason_for_you


def _absolute(seat: int, values: Sequence[Any]) -> list[Any]:
    """Values per relative seat (0 the observer, 1 its left, 2 its right) by absolute seat."""
    out: list[Any] = [None] * 3
    for k, value in enumerate(values):
        out[(seat + k) % 3] = value
    return out


def seat_view(state: engine.State, seat: int, names: Sequence[str] = ("you", "seat 1", "seat 2"),
              move: int = 0) -> dict[str, Any]:
    """What `seat` knows of game 0 now, as the page draws it (seats absolute, cards as ids):
    made from `decode(observe(state, seat))`; when `seat` is to act, also its legal moves,
    the reason each other move it could click is refused (its hand's cards, and in the mode
    choice the six modes), the hint of the decision and `move`, its decision's number."""
    obs = decode(observe(state, seat)[0])
    rel_to_act, rel_leader = obs["to_act"], obs["trick_leader"]
    to_act = (seat + rel_to_act) % 3 if rel_to_act >= 0 else -1
    mode = obs["mode"]
    completed = [trick for trick in obs["tricks"] if len(trick[1]) == 3]
    on_table = obs["tricks"][-1] if obs["tricks"] and len(obs["tricks"][-1][1]) < 3 else None
    view: dict[str, Any] = {
        "deal": obs["deal"] + 1,
        "num_deals": state.rules.num_deals,
        "roles": _absolute(seat, [engine.ROLE_NAMES[role] for role in obs["roles"]]),
        "mode": mode,
        "targets": _absolute(seat, obs["targets"]) if mode >= 0 else None,
        "tricks_won": _absolute(seat, obs["tricks_won"]),
        "scores": _absolute(seat, obs["scores"]),
        "modes_open": _absolute(seat, [[m for m in range(6) if row[m]] for row in obs["modes_available"].tolist()]),
        "hand": obs["hand"],
        "first_six": rel_to_act == 0 and obs["decision"] == engine.MODE,  # R9
        "talon": obs["talon"],
        "discards": obs["discards"],
        "given": obs["exchange_given"],
        "received": obs["exchange_received"],
        "exchanges": _exchange_pairs(seat, obs),
        "trick": _placed(seat, *on_table) if on_table else [],
        "last_trick": None,
        "to_act": to_act,
        "decision": None, "decision_text": None, "legal": [], "refusals": {}, "hint": "", "move": None,
        "deal_over": None,
    }
    if not on_table and completed and rel_leader >= 0:  # the winner of a trick leads the next (R16)
        view["last_trick"] = {"cards": _placed(seat, *completed[-1]), "winner": (seat + rel_leader) % 3}
    if to_act == seat:
        view.update(_decision(state, seat, names, obs["hand"], move))
    return view


def _placed(seat: int, leader: int, cards: Sequence[int]) -> list[list[int]]:
    """A trick's cards in playing order as [absolute seat, card] pairs (`leader` relative)."""
    return [[(seat + leader + position) % 3, int(card)] for position, card in enumerate(cards)]


def _exchange_pairs(seat: int, obs: dict[str, Any]) -> list[dict[str, int]]:
    """The deal's exchange pairs (R18-R20) and their public counts (R22), absolute seats."""
    pairs = ((0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1))  # the observation's order, relative seats
    return [{"giver": (seat + g) % 3, "receiver": (seat + r) % 3, "due": due, "done": done}
            for (g, r), due, done in zip(pairs, obs["exchange_due"], obs["exchange_done"]) if due > 0]


def _decision(state: engine.State, seat: int, names: Sequence[str], hand: Sequence[int], move: int) -> dict[str, Any]:
    """The person's decision: its kind, legal moves, the refused moves' reasons (worded for
    "you", citing the rule), the hint and the decision's number."""
    phase = int(state.phase[0])
    legal = [int(a) for a in np.flatnonzero(engine.legal_action_mask(state)[0])]
    shown = list(hand) + (list(range(MODE_ACTION_OFFSET, NUM_ACTIONS)) if phase == engine.MODE else [])
    refusals = {str(a): reason_for_you(engine.illegal_reason(state, 0, a), seat, render.move_words)
                for a in shown if a not in legal}
    return {"decision": engine.DECISIONS[phase], "decision_text": render.DECISION_TEXT[phase], "legal": legal, "refusals": refusals,
            "hint": render.decision_hint(state, names), "move": move}
