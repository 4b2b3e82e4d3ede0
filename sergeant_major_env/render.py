"""The one table renderer: a game as text, for one viewer.

Every view of the game draws here: the PettingZoo env's `render()`, the single-seat env's
`render()`, the terminal game (`sergeant_major_env.terminal_game`) and the human agent. A view
is for a *viewer*, one seat, and shows only what that seat knows:

* its own hand; during its own mode choice only its first six cards (R9);
* the public table: deal, mode, each seat's role, target, tricks and score, the modes the
  playmaker may still choose (R8), the trick on the table and the last one, the talon once
  it is turned face up (section 5, step 4), the exchange pairs and how many cards each has
  exchanged so far;
* its own discards (the playmaker) and the cards it gave and received in this deal's
  exchanges; a pair's cards are never shown to the third seat (R22);
* never another seat's hand.

The *referee's view* (`referee_view`, the AEC env's default) is the view of the seat to
act, so it follows the turn; once the game is over it shows the public table only.

R9 and R22 are applied once, in `seat_table` (the `TableView` of a seat) and in
`sees_exchanged_cards`; `table_text` only draws a `TableView`.
`observation_table` decodes the same view from an observation vector (which holds only
what its seat knows), for a front end that has no engine state. The terminal game's running
commentary (`Narrator`) and its one-line hints (`decision_hint`) live here too,
so everything a person is shown comes from this module.

Cards are written for people: rank then suit symbol, a ten as `10` (`RANK_TEXT`: `10♥`,
`♥ A 10 9`). A view for a program that must keep RULES.md's letters (OpenSpiel's strings)
passes `ranks=cards.RANKS` (`T♥`); records, action ids and the observation never come here.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable, Sequence, TextIO

import numpy as np

from . import engine
from .cards import MINIMUM, MODE_ACTION_OFFSET, MODE_NAMES, NO_TRUMP, RANKS, SUIT_SYMBOLS, SUITS, count, parse_card
from .observation import decode

YOU = "you"
"""The name of the viewer when it is the person reading (the terminal game): sentences then
say "you" ("your hand", "You play Q♥")."""

MODE_TEXT = tuple(f"trumps {s}" for s in SUIT_SYMBOLS) + ("no-trump (NT)", "minimum (MIN)")
"""Modes 0..5 (cards.MODE_NAMES S C H D NT MIN) as words."""

DECISION_TEXT = ("choose the mode", "give a card", "return a card", "discard", "play a card")
"""What the seat to act does, by engine phase (engine.DECISIONS)."""

TRICKS_PER_DEAL = 16

RANK_TEXT = tuple(rank if rank != "T" else "10" for rank in RANKS)
"""The ranks 2 .. A (R2) as a person reads them: `2` .. `9`, `10`, `J`, `Q`, `K`, `A` (RULES.md's
R3 letters, `cards.RANKS`, write the ten `T`)."""

Ranks = Sequence[str]
"""How the ranks 2 .. A are written: `RANK_TEXT` for people, `cards.RANKS` for R3's letters."""


# ============================================================================ cards and moves

def card_text(card: int, ranks: Ranks = RANK_TEXT) -> str:
    """`Q♥`, `10♥` (rank, then the suit's symbol; `T♥` with `ranks=cards.RANKS`)."""
    return ranks[int(card) % 13] + SUIT_SYMBOLS[int(card) // 13]


def hand_text(bits: int, ranks: Ranks = RANK_TEXT) -> str:
    """Cards grouped by suit, high to low: `♠ A K 7   ♥ Q 10 9`."""
    groups = []
    for suit, symbol in enumerate(SUIT_SYMBOLS):
        held = [ranks[r] for r in range(12, -1, -1) if int(bits) >> (13 * suit + r) & 1]
        if held:
            groups.append(f"{symbol} {' '.join(held)}")
    return "   ".join(groups) or "(no cards)"


def move_text(action: int) -> str:
    """`Q♥` for a card, `NT` / `♠ (S)` for a mode (the terminal's names of moves)."""
    action = int(action)
    if action < MODE_ACTION_OFFSET:
        return card_text(action)
    mode = action - MODE_ACTION_OFFSET
    return f"{SUIT_SYMBOLS[mode]} ({MODE_NAMES[mode]})" if mode < 4 else MODE_NAMES[mode]


def move_words(action: int) -> str:
    """`Q♥` for a card, the mode in words (`trumps ♠`, `no-trump (NT)`): the browser page's
    names of moves, as its mode buttons read them."""
    action = int(action)
    return card_text(action) if action < MODE_ACTION_OFFSET else MODE_TEXT[action - MODE_ACTION_OFFSET]


_MACHINE_CARD = re.compile(r"\b([2-9TJQKA][SCHD])\b")
_MACHINE_MODE = re.compile(r"\bmode (S|C|H|D|NT|MIN)\b")
_MACHINE_SUIT = re.compile(r"\bsuit ([SCHD])\b")
_MACHINE_DECISION = re.compile(r"\((mode|exchange_give|exchange_return|discard|play)\)")
_ACTION_IDS = re.compile(r" \(actions \d+\.\.\d+\)")


def machine_names_for_people(text: str, name: Callable[[int], str] = move_text) -> str:
    """A sentence written with R3's card names and the engine's mode and suit letters (as
    `engine.illegal_reason` writes it: `R12: seat 0 does not hold TH`) in the notation a person
    reads: each card and mode as `name` names moves (`move_text` in the terminal, `move_words` on
    the page: `10♥`, `♠ (S)` / `trumps ♠`), a suit by its symbol (`suit ♦`), a decision in words
    (`(give a card)`), action ids left out."""
    text = _ACTION_IDS.sub("", text)
    text = _MACHINE_DECISION.sub(lambda m: f"({DECISION_TEXT[engine.DECISIONS.index(m.group(1))]})", text)
    text = _MACHINE_CARD.sub(lambda m: name(parse_card(m.group(1))), text)
    text = _MACHINE_MODE.sub(lambda m: name(MODE_ACTION_OFFSET + MODE_NAMES.index(m.group(1))), text)
    return _MACHINE_SUIT.sub(lambda m: f"suit {SUIT_SYMBOLS[SUITS.index(m.group(1))]}", text)


def modes_text(modes: int) -> str:
    """The modes of a bit set (bit m: mode m), as `move_text` writes them."""
    return "  ".join(move_text(MODE_ACTION_OFFSET + m) for m in range(6) if int(modes) >> m & 1) or "(none)"


def legal_text(legal_mask: np.ndarray) -> str:
    """The legal moves of one decision: modes, or cards grouped by suit."""
    actions = np.flatnonzero(np.asarray(legal_mask, dtype=bool))
    if actions.size and actions[0] >= MODE_ACTION_OFFSET:
        return modes_text(sum(1 << int(a - MODE_ACTION_OFFSET) for a in actions))
    return hand_text(sum(1 << int(a) for a in actions))


def seat_labels(names: Sequence[str], you: int | None = None) -> tuple[str, str, str]:
    """How each seat is called in a view: `you` for seat `you`, `seat 2 (heuristic)` for the others."""
    return tuple(YOU if seat == you else f"seat {seat} ({names[seat]})" for seat in range(3))


# ============================================================================ what a viewer knows

def sees_exchanged_cards(viewer: int, giver: int, receiver: int) -> bool:
    """R22: the cards a pair exchanges are seen by the two players involved only."""
    return viewer in (giver, receiver)


def own_cards(state: engine.State, seat: int, game: int = 0) -> tuple[int, bool]:
    """(the cards `seat` sees of its own hand, whether they are only its first six): during its
    own mode choice the playmaker has seen only the first six cards dealt to it (R9)."""
    playmaker = (int(state.dealer[game]) + engine.PLAYMAKER) % 3
    if int(state.phase[game]) == engine.MODE and seat == playmaker:
        return int(state.first_six[game]), True
    return int(state.hands[game, seat]), False


@dataclasses.dataclass(frozen=True)
class TableView:
    """What one viewer sees of one game. Seats are 0, 1, 2 (relative to the viewer in a view
    decoded from an observation: 0 the viewer, 1 its left, 2 its right); cards are ids (R3)
    and sets of cards are ints (bit = card id)."""

    names: tuple[str, str, str]   # how each seat is called (``YOU`` for the person reading)
    deal: int                     # 1-based
    num_deals: int | None         # None when unknown (a view from an observation)
    phase: int                    # engine phase; engine.OVER once the game is over
    to_act: int                   # seat to decide, -1 once the game is over
    mode: int                     # 0..5, -1 before the playmaker chooses
    roles: tuple[int, int, int]   # engine.DEALER / PLAYMAKER / THIRD of each seat
    tricks_won: tuple[int, int, int]
    scores: tuple[int, int, int]
    modes_left: tuple[int, int, int]  # bit m: the seat may still choose mode m as playmaker (R8)
    talon: tuple[int, ...]        # the talon once face up (section 5, step 4), else ()
    trick: tuple[tuple[int, int], ...]       # (seat, card) on the table, in playing order
    leader: int                   # seat leading the trick on the table, -1 before play
    last_trick: tuple[tuple[int, int], ...]  # the last completed trick of this deal, () if none
    exchanges: tuple[tuple[int, int, int, int], ...]  # (giver, receiver, cards due, cards done): R22's public counts
    viewer: int                   # the seat whose hand is shown, -1 for none (the game is over)
    hand: int                     # the cards of it the viewer sees
    first_six_only: bool          # the viewer is choosing the mode and sees its first six (R9)
    discards: int                 # the viewer's own discards (the playmaker's), else 0
    given: int                    # cards the viewer handed over in this deal's exchanges
    received: int                 # cards the viewer received in them

    @property
    def playmaker(self) -> int:
        return self.roles.index(engine.PLAYMAKER)

    def target(self, seat: int) -> int | None:
        """The tricks `seat` must make (R23; R24 in MIN), None before the mode is chosen."""
        if self.mode < 0:
            return None
        return int((engine.MIN_TARGETS if self.mode == MINIMUM else engine.TARGETS)[self.roles[seat]])


def seat_table(state: engine.State, viewer: int, names: Sequence[str], game: int = 0) -> TableView:
    """The `TableView` of `viewer` (a seat, 0..2) in game `game` of `state`: the only
    place where the engine state is read for a view, so the only place that decides what a
    seat may see (R9 in `own_cards`, R22 by reading the viewer's own exchange cards only)."""
    if viewer not in (0, 1, 2):
        raise ValueError(f"a view is for seat 0, 1 or 2, got {viewer!r}")
    phase, dealer = int(state.phase[game]), int(state.dealer[game])
    over = phase == engine.OVER
    roles = tuple((seat - dealer) % 3 for seat in range(3))
    playmaker = roles.index(engine.PLAYMAKER)
    talon_up = engine.DISCARD <= phase < engine.OVER  # shown to all once the exchanges are done
    hand, first_six_only = own_cards(state, viewer, game)
    return TableView(
        names=tuple(names), deal=min(int(state.deal[game]), state.rules.num_deals - 1) + 1,
        num_deals=state.rules.num_deals, phase=phase, to_act=int(state.to_act[game]), mode=int(state.mode[game]),
        roles=roles, tricks_won=tuple(int(t) for t in state.tricks_won[game]),
        scores=tuple(int(s) for s in state.scores[game]),
        modes_left=tuple(~int(used) & 0x3F for used in state.modes_used[game]),
        talon=tuple(int(c) for c in state.talon_cards[game]) if talon_up else (),
        trick=_trick(state.trick[game], int(state.leader[game])), leader=int(state.leader[game]),
        last_trick=_last_trick(state, game) if phase == engine.PLAY else (),
        exchanges=_exchanges(state, game) if phase in (engine.GIVE, engine.RETURN) else (),
        viewer=-1 if over else viewer, hand=0 if over else hand, first_six_only=first_six_only,
        discards=int(state.discards[game]) if viewer == playmaker and not over else 0,
        given=0 if over else int(state.given[game, viewer]),
        received=0 if over else int(state.received[game, viewer]),
    )


def _trick(cards: np.ndarray, leader: int) -> tuple[tuple[int, int], ...]:
    return tuple(((leader + position) % 3, int(card)) for position, card in enumerate(cards) if card >= 0)


def _last_trick(state: engine.State, game: int) -> tuple[tuple[int, int], ...]:
    done = int(state.tricks_won[game].sum())
    if done == 0:
        return ()
    return _trick(state.past_tricks[game, done - 1], int(state.trick_leaders[game, done - 1]))


def _exchanges(state: engine.State, game: int) -> tuple[tuple[int, int, int, int], ...]:
    pairs = []
    for giver, receiver, due in zip(state.exchange_giver[game], state.exchange_receiver[game],
                                    state.exchange_count[game]):
        if giver >= 0:
            pairs.append((int(giver), int(receiver), int(due), int(state.exchange_done[game, giver, receiver])))
    return tuple(pairs)


def observation_table(observation: np.ndarray) -> TableView:
    """The `TableView` held in one observation vector ([`observation.observe`][]), in
    seats relative to its observer: `you`, `left`, `right`. The observation already holds
    only what its seat knows ([`observation.decode`][] reads it); the number of deals and the
    absolute seats are not in it."""
    seen = decode(observation)
    phase = seen["decision"] if seen["decision"] >= 0 else engine.OVER
    roles = tuple(seen["roles"])
    over = phase == engine.OVER
    tricks = seen["tricks"]
    on_table = tricks[-1] if tricks and phase == engine.PLAY and len(tricks[-1][1]) < 3 else None
    completed = [t for t in tricks if t is not on_table]
    pairs = ((0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1))  # the observation's pair order
    modes = seen["modes_available"]

    def bits(cards: list[int]) -> int:
        return sum(1 << c for c in cards)

    return TableView(
        names=(YOU, "left", "right"), deal=seen["deal"] if over else seen["deal"] + 1, num_deals=None,
        phase=phase, to_act=seen["to_act"], mode=seen["mode"], roles=roles,
        tricks_won=tuple(seen["tricks_won"]), scores=tuple(seen["scores"]),
        modes_left=tuple(sum(1 << m for m in range(6) if modes[seat, m]) for seat in range(3)),
        talon=() if over else tuple(seen["talon"]),
        trick=_trick(np.array(on_table[1]), on_table[0]) if on_table else (), leader=seen["trick_leader"],
        last_trick=_trick(np.array(completed[-1][1]), completed[-1][0]) if completed and not over else (),
        exchanges=tuple((g, r, d, k) for (g, r), d, k in zip(pairs, seen["exchange_due"], seen["exchange_done"]) if d > 0)
        if phase in (engine.GIVE, engine.RETURN) else (),
        viewer=-1 if over else 0, hand=0 if over else bits(seen["hand"]),
        first_six_only=phase == engine.MODE and roles[0] == engine.PLAYMAKER,
        discards=0 if over else bits(seen["discards"]), given=0 if over else bits(seen["exchange_given"]),
        received=0 if over else bits(seen["exchange_received"]),
    )


# ============================================================================ drawing

def table_text(view: TableView, ranks: Ranks = RANK_TEXT) -> str:
    """The table of a `TableView` as lines of text (cards written with `ranks`, see `Ranks`)."""
    names = view.names
    deal = f"deal {view.deal}/{view.num_deals}" if view.num_deals else f"deal {view.deal}"
    mode = MODE_TEXT[view.mode] if view.mode >= 0 else "not chosen yet"
    status = "game over" if view.phase == engine.OVER else f"{names[view.to_act]} to {DECISION_TEXT[view.phase]}"
    width = max(8, *(len(name) for name in names)) + 2
    lines = [f"=== 3-5-8 · {deal} · mode: {mode} · {status} ===",
             f"  {'player':<{width}}{'role':<11}{'target':>7}{'tricks':>8}{'score':>7}"]
    for seat in range(3):
        marker = ">" if seat == view.to_act else " "
        target = view.target(seat)
        lines.append(f"{marker} {names[seat]:<{width}}{engine.ROLE_NAMES[view.roles[seat]]:<11}"
                     f"{'-' if target is None else target:>7}{view.tricks_won[seat]:>8}{view.scores[seat]:>+7}")
    if view.phase == engine.MODE:
        chooser = view.playmaker
        lines.append(f"modes {names[chooser]} may still choose (R8): {modes_text(view.modes_left[chooser])}")
    if view.exchanges:
        pairs = "; ".join(f"{names[g]} -> {names[r]}: {done} of {due}" for g, r, due, done in view.exchanges)
        lines.append(f"exchanges (R18-R20; cards seen by the pair only, R22): {pairs}")
    if view.given or view.received:
        lines.append(f"{_possessive(names, view.viewer)} exchange: gave {hand_text(view.given, ranks)}; "
                     f"received {hand_text(view.received, ranks)}")
    if view.talon:
        lines.append(f"talon (face up): {' '.join(card_text(c, ranks) for c in view.talon)}")
    if view.discards:
        lines.append(f"{_possessive(names, view.viewer)} discards (face down): {hand_text(view.discards, ranks)}")
    if view.last_trick:
        won_by = names[view.leader]  # the winner leads the next trick
        lines.append(f"last trick: {_trick_text(view.last_trick, names, ranks)} (won by {won_by})")
    if view.phase == engine.PLAY:
        number = sum(view.tricks_won) + 1
        shown = _trick_text(view.trick, names, ranks) or f"(empty; {_does(names[view.leader], 'lead')})"
        lines.append(f"trick: {shown}   (trick {number} of {TRICKS_PER_DEAL})")
    if view.viewer >= 0:
        lines.append(_hand_line(view, ranks))
    return "\n".join(lines)


def _does(name: str, verb: str) -> str:
    """`you lead` (or `You lead`) for the person, `seat 1 (heuristic) leads` for anyone else."""
    return f"{name} {verb}" if name.lower() == YOU else f"{name} {verb}s"


def _trick_text(trick: Sequence[tuple[int, int]], names: Sequence[str], ranks: Ranks = RANK_TEXT) -> str:
    return ", ".join(f"{names[seat]} {card_text(card, ranks)}" for seat, card in trick)


def _possessive(names: Sequence[str], seat: int) -> str:
    return "your" if names[seat] == YOU else f"{names[seat]}'s"


def _hand_line(view: TableView, ranks: Ranks) -> str:
    name = view.names[view.viewer]
    if view.first_six_only:
        whose = "your first six cards" if name == YOU else f"first six cards of {name}"
        return f"{whose} - the mode is chosen from these (R9): {hand_text(view.hand, ranks)}"
    whose = "your hand" if name == YOU else f"hand of {name}"
    return f"{whose}: {hand_text(view.hand, ranks)}"


def seat_view(state: engine.State, viewer: int, names: Sequence[str], game: int = 0, ranks: Ranks = RANK_TEXT) -> str:
    """The table as seat `viewer` sees it (text; cards written with `ranks`, see `Ranks`)."""
    return table_text(seat_table(state, viewer, names, game), ranks)


def referee_view(state: engine.State, names: Sequence[str], game: int = 0) -> str:
    """The table as the seat to act sees it (it follows the turn); the public table once the game is over."""
    return seat_view(state, max(int(state.to_act[game]), 0), names, game)


def observation_view(observation: np.ndarray) -> str:
    """The table held in one observation vector (seats `you`, `left`, `right`)."""
    return table_text(observation_table(observation))


# ============================================================================ the terminal game's words

def decision_hint(state: engine.State, names: Sequence[str], game: int = 0) -> str:
    """One line saying what the seat to act is asked to decide, and the rule (addressed to it)."""
    phase, seat = int(state.phase[game]), int(state.to_act[game])
    if phase == engine.MODE:
        return "You are the playmaker: choose the mode from your first six cards (R8, R9)."
    if phase in (engine.GIVE, engine.RETURN):
        pair = int(state.exchange_pair[game])
        giver, receiver = int(state.exchange_giver[game, pair]), int(state.exchange_receiver[game, pair])
        if phase == engine.GIVE:
            due = int(state.exchange_count[game, pair]) - int(state.exchange_done[game, giver, receiver])
            return (f"Exchange (R19-R21): give a card to {names[receiver]}; {due} card(s) still to give. "
                    f"A non-trump comes back as the receiver's highest card of that suit.")
        return (f"{_capital(names[giver])} gave you a trump, {card_text(int(state.exchange_trump[game]))}: "
                f"return any card (R21).")
    if phase == engine.DISCARD:
        return f"Discard {int(count(state.discards[game:game + 1])[0]) + 1} of 4 (face down: no one else sees it)."
    if phase != engine.PLAY:
        return "The game is over."
    if int(state.trick[game, 0]) < 0:
        return "Your lead: play any card (R12)."
    led_suit, mode = int(state.trick[game, 0]) // 13, int(state.mode[game])
    hint = f"Play to the trick: follow {SUIT_SYMBOLS[led_suit]} if you can (R13)"
    if mode >= NO_TRUMP:
        hint += f", else any card (R14: no trumps in {MODE_NAMES[mode]})"
    elif led_suit == mode:
        hint += ", else any card (trumps were led)"
    else:
        hint += f", else trump ({SUIT_SYMBOLS[mode]}) if you can (R14), else any card"
    rules = state.rules
    extra = [text for on, text in ((rules.must_overtake, "beat the best card of the led suit when you can"),
                                   (rules.must_overtrump, "beat a trump on the table when you trump"))
             if on]
    return hint + (f"; R15 option: {' and '.join(extra)}." if extra else ".")


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def before_step(state: engine.State, game: int = 0) -> dict[str, Any]:
    """What `Narrator.step` needs to know of the state before a step."""
    pair = min(int(state.exchange_pair[game]), 1)
    return {"phase": int(state.phase[game]), "seat": int(state.to_act[game]), "dealer": int(state.dealer[game]),
            "mode": int(state.mode[game]), "deal": int(state.deal[game]),
            "tricks_won": state.tricks_won[game].copy(),
            "giver": int(state.exchange_giver[game, pair]), "receiver": int(state.exchange_receiver[game, pair])}


class Narrator:
    """Tells `viewer` what happened in each step of game 0, showing only what its seat may see
    (the cards of an exchange only to the pair, R22; discards only to the playmaker)."""

    def __init__(self, viewer: int, names: Sequence[str], output: TextIO) -> None:
        self.viewer, self.names, self.output = viewer, tuple(names), output

    def say(self, text: str) -> None:
        print(text, file=self.output)

    def deal_start(self, state: engine.State) -> None:
        dealer = int(state.dealer[0])
        roles = ", ".join(f"{engine.ROLE_NAMES[r]} {self.names[(dealer + r) % 3]}" for r in range(3))
        self.say(f"\n--- Deal {int(state.deal[0]) + 1} of {state.rules.num_deals}: {roles} ---")

    def step(self, before: dict[str, Any], action: int, state: engine.State) -> None:
        """Narrate the step that took `action` (`before` from `before_step`)."""
        phase, seat = before["phase"], before["seat"]
        name = _capital(self.names[seat])
        if phase == engine.MODE:
            self.say(f"{name} chose {MODE_TEXT[action - MODE_ACTION_OFFSET]}.")
            if int(state.phase[0]) == engine.GIVE:
                self._announce_exchanges(state)
        elif phase == engine.GIVE:
            self._give(seat, before["receiver"], action, int(state.last_returned[0]))
        elif phase == engine.RETURN:
            self._return(before["giver"], seat, action)
        elif phase == engine.DISCARD:
            if seat == self.viewer:
                self.say(f"You discarded {card_text(action)}.")
            elif int(state.phase[0]) != engine.DISCARD:
                self.say(f"{name} discarded four cards face down.")
        elif phase == engine.PLAY:
            self.say(f"{_does(name, 'play')} {card_text(action)}.")
            self._trick_done(state)
        if phase in (engine.MODE, engine.GIVE, engine.RETURN) and int(state.phase[0]) == engine.DISCARD:
            playmaker = (int(state.dealer[0]) + engine.PLAYMAKER) % 3
            talon = " ".join(card_text(c) for c in state.talon_cards[0])
            self.say(f"The talon is turned face up: {talon}; it goes to the playmaker, {self.names[playmaker]}.")
        if state.deal_ended[0]:
            self.deal_end(before, state)

    def _announce_exchanges(self, state: engine.State) -> None:
        pairs = [(int(g), int(r), int(n)) for g, r, n in
                 zip(state.exchange_giver[0], state.exchange_receiver[0], state.exchange_count[0]) if g >= 0]
        listed = "; ".join(f"{self.names[g]} -> {self.names[r]}: {n} card(s)" for g, r, n in pairs)
        self.say(f"Exchanges after the last deal's points (R18-R20): {listed}.")

    def _give(self, giver: int, receiver: int, card: int, returned: int) -> None:
        if not sees_exchanged_cards(self.viewer, giver, receiver):
            if returned >= 0:  # a forced return completed the card's exchange
                self.say(f"{_capital(self.names[giver])} and {self.names[receiver]} exchanged a card "
                         f"(R22: you do not see which).")
            return
        if giver == self.viewer:
            back = f"; {self.names[receiver]} returned {card_text(returned)} (R21)" if returned >= 0 else \
                " (a trump: the receiver returns a card of its choice)"
            self.say(f"You gave {card_text(card)} to {self.names[receiver]}{back}.")
        else:
            back = f"; you had to return {card_text(returned)} (R21: your highest of that suit)" if returned >= 0 \
                else " (a trump: return any card, R21)"
            self.say(f"{_capital(self.names[giver])} gave you {card_text(card)}{back}.")

    def _return(self, giver: int, receiver: int, card: int) -> None:
        if not sees_exchanged_cards(self.viewer, giver, receiver):
            self.say(f"{_capital(self.names[giver])} and {self.names[receiver]} exchanged a card "
                     f"(R22: you do not see which).")
        elif receiver == self.viewer:
            self.say(f"You returned {card_text(card)} to {self.names[giver]}.")
        else:
            self.say(f"{_capital(self.names[receiver])} returned {card_text(card)} to you.")

    def _trick_done(self, state: engine.State) -> None:
        winner = int(state.last_trick_winner[0])
        if winner < 0:
            return
        leader = int(state.last_trick_leader[0])
        cards = ", ".join(card_text(c) for c in state.last_trick[0])
        number = TRICKS_PER_DEAL if state.deal_ended[0] else int(state.tricks_won[0].sum())
        self.say(f"Trick {number}: {cards}, led by {self.names[leader]}; won by {self.names[winner]}.")

    def deal_end(self, before: dict[str, Any], state: engine.State) -> None:
        dealer, mode = before["dealer"], before["mode"]
        targets = engine.MIN_TARGETS if mode == MINIMUM else engine.TARGETS
        won = [int(x) for x in before["tricks_won"]]
        won[int(state.last_trick_winner[0])] += 1  # the last trick (the state already holds the next deal)
        points, scores = state.deal_points[0].tolist(), state.scores[0].tolist()
        rule = "R24: P = target - tricks" if mode == MINIMUM else "R23: P = tricks - target"
        self.say(f"Deal {before['deal'] + 1} over, {MODE_TEXT[mode]} ({rule}):")
        width = max(len(name) for name in self.names) + 2
        for seat in range(3):
            role = (seat - dealer) % 3
            self.say(f"  {self.names[seat]:<{width}}{engine.ROLE_NAMES[role]:<11}tricks {won[seat]:>2} / target "
                     f"{int(targets[role]):>2}   points {points[seat]:+d}   total {scores[seat]:+d}")

    def game_over(self, scores: Sequence[int]) -> None:
        self.say("\n=== Game over ===")
        width = max(len(name) for name in self.names) + 2
        for seat in range(3):
            self.say(f"  {self.names[seat]:<{width}}{scores[seat]:+d}")
        best = max(scores)
        winners = [self.names[seat] for seat in range(3) if scores[seat] == best]
        if len(winners) == 1:
            self.say(f"Winner: {winners[0]}.")
        else:
            self.say(f"Shared win (R6, equal totals): {', '.join(winners)}.")
