"""Play 3-5-8 at the terminal against agents.

    python -m sergeant_major_env.play --opponents heuristic,heuristic
    python -m sergeant_major_env.play --opponents greedy,random --seat 2 --seed 7 --option num_deals=3

You hold one seat (``--seat``, default 0); the opponents are agents made by
``agents.make_agent`` (``random``, ``greedy``, ``heuristic``, ``pimc``, ``ppo:PATH``, ...). At each of
your decisions the table is shown (deal, mode and trumps, each seat's role, target, tricks
and score, the talon once face up, the trick on the table, your hand by suit) with your
legal moves. Type a card as rank and suit in either order and any case: ``QH``, ``qh``,
``10h``, ``T♥``, ``♥Q``; a mode as ``S``/``spades``/``♠`` ... ``NT`` (no-trump) or ``MIN``
(minimum). ``?`` prints help, ``table`` the table again, ``quit`` (or Ctrl-D, Ctrl-C)
leaves. An illegal move is refused with the rule it breaks (the engine's
``illegal_reason``) and you are asked again. After each deal its summary and points are
shown, and the final scores at the end.

Everything is injectable for tests and other front ends: :func:`main` takes ``argv``,
``input_fn`` (called with the prompt, returns a line) and ``output`` (a text stream);
:func:`play_game` plays one game with given agent objects. The rules are the engine's;
this module only shows them and reads moves (:func:`parse_move`).
"""

from __future__ import annotations

import argparse
import re
import secrets
import sys
from typing import Any, Callable, Sequence, TextIO

import numpy as np

from . import engine
from .cards import MODE_ACTION_OFFSET, MODE_NAMES, RANKS, SUIT_SYMBOLS
from .observation import SEGMENTS
from .policies import decide, policy_name
from .rules import Rules

MODE_TEXT = tuple(f"trumps {s}" for s in SUIT_SYMBOLS) + ("no-trump (NT)", "minimum (MIN)")
SUIT_WORDS = ("spades", "clubs", "hearts", "diamonds")


class QuitGame(Exception):
    """The person asked to leave the game (``quit``)."""


# ============================================================================ input

_SUIT_CHARS = {"s": 0, "c": 1, "h": 2, "d": 3, "♠": 0, "♣": 1, "♥": 2, "♦": 3, "♤": 0, "♧": 1, "♡": 2, "♢": 3}
_RANK_CHARS = {**{str(r): str(r) for r in range(2, 10)}, "10": "T", "t": "T", "j": "J", "q": "Q", "k": "K",
               "a": "A"}
_RANK = r"(10|[2-9tjqka])"
_SUIT = "([schd♠♣♥♦♤♧♡♢])"
_CARD_RANK_FIRST = re.compile(f"^{_RANK}{_SUIT}$")
_CARD_SUIT_FIRST = re.compile(f"^{_SUIT}{_RANK}$")
_MODE_WORDS = {
    **{c: s for c, s in _SUIT_CHARS.items()},
    **{w: s for s, w in enumerate(SUIT_WORDS)}, **{w[:-1]: s for s, w in enumerate(SUIT_WORDS)},
    **{f"trumps{c}": s for c, s in _SUIT_CHARS.items()}, **{f"trump{c}": s for c, s in _SUIT_CHARS.items()},
    "nt": 4, "notrump": 4, "notrumps": 4, "n": 4, "bk": 4, "ba": 4,
    "min": 5, "minimum": 5, "m": 5, "mbr": 5, "bl": 5,
}
HELP = """How to type a move:
  a card: rank then suit or suit then rank, any case: QH  qh  10h  T♥  ♥Q  (ranks 2-9, T or 10, J, Q, K, A;
          suits S C H D or ♠ ♣ ♥ ♦)
  a mode (as playmaker): S, C, H, D or spades ... diamonds or ♠ ♣ ♥ ♦ for trumps; NT (no-trump); MIN (minimum)
  Enter alone: the only legal move, when there is just one
  ?  this help     table  show the table again     quit  leave the game (also Ctrl-D / Ctrl-C)"""


def parse_move(text: str) -> int:
    """The action id (RULES.md section 10) a person typed: a card (``QH``, ``10h``, ``♥Q``,
    ``T♥``) -> 0..51, a mode (``NT``, ``min``, ``spades``, ``♠``, ``mode NT``) -> 52..57.
    Raises ValueError with a hint on anything else."""
    compact = re.sub(r"[\s\-_\ufe0f]", "", str(text)).lower()
    if compact.startswith("mode"):
        compact = compact[4:]
    if compact in _MODE_WORDS:
        return MODE_ACTION_OFFSET + _MODE_WORDS[compact]
    rank_first = _CARD_RANK_FIRST.match(compact)
    suit_first = _CARD_SUIT_FIRST.match(compact)
    if rank_first:
        rank, suit = rank_first.groups()
    elif suit_first:
        suit, rank = suit_first.groups()
    else:
        raise ValueError(f"cannot read {text.strip()!r} as a card or a mode: type a card like QH, 10h, ♥Q or T♥, "
                         f"or a mode like NT, MIN, spades or ♠ (? for help)")
    return _SUIT_CHARS[suit] * 13 + RANKS.index(_RANK_CHARS[rank])


def move_text(action: int) -> str:
    """``Q♥`` for a card, ``NT`` / ``♠ trumps`` for a mode."""
    action = int(action)
    if action < MODE_ACTION_OFFSET:
        return card_text(action)
    mode = action - MODE_ACTION_OFFSET
    return f"{SUIT_SYMBOLS[mode]} ({MODE_NAMES[mode]})" if mode < 4 else MODE_NAMES[mode]


def card_text(card: int) -> str:
    return RANKS[int(card) % 13] + SUIT_SYMBOLS[int(card) // 13]


def hand_text(bits: int) -> str:
    """Cards grouped by suit, high to low: ``♠ A K 7   ♥ Q 9``."""
    groups = []
    for suit, symbol in enumerate(SUIT_SYMBOLS):
        ranks = [RANKS[r] for r in range(12, -1, -1) if int(bits) >> (13 * suit + r) & 1]
        if ranks:
            groups.append(f"{symbol} {' '.join(ranks)}")
    return "   ".join(groups) or "(no cards)"


def legal_text(legal_mask: np.ndarray) -> str:
    """The legal moves of one decision, for the prompt: modes, or cards grouped by suit."""
    actions = np.flatnonzero(np.asarray(legal_mask, dtype=bool))
    if actions.size and actions[0] >= MODE_ACTION_OFFSET:
        return "  ".join(move_text(a) for a in actions)
    return hand_text(sum(1 << int(a) for a in actions))


def ask_move(legal_mask: np.ndarray, input_fn: Callable[[str], str], output: TextIO, prompt: str = "your move> ",
             explain: Callable[[int], str] | None = None, show: Callable[[], str] | None = None) -> int:
    """Read moves until a legal one is typed and return it. A bad line gets a message and a
    new prompt; ``quit`` raises :class:`QuitGame`; EOFError / KeyboardInterrupt pass through.
    ``explain(action)`` says why a move is illegal (else a generic message), ``show()`` the table."""
    legal_mask = np.asarray(legal_mask, dtype=bool)
    legal = np.flatnonzero(legal_mask)
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
            print(f"legal: {legal_text(legal_mask)}", file=output)
            continue
        if not word:
            if legal.size == 1:
                return int(legal[0])
            print(f"type a move; legal: {legal_text(legal_mask)}", file=output)
            continue
        try:
            action = parse_move(line)
        except ValueError as error:
            print(str(error), file=output)
            continue
        if 0 <= action < legal_mask.size and legal_mask[action]:
            return action
        reason = explain(action) if explain else ""
        print(f"{move_text(action)} is not allowed now{': ' + reason if reason else ''}. "
              f"Legal: {legal_text(legal_mask)}", file=output)


# ============================================================================ display

def who(seat: int, human: int, names: Sequence[str]) -> str:
    return f"you (seat {seat})" if seat == human else f"seat {seat} ({names[seat]})"


def render_table(state: engine.State, human: int, names: Sequence[str]) -> str:
    """The table as the person at seat ``human`` may see it (game 0 of ``state``)."""
    phase, to_act, mode = int(state.phase[0]), int(state.to_act[0]), int(state.mode[0])
    dealer = int(state.dealer[0])
    num_deals = state.rules.num_deals
    deal = min(int(state.deal[0]), num_deals - 1) + 1
    mode_line = MODE_TEXT[mode] if mode >= 0 else "not chosen yet"
    lines = [f"=== deal {deal} of {num_deals} === mode: {mode_line} ===",
             f"  {'seat':<6}{'player':<14}{'role':<11}{'target':>6}{'tricks':>7}{'score':>7}"]
    targets = engine.MIN_TARGETS if mode == 5 else engine.TARGETS
    for seat in range(3):
        role = (seat - dealer) % 3
        marker = ">" if seat == to_act else " "
        name = "you" if seat == human else names[seat]
        target = str(int(targets[role])) if mode >= 0 else "-"
        lines.append(f"{marker} {seat:<6}{name:<14}{engine.ROLE_NAMES[role]:<11}{target:>6}"
                     f"{int(state.tricks_won[0, seat]):>7}{int(state.scores[0, seat]):>+7}")
    if phase == engine.MODE and to_act == human:
        used = int(state.modes_used[0, human])
        left = [move_text(MODE_ACTION_OFFSET + m) for m in range(6) if not used >> m & 1]
        lines.append(f"your modes left (R8: each once as playmaker): {'  '.join(left)}")
    if engine.DISCARD <= phase < engine.OVER:
        lines.append(f"talon (face up): {' '.join(card_text(c) for c in state.talon_cards[0])}")
        if human == (dealer + engine.PLAYMAKER) % 3 and int(state.discards[0]):
            lines.append(f"your discards: {hand_text(int(state.discards[0]))}")
    if phase == engine.PLAY:
        leader = int(state.leader[0])
        trick = [int(c) for c in state.trick[0] if c >= 0]
        shown = ", ".join(f"{who((leader + i) % 3, human, names)} {card_text(c)}" for i, c in enumerate(trick))
        lines.append(f"trick {int(state.tricks_won[0].sum()) + 1}: {shown or '(empty)'}")
    if phase == engine.MODE and to_act == human:
        lines.append(f"your first six cards (R9: choose the mode from these): {hand_text(int(state.first_six[0]))}")
    elif phase != engine.OVER:
        lines.append(f"your hand: {hand_text(int(state.hands[0, human]))}")
    return "\n".join(lines)


def decision_hint(state: engine.State, human: int, names: Sequence[str]) -> str:
    """One line saying what the person is asked to decide, and the rule."""
    phase = int(state.phase[0])
    if phase == engine.MODE:
        return "You are the playmaker: choose the mode (R8, R9)."
    if phase in (engine.GIVE, engine.RETURN):
        pair = int(state.exchange_pair[0])
        giver, receiver = int(state.exchange_giver[0, pair]), int(state.exchange_receiver[0, pair])
        due = int(state.exchange_count[0, pair]) - int(state.exchange_done[0, giver, receiver])
        if phase == engine.GIVE:
            return (f"Exchange (R19-R21): give a card to {who(receiver, human, names)}; {due} card(s) still to give "
                    f"to it. A non-trump comes back as its highest card of that suit.")
        return (f"{who(giver, human, names)} gave you a trump, {card_text(int(state.exchange_trump[0]))}: "
                f"return any card (R21).")
    if phase == engine.DISCARD:
        return f"Discard {engine.count(state.discards[:1])[0] + 1} of 4 (face down, section 5)."
    if int(state.trick[0, 0]) < 0:
        return "Your lead: play any card."
    led = int(state.trick[0, 0]) // 13
    return f"Play to the trick: follow {SUIT_SYMBOLS[led]} if you can (R13), else trump if you can (R14)."


def render_observation(observation: np.ndarray) -> str:
    """A short text view of one observation vector (for :class:`agents.human.HumanAgent` when
    no engine state is at hand). Seats are relative: you, left, right."""
    obs = np.asarray(observation, dtype=np.float32).reshape(-1)

    def seg(name: str) -> np.ndarray:
        return obs[SEGMENTS[name]]

    def cards(plane: np.ndarray) -> int:
        return sum(1 << int(c) for c in np.flatnonzero(plane > 0.5))

    mode = np.flatnonzero(seg("mode") > 0.5)
    mode_line = MODE_TEXT[int(mode[0])] if mode.size else "not chosen yet"
    lines = [f"deal {int(round(seg('deal')[0] * 18)) + 1}, mode: {mode_line}"]
    roles = seg("roles").reshape(3, 3)
    for rel, label in enumerate(("you", "left", "right")):
        role = engine.ROLE_NAMES[int(roles[rel].argmax())] if roles[rel].any() else "-"
        lines.append(f"  {label:<6}{role:<11}target {round(seg('targets')[rel] * 8):>2}  tricks "
                     f"{round(seg('tricks_won')[rel] * 16):>2}  score {round(seg('scores')[rel] * 50):+d}")
    if seg("talon").any():
        lines.append(f"talon: {hand_text(cards(seg('talon')))}")
    trick = seg("trick").reshape(3, 52)
    played = [int(np.flatnonzero(p > 0.5)[0]) for p in trick if p.any()]
    if played:
        leader = ("you", "left", "right")[int(seg("trick_leader").argmax())]
        lines.append(f"trick (led by {leader}): {' '.join(card_text(c) for c in played)}")
    lines.append(f"your hand: {hand_text(cards(seg('hand')))}")
    return "\n".join(lines)


# ============================================================================ the game

class _Narrator:
    """Tells the person what happened in each step, showing only what its seat may see."""

    def __init__(self, human: int, names: Sequence[str], output: TextIO) -> None:
        self.human, self.names, self.output = human, list(names), output

    def say(self, text: str) -> None:
        print(text, file=self.output)

    def who(self, seat: int) -> str:
        return who(seat, self.human, self.names)

    def deal_start(self, state: engine.State) -> None:
        dealer = int(state.dealer[0])
        roles = ", ".join(f"{engine.ROLE_NAMES[r]} {self.who((dealer + r) % 3)}" for r in range(3))
        self.say(f"\n--- Deal {int(state.deal[0]) + 1} of {state.rules.num_deals}: {roles} ---")

    def step(self, before: dict[str, Any], action: int, state: engine.State) -> None:
        phase, seat = before["phase"], before["seat"]
        human = self.human
        if phase == engine.MODE:
            self.say(f"{self.who(seat)} chose {MODE_TEXT[action - MODE_ACTION_OFFSET]}.")
            if int(state.phase[0]) == engine.GIVE:
                pairs = [(int(g), int(r), int(n)) for g, r, n in
                         zip(state.exchange_giver[0], state.exchange_receiver[0], state.exchange_count[0]) if g >= 0]
                listed = "; ".join(f"{self.who(g)} -> {self.who(r)}: {n} card(s)" for g, r, n in pairs)
                self.say(f"Exchanges after the last deal's points (R18-R20): {listed}.")
        elif phase == engine.GIVE:
            giver, receiver = seat, before["receiver"]
            returned = int(state.last_returned[0])
            if giver == human:
                back = f"; {self.who(receiver)} returned {card_text(returned)} (R21)" if returned >= 0 else \
                    " (a trump: the receiver returns a card of its choice)"
                self.say(f"You gave {card_text(action)} to {self.who(receiver)}{back}.")
            elif receiver == human:
                back = f"; you had to return {card_text(returned)} (R21: your highest of that suit)" if returned >= 0 \
                    else " (a trump)"
                self.say(f"{self.who(giver)} gave you {card_text(action)}{back}.")
            elif returned >= 0:
                self.say(f"{self.who(giver)} and {self.who(receiver)} exchanged a card (R22: you do not see which).")
        elif phase == engine.RETURN:
            giver = before["giver"]
            if seat == human:
                self.say(f"You returned {card_text(action)} to {self.who(giver)}.")
            elif giver == human:
                self.say(f"{self.who(seat)} returned {card_text(action)} to you.")
            else:
                self.say(f"{self.who(giver)} and {self.who(seat)} exchanged a card (R22: you do not see which).")
        elif phase == engine.DISCARD:
            if seat == human:
                self.say(f"You discarded {card_text(action)}.")
            elif int(state.phase[0]) != engine.DISCARD:
                self.say(f"{self.who(seat)} discarded four cards face down.")
        elif phase == engine.PLAY:
            self.say(f"{'You play' if seat == human else self.who(seat) + ' plays'} {card_text(action)}.")
            winner = int(state.last_trick_winner[0])
            if winner >= 0:
                leader = int(state.last_trick_leader[0])
                cards_ = ", ".join(f"{card_text(c)}" for c in state.last_trick[0])
                number = 16 if state.deal_ended[0] else int(state.tricks_won[0].sum())
                self.say(f"Trick {number} ({self.who(leader)} led: {cards_}) won by {self.who(winner)}.")
        if before["phase"] in (engine.MODE, engine.GIVE, engine.RETURN) and int(state.phase[0]) == engine.DISCARD:
            playmaker = (int(state.dealer[0]) + engine.PLAYMAKER) % 3
            talon = " ".join(card_text(c) for c in state.talon_cards[0])
            self.say(f"The talon is turned face up: {talon}; it goes to the playmaker, {self.who(playmaker)}.")
        if state.deal_ended[0]:
            self.deal_end(before, state)

    def deal_end(self, before: dict[str, Any], state: engine.State) -> None:
        dealer, mode = before["dealer"], before["mode"]
        targets = engine.MIN_TARGETS if mode == 5 else engine.TARGETS
        won = [int(x) for x in before["tricks_won"]]
        winner = int(state.last_trick_winner[0])
        won[winner] += 1  # the last trick of the deal (the state already holds the next deal)
        points = state.deal_points[0].tolist()
        rule = "R24: P = target - tricks" if mode == 5 else "R23: P = tricks - target"
        self.say(f"Deal {before['deal'] + 1} over, {MODE_TEXT[mode]} ({rule}):")
        scores = state.scores[0].tolist()
        for seat in range(3):
            role = (seat - dealer) % 3
            self.say(f"  {self.who(seat):<24}{engine.ROLE_NAMES[role]:<11}tricks {won[seat]:>2} / target "
                     f"{int(targets[role]):>2}   points {points[seat]:+d}   total {scores[seat]:+d}")


def play_game(agents: Sequence[Any], human: int, seed: int, rules: Rules, input_fn: Callable[[str], str],
              output: TextIO, names: Sequence[str] | None = None, record: bool = False) -> dict[str, Any]:
    """Play one game: ``agents[seat]`` decides for each seat but ``human`` (whose entry is
    ignored: the person types at ``input_fn``). Returns ``{"scores", "seed", "record"}``
    (``record`` when asked: RULES.md section 11). EOFError, KeyboardInterrupt and
    :class:`QuitGame` from the input pass through."""
    names = list(names) if names else [("you" if s == human else policy_name(agents[s])) for s in range(3)]
    state = engine.init([seed], rules)
    recorder = None
    if record:
        from .records import Recorder

        recorder = Recorder(state, names)
    rng = np.random.default_rng(seed)
    narrator = _Narrator(human, names, output)
    narrator.say(f"3-5-8: you are seat {human}; opponents: "
                 + ", ".join(f"seat {s} {names[s]}" for s in range(3) if s != human)
                 + f"; {rules.num_deals} deal(s); seed {seed}. Type ? for help.")
    narrator.deal_start(state)
    while int(state.phase[0]) != engine.OVER:
        seat = int(state.to_act[0])
        legal_mask = engine.legal_action_mask(state)
        if seat == human:
            print("\n" + render_table(state, human, names), file=output)
            print(decision_hint(state, human, names), file=output)
            print(f"legal: {legal_text(legal_mask[0])}", file=output)
            action = ask_move(legal_mask[0], input_fn, output,
                              explain=lambda a: engine.illegal_reason(state, 0, a),
                              show=lambda: render_table(state, human, names))
        else:
            action = int(decide(agents[seat], state, np.zeros(1, np.intp), legal_mask, rng)[0])
        pair = int(state.exchange_pair[0])
        before = {"phase": int(state.phase[0]), "seat": seat, "dealer": int(state.dealer[0]),
                  "mode": int(state.mode[0]), "deal": int(state.deal[0]),
                  "tricks_won": state.tricks_won[0].copy(),
                  "giver": int(state.exchange_giver[0, min(pair, 1)]),
                  "receiver": int(state.exchange_receiver[0, min(pair, 1)])}
        if recorder is not None:
            recorder.step(np.array([action]))
        else:
            engine.step(state, np.array([action]))
        narrator.step(before, action, state)
        if state.deal_ended[0] and not state.game_ended[0]:
            narrator.deal_start(state)
    scores = state.final_scores[0].tolist()
    best = max(scores)
    winners = [s for s in range(3) if scores[s] == best]
    narrator.say("\n=== Game over ===")
    for seat in range(3):
        narrator.say(f"  {who(seat, human, names):<24}{scores[seat]:+d}")
    if len(winners) == 1:
        narrator.say(f"Winner: {who(winners[0], human, names)}.")
    else:
        narrator.say(f"Shared win (R6, equal totals): {', '.join(who(s, human, names) for s in winners)}.")
    return {"scores": scores, "seed": seed, "record": recorder.finished[0] if recorder is not None else None}


# ============================================================================ command line

def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m sergeant_major_env.play", description=__doc__.split("\n\n")[0],
        epilog="\n\n".join(__doc__.split("\n\n")[1:3]), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--opponents", default="heuristic,heuristic", metavar="A,B",
                        help="agent names for the other two seats, in seat order (default heuristic,heuristic)")
    parser.add_argument("--seat", type=int, default=0, choices=(0, 1, 2), help="your seat (default 0)")
    parser.add_argument("--seed", type=int, default=None, metavar="S",
                        help="the game's seed (default: a random one, printed so you can replay the deal)")
    parser.add_argument("--option", "--options", dest="options", action="extend", nargs="+", default=[],
                        metavar="NAME=VALUE", help=f"rule options (RULES.md section 9): {', '.join(Rules.names())}")
    parser.add_argument("--record", metavar="FILE", help="write the game's record (RULES.md section 11) as JSON Lines")
    return parser


def main(argv: Sequence[str] | None = None, input_fn: Callable[[str], str] = input,
         output: TextIO | None = None) -> int:
    """The CLI; returns the exit status (0 played or left, 2 bad arguments, 130 Ctrl-C)."""
    output = output if output is not None else sys.stdout
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        rules = Rules.from_strings(args.options)
    except ValueError as error:
        parser.error(str(error))
    opponent_names = [n.strip() for n in args.opponents.split(",") if n.strip()]
    if len(opponent_names) != 2:
        parser.error(f"--opponents needs two agent names separated by a comma, got {args.opponents!r}")
    if args.seed is not None and args.seed < 0:
        parser.error("--seed must be at least 0")
    from .evaluation import make_named_agent  # imports the agents package lazily

    try:
        opponents = [make_named_agent(name) for name in opponent_names]
    except ValueError as error:
        parser.error(str(error))
    seed = args.seed if args.seed is not None else secrets.randbelow(2**31)
    agents: list[Any] = [None] * 3
    names = ["you"] * 3
    others = [s for s in range(3) if s != args.seat]
    for seat, agent, name in zip(others, opponents, opponent_names):
        agents[seat], names[seat] = agent, name
    try:
        result = play_game(agents, args.seat, seed, rules, input_fn, output, names=names, record=bool(args.record))
    except (EOFError, QuitGame):
        print(f"\nGame left unfinished (seed {seed}).", file=output)
        return 0
    except KeyboardInterrupt:
        print(f"\nInterrupted (seed {seed}).", file=output)
        return 130
    if args.record:
        from .records import write_jsonl

        record = result["record"]
        record["players"] = ["human" if s == args.seat else names[s] for s in range(3)]
        try:
            write_jsonl([record], args.record)
        except OSError as error:
            print(f"cannot write {args.record}: {error.strerror or error}", file=sys.stderr)
            return 1
        print(f"wrote the game record to {args.record}", file=output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
