"""The terminal game's reusable pieces: reading a person's moves and playing one game.

The command line is `sergeant-major play` (`sergeant_major_env.cli.play`), which resolves
agent names with `sergeant_major_env.agents.make_agent`; this module never imports the agents
package, so other front ends and [`sergeant_major_env.agents.human.HumanAgent`][] can use it:

* `parse_move` reads a typed card (`QH`, `qh`, `10h`, `T♥`, `♥Q`) or mode
  (`S` / `spades` / `♠` / `trumps ♠` ... `NT`, `MIN`); anything it cannot read,
  or that is ambiguous (`trumps` alone: which suit?), is a ValueError saying so;
* `ask_move` asks until a legal move is typed (`?` help, `table` the table again,
  `quit` leaves);
* `play_game` plays one game with given agent objects, one seat typed by the person.

Everything shown is drawn by `sergeant_major_env.render`, from the person's seat only.
An illegal move is refused with the rule it breaks (the engine's `illegal_reason`, worded
for the person: "you") and the person is asked again. The rules are the engine's.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Sequence, TextIO

import numpy as np

from . import engine, render
from .cards import MODE_ACTION_OFFSET, NUM_ACTIONS, RANKS, bits_to_bool
from .one_game import OneGame
from .policies import decide, policy_name, refuse_cheats
from .records import record_of_actions
from .rules import Rules
from .seeding import check_seed


class QuitGame(Exception):
    """The person asked to leave the game (`quit`)."""


# ============================================================================ reading a move

_SUITS = {"s": 0, "c": 1, "h": 2, "d": 3, "♠": 0, "♣": 1, "♥": 2, "♦": 3, "♤": 0, "♧": 1, "♡": 2, "♢": 3}
_RANKS = {**{str(r): str(r) for r in range(2, 10)}, "10": "T", "t": "T", "j": "J", "q": "Q", "k": "K", "a": "A"}
_RANK = r"(10|[2-9tjqka])"
_SUIT = "([schd♠♣♥♦♤♧♡♢])"
_CARD_RANK_FIRST = re.compile(f"^{_RANK}{_SUIT}$")
_CARD_SUIT_FIRST = re.compile(f"^{_SUIT}{_RANK}$")
_WORD = re.compile(r"[a-z0-9]+|[♠♣♥♦♤♧♡♢]")
_ALLOWED = re.compile(r"^[a-z0-9♠♣♥♦♤♧♡♢\s\-_]*$")
_TRUMP_SUITS = {**_SUITS, **{w: s for s, w in enumerate(("spades", "clubs", "hearts", "diamonds"))},
                **{w: s for s, w in enumerate(("spade", "club", "heart", "diamond"))}}
_OTHER_MODES = {"nt": 4, "notrump": 4, "notrumps": 4, "n": 4, "bk": 4, "ba": 4,  # BK, BA: no-trump in the sources
                "min": 5, "minimum": 5, "m": 5, "mbr": 5, "bl": 5}
_TRUMP_WORDS = ("trump", "trumps")
_HOW = "type a card like QH, 10h, ♥Q or T♥, or a mode like NT, MIN, spades, ♠ or trumps ♠ (? for help)"
HELP = """How to type a move:
  a card: rank then suit or suit then rank, any case: QH  qh  10h  T♥  ♥Q  (ranks 2-9, T or 10, J, Q, K, A;
          suits S C H D or ♠ ♣ ♥ ♦)
  a mode (as playmaker): S, C, H, D, spades ... diamonds, ♠ ♣ ♥ ♦ or trumps ♠ for trumps;
          NT (no-trump); MIN (minimum)
  Enter alone: the only legal move, when there is just one
  ?  this help     table  show the table again     quit  leave the game (also Ctrl-D / Ctrl-C)"""


def parse_move(text: str) -> int:
    """The action id (RULES.md section 10) a person typed: a card (`QH`, `10h`, `♥Q`,
    `T♥`) -> 0..51, a mode (`NT`, `min`, `spades`, `♠`, `trumps ♠`, `mode NT`)
    -> 52..57. Raises ValueError on anything else, and on `trumps` without a suit."""
    typed = str(text).strip()
    lowered = typed.lower().replace("\ufe0f", "")  # the emoji variation selector of ♥️
    if not _ALLOWED.match(lowered):
        raise ValueError(f"cannot read {typed!r} as a card or a mode: {_HOW}")
    words = _WORD.findall(lowered)
    if words[:1] == ["mode"]:
        words = words[1:]
    compact = "".join(words)
    if compact in _OTHER_MODES:  # before the trump words: "no trumps" is NT
        return MODE_ACTION_OFFSET + _OTHER_MODES[compact]
    if words and (words[0] in _TRUMP_WORDS or words[-1] in _TRUMP_WORDS):
        suit = "".join(words[1:] if words[0] in _TRUMP_WORDS else words[:-1])
        if suit in _TRUMP_SUITS:
            return MODE_ACTION_OFFSET + _TRUMP_SUITS[suit]
        if not suit:
            raise ValueError(f"{typed!r} is ambiguous: trumps in which suit? type trumps ♠ (or spades, S), "
                             f"trumps ♣, trumps ♥ or trumps ♦; or NT / MIN for no trumps")
        raise ValueError(f"cannot read {typed!r}: after 'trumps' give a suit (S C H D, spades ... or ♠ ♣ ♥ ♦)")
    if compact in _TRUMP_SUITS:
        return MODE_ACTION_OFFSET + _TRUMP_SUITS[compact]
    rank_first, suit_first = _CARD_RANK_FIRST.match(compact), _CARD_SUIT_FIRST.match(compact)
    if rank_first:
        rank, suit = rank_first.groups()
    elif suit_first:
        suit, rank = suit_first.groups()
    else:
        raise ValueError(f"cannot read {typed!r} as a card or a mode: {_HOW}")
    return _SUITS[suit] * 13 + RANKS.index(_RANKS[rank])


def ask_move(legal_mask: np.ndarray, input_fn: Callable[[str], str], output: TextIO, prompt: str = "your move> ",
             explain: Callable[[int], str] | None = None, show: Callable[[], str] | None = None) -> int:
    """Read moves until a legal one is typed and return it. A bad or ambiguous line gets a
    message and a new prompt; `quit` raises `QuitGame`; EOFError / KeyboardInterrupt
    pass through. `explain(action)` says why a move is illegal (else a generic message),
    `show()` the table."""
    legal_mask = np.asarray(legal_mask, dtype=bool)
    legal = np.flatnonzero(legal_mask)
    legal_line = render.legal_text(legal_mask)
    while True:
        line = input_fn(prompt)
        if line is None:
            raise EOFError
        word = line.strip().lower()
        if word in ("quit", "exit", "q"):
            raise QuitGame
        if word in ("?", "help"):
            print(HELP, file=output)
            continue
        if word in ("table", "show"):
            print(show() if show else "", file=output)
            print(f"legal: {legal_line}", file=output)
            continue
        if not word:
            if legal.size == 1:
                return int(legal[0])
            print(f"type a move; legal: {legal_line}", file=output)
            continue
        try:
            action = parse_move(line)
        except ValueError as error:
            print(str(error), file=output)
            continue
        if 0 <= action < legal_mask.size and legal_mask[action]:
            return action
        reason = explain(action) if explain else ""
        print(f"{render.move_text(action)} is not allowed now{': ' + reason if reason else ''}. "
              f"Legal: {legal_line}", file=output)


def reason_for_you(reason: str, seat: int, name: Callable[[int], str] = render.move_text) -> str:
    """[`engine.illegal_reason`][] speaks of "seat N", R3's card names and suit and mode
    letters; the person at seat N reads "you" and the notation of the view showing it
    (`render.machine_names_for_people`: cards and modes as `name` names moves, `render.move_text`
    in the terminal: `R12: you do not hold 10♥`, `R13: you must follow suit ♦`)."""
    for third_person, second_person in ((f"seat {seat} has", "you have"), (f"seat {seat} does", "you do"),
                                        (f"seat {seat}", "you"), ("seat must", "you must")):
        reason = reason.replace(third_person, second_person)
    return render.machine_names_for_people(reason, name)


# ============================================================================ one game

def play_game(agents: Sequence[Any], human: int, seed: int, rules: Rules, input_fn: Callable[[str], str],
              output: TextIO, names: Sequence[str] | None = None, record: bool = False) -> dict[str, Any]:
    """Play one game: `agents[seat]` decides for each seat but `human` (whose entry is
    ignored: the person types at `input_fn`); `names[seat]` is how a seat's player is
    called (default: the agents' names). Returns `{"scores", "seed", "record"}` (`record`
    when asked: RULES.md section 11). An agent that sees the hidden cards (`pimc:cheat`) is refused
    ([`refuse_cheats`][]). EOFError, KeyboardInterrupt and `QuitGame` from
    the input pass through."""
    seed = check_seed(seed)
    if human not in (0, 1, 2):
        raise ValueError(f"the person's seat must be 0, 1 or 2, got {human!r}")
    names = list(names) if names else [render.YOU if s == human else policy_name(agents[s]) for s in range(3)]
    bots = [s for s in range(3) if s != human]
    refuse_cheats([agents[s] for s in bots], [names[s] for s in bots])  # a person is promised a fair table
    labels = render.seat_labels(names, you=human)
    game = OneGame(engine.init([seed], rules), observing=False)  # the one way a view steps one game
    state, result, actions = game.state, game.refresh(), []
    rng = np.random.default_rng(seed)
    narrator = render.Narrator(human, labels, output)
    opponents = ", ".join(labels[s] for s in range(3) if s != human)
    narrator.say(f"3-5-8: you hold seat {human}; opponents: {opponents}; {rules.num_deals} deal(s); seed {seed}. "
                 f"Type ? for help.")
    narrator.deal_start(state)
    while not result.game_over:
        seat = result.to_act
        legal_mask = bits_to_bool(game.legal, NUM_ACTIONS)  # bool[1, 58], as engine.legal_action_mask
        if seat == human:
            action = _ask_person(state, human, labels, legal_mask[0], input_fn, output)
        else:
            action = int(decide(agents[seat], state, np.zeros(1, np.intp), legal_mask, rng)[0])
        before = render.before_step(state)
        result = game.step(action)
        actions.append(action)
        narrator.step(before, action, state)
        if result.deal_ended and not result.game_over:
            narrator.deal_start(state)
    scores = state.final_scores[0].tolist()
    narrator.game_over(scores)
    kept = record_of_actions(seed, rules, actions, names) if record else None
    return {"scores": scores, "seed": seed, "record": kept}


def _ask_person(state: engine.State, human: int, labels: Sequence[str], legal_mask: np.ndarray,
                input_fn: Callable[[str], str], output: TextIO) -> int:
    """Show the person's view, the hint and the legal moves, and read a legal move."""
    def table() -> str:
        return render.seat_view(state, human, labels)

    print("\n" + table(), file=output)
    print(render.decision_hint(state, labels), file=output)
    print(f"legal: {render.legal_text(legal_mask)}", file=output)
    return ask_move(legal_mask, input_fn, output, show=table,
                    explain=lambda action: reason_for_you(engine.illegal_reason(state, 0, action), human))
