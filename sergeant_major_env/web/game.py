"""One game played in the browser: the person's seat against two agents, run in the engine.

Every step the seat can see becomes an *event* (the renderer's lines telling what happened and
the seat's view after it, `.view.seat_view`); a step the seat cannot see (another pair's
trump given, the playmaker's first three discards) is not even an event of its own. The
person's moves come in through `WebGame.move`, checked against the engine (a stale or
illegal move is `Refused` and changes nothing); the bots play in a thread of their own. The
game is stepped through [`one_game.OneGame`][sergeant_major_env.one_game.OneGame], as every
view of one game; its record is made from its actions when it ends
([`records.record_of_actions`][sergeant_major_env.records.record_of_actions]).
"""

from __future__ import annotations

import io
import secrets
import threading
import time
from typing import Any, Callable, Sequence

import numpy as np

from .. import engine, render
from ..cards import NUM_ACTIONS, bits_to_bool
from ..one_game import OneGame, StepResult
from ..terminal_game import reason_for_you
from ..policies import decide, refuse_cheats
from ..records import record_of_actions
from ..rules import Rules
from .view import seat_view


class Refused(Exception):
    """A request the server refuses: an HTTP status and one line saying why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class WebGame:
    """One game between the person (`options.seat`) and two agents, played in the engine.

    Everything sent to the page is an *event*: `{"n", "deal", "actor", "text", "view"}`, the
    renderer's lines telling what happened and the seat's view after it. The person's moves
    come in through `move`; the bots' moves are made by `_run_bots` in a thread."""

    def __init__(self, game_id: str, agents: Sequence[Any], names: Sequence[str], seat: int, seed: int,
                 rules: Rules, on_over: Callable[["WebGame"], None] | None = None) -> None:
        bots = [s for s in range(3) if s != seat]
        refuse_cheats([agents[s] for s in bots], [names[s] for s in bots])  # a person is promised a fair table
        self.id, self.token = game_id, secrets.token_urlsafe(24)
        self.agents, self.seat, self.seed = list(agents), seat, seed
        self.names = list(names)
        self.labels = render.seat_labels(self.names, you=seat)
        self.game = OneGame(engine.init([seed], rules), observing=False)  # the one way a view steps one game
        self.state = self.game.state
        self.now: StepResult = self.game.refresh()  # who acts, in which decision; the last step's deal end
        self.actions: list[int] = []  # every decision so far, for the record
        self.players = ["human" if s == seat else self.names[s] for s in range(3)]  # the record's
        self.rng = np.random.default_rng(seed)
        self._text = io.StringIO()
        self.narrator = render.Narrator(seat, self.labels, self._text)
        self.events: list[dict[str, Any]] = []
        self.moves = 0  # the person's decisions so far
        self.changed = threading.Condition()
        self.last_seen = time.monotonic()
        self.thinking = False
        self.cancelled = False
        self.error: str | None = None
        self.record: dict[str, Any] | None = None
        self.on_over = on_over
        with self.changed:
            self.narrator.deal_start(self.state)
            self._event(-1)

    # ------------------------------------------------------------------ state

    @property
    def over(self) -> bool:
        return self.now.game_over

    @property
    def finished(self) -> bool:
        """Whether nothing more happens in this game: it is over, or it stopped on an error."""
        return self.over or self.error is not None

    def _lines(self) -> list[str]:
        lines = [line for line in self._text.getvalue().splitlines() if line.strip()]
        self._text.seek(0)
        self._text.truncate()
        return lines

    def _event(self, actor: int, view: dict[str, Any] | None = None, deal: int | None = None) -> None:
        """Keep an event: the narrator's lines since the last one and the view after it."""
        if view is None:
            view = seat_view(self.state, self.seat, self.labels, self.moves)
        self.events.append({"n": len(self.events), "deal": view["deal"] if deal is None else deal, "actor": actor,
                            "text": self._lines(), "view": view})
        self.changed.notify_all()

    def _step(self, action: int) -> None:
        """Apply one decision (the caller holds `changed`) and keep what the seat sees of it."""
        state, seat = self.state, self.seat
        actor, phase = self.now.to_act, self.now.phase
        before = render.before_step(state)
        closing = seat_view(state, seat, self.labels) if _ends_deal(state) else None
        self.now = self.game.step(action)
        self.actions.append(action)
        self.narrator.step(before, action, state)
        if closing is not None:
            self._close_deal(actor, closing, self.now.points)
            return
        seen = actor == seat or self.now.to_act == seat or phase == engine.PLAY or self._text.getvalue()
        if seen:  # a step the seat cannot see (another pair's trump, a discard face down) is no event
            self._event(actor)

    def _close_deal(self, actor: int, view: dict[str, Any], points: tuple[int, int, int]) -> None:
        """The deal's last trick and `points`: the engine has already dealt the next deal, so the
        view is the one before the last card with the public outcome put in (all hands empty)."""
        state = self.state
        winner, leader = int(state.last_trick_winner[0]), int(state.last_trick_leader[0])
        view["tricks_won"][winner] += 1
        view.update(hand=[], to_act=-1, decision=None, decision_text=None, legal=[], refusals={}, hint="", move=None, last_trick=None, scores=state.scores[0].tolist(),
                    trick=[[(leader + k) % 3, int(card)] for k, card in enumerate(state.last_trick[0])],
                    deal_over={"points": list(points), "winner": winner})
        if self.over:
            self.record = record_of_actions(self.seed, state.rules, self.actions, self.players)
            self.narrator.game_over(state.final_scores[0].tolist())
            view["final_scores"] = state.final_scores[0].tolist()
            self._event(actor, view)
            if self.on_over is not None:
                self.on_over(self)
            return
        self._event(actor, view)
        self.narrator.deal_start(state)
        self._event(-1)

    # ------------------------------------------------------------------ the person

    def move(self, number: Any, action: Any) -> None:
        """The person's decision number `number` is `action`; `Refused` (changing
        nothing) when it is not the person's turn, the number is stale or the move illegal."""
        if isinstance(number, bool) or not isinstance(number, int):
            raise Refused(400, f"move must be the number of your decision (an integer), got {number!r}")
        if isinstance(action, bool) or not isinstance(action, int) or not 0 <= action < NUM_ACTIONS:
            raise Refused(400, f"action must be an action id 0..{NUM_ACTIONS - 1} (RULES.md section 10), got {action!r}")
        with self.changed:
            if self.error:
                raise Refused(409, f"the game stopped: {self.error}")
            if self.over:
                raise Refused(409, "the game is over; start a new one")
            if number != self.moves:
                raise Refused(409, f"stale move {number}: the game is at your move {self.moves} "
                                   f"(the page was out of date or the move was sent twice); nothing was changed")
            to_act = self.now.to_act
            if to_act != self.seat:
                raise Refused(409, f"not your turn: {self.labels[to_act]} is to act; nothing was changed")
            reason = engine.illegal_reason(self.state, 0, action)
            if reason:
                raise Refused(422, f"{render.move_words(action)} is not allowed now: "
                                   f"{reason_for_you(reason, self.seat, render.move_words)}")
            self.moves += 1
            self._step(action)
        self.start_bots()

    # ------------------------------------------------------------------ the bots

    def start_bots(self) -> None:
        """Let the bots play, in a thread of their own, until the person is to act."""
        with self.changed:
            if self.thinking or self.over or self.cancelled or self.now.to_act == self.seat:
                return
            self.thinking = True
        threading.Thread(target=self._run_bots, name=f"bots-{self.id}", daemon=True).start()

    def _run_bots(self) -> None:
        """The bots' moves until the person is to act. `thinking` is cleared in the same
        critical section as the bot's move that gives the person the turn (or ends the game), so
        no response shows the person's turn with the bots still thinking, and a move arriving
        then starts a new run."""
        while True:
            with self.changed:
                if self._bots_done():
                    return
                actor = self.now.to_act
            try:
                # Only this thread changes the state now (the person waits for its turn).
                legal = bits_to_bool(self.game.legal, NUM_ACTIONS)  # bool[1, 58], as engine.legal_action_mask
                action = int(decide(self.agents[actor], self.state, np.zeros(1, np.intp), legal, self.rng)[0])
                with self.changed:
                    if not self.cancelled:
                        self._step(action)
                    if self._bots_done():
                        return
            except Exception as error:  # noqa: BLE001 - an agent's failure stops this game only, in words
                with self.changed:
                    self.error = f"{self.labels[actor]} failed: {type(error).__name__}: {error}"

    def _bots_done(self) -> bool:
        """Whether the bots stop here (the caller holds `changed`); if so, `thinking` is cleared."""
        if self.cancelled or self.over or self.error or self.now.to_act == self.seat:
            self.thinking = False
            self.changed.notify_all()
            return True
        return False

    # ------------------------------------------------------------------ responses

    def response(self, since: int) -> dict[str, Any]:
        """The events from number `since` on, and the game's status (the caller holds `changed`)."""
        out: dict[str, Any] = {
            "game": self.id, "seat": self.seat, "names": list(self.labels), "num_deals": self.state.rules.num_deals,
            "events": self.events[since:], "next": len(self.events), "over": self.over, "thinking": self.thinking,
            "error": self.error,
        }
        if self.over:  # the seed decides every deal: shown only at the end
            out.update(final_scores=self.state.final_scores[0].tolist(), seed=self.seed,
                       replay=f"/games/{self.id}/replay?token={self.token}")
        return out

    def wait(self, since: int, seconds: float) -> None:
        """Wait (holding `changed`) until there is an event from `since` on, or `seconds` pass."""
        self.changed.wait_for(lambda: len(self.events) > since or self.error or self.cancelled, timeout=seconds)


def _ends_deal(state: engine.State) -> bool:
    """Whether the next decision is the deal's last card (the last card of the 16th trick)."""
    return (int(state.phase[0]) == engine.PLAY and int(state.trick[0, 1]) >= 0
            and int(state.tricks_won[0].sum()) == 15)
