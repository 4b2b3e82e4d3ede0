"""The human seat: move parsing, prompts, and whole games at the terminal (sergeant_major_env.play)."""

from __future__ import annotations

import io

import numpy as np
import pytest

from sergeant_major_env import Rules, engine, play, records
from sergeant_major_env.cards import MODE_ACTION_OFFSET, NUM_ACTIONS, parse_card
from sergeant_major_env.observation import observe
from sergeant_major_env.policies import RandomPolicy


@pytest.fixture
def registry(monkeypatch):
    """The real agents registry when present, else a stand-in that knows "random"."""
    try:
        from agents import make_agent  # noqa: F401  (is the registry there?)
    except ImportError:
        def make_named_agent(name):
            if name != "random":
                raise ValueError(f"unknown agent {name!r}; known agents: random")
            return RandomPolicy()

        monkeypatch.setattr("sergeant_major_env.evaluation.make_named_agent", make_named_agent)


# ============================================================================ parsing

@pytest.mark.parametrize("text, card", [
    ("QH", "QH"), ("qh", "QH"), ("10h", "TH"), ("♥Q", "QH"), ("T♥", "TH"), ("10♥", "TH"), ("♥10", "TH"),
    (" q h ", "QH"), ("2s", "2S"), ("AD", "AD"), ("♦a", "AD"), ("kc", "KC"), ("♣K", "KC"), ("J♠", "JS"),
    ("h♥".replace("h", "9"), "9H"), ("♥️Q", "QH"),  # emoji variation selector
])
def test_parse_cards(text, card):
    assert play.parse_move(text) == parse_card(card)


@pytest.mark.parametrize("text, mode", [
    ("NT", 4), ("nt", 4), ("no trump", 4), ("no-trump", 4), ("min", 5), ("MIN", 5), ("minimum", 5),
    ("spades", 0), ("♠", 0), ("S", 0), ("clubs", 1), ("♣", 1), ("hearts", 2), ("h", 2), ("♦", 3), ("diamonds", 3),
    ("mode NT", 4), ("trumps ♥", 2),
])
def test_parse_modes(text, mode):
    assert play.parse_move(text) == MODE_ACTION_OFFSET + mode


@pytest.mark.parametrize("text", ["", "ZZ", "11h", "QX", "Q", "queen of hearts", "1h", "QHH"])
def test_parse_rejects_with_a_hint(text):
    with pytest.raises(ValueError, match="like QH"):
        play.parse_move(text)


def test_texts():
    assert play.card_text(parse_card("QH")) == "Q♥"
    assert play.hand_text((1 << parse_card("QH")) | (1 << parse_card("2S")) | (1 << parse_card("AS"))) == "♠ A 2   ♥ Q"
    mask = np.zeros(NUM_ACTIONS, dtype=bool)
    mask[[MODE_ACTION_OFFSET + 4, MODE_ACTION_OFFSET + 5]] = True
    assert play.legal_text(mask) == "NT  MIN"


# ============================================================================ prompts

class Script:
    """An input function typing the given lines; records its prompts."""

    def __init__(self, lines):
        self.lines = list(lines)
        self.prompts = []

    def __call__(self, prompt):
        self.prompts.append(prompt)
        if not self.lines:
            raise EOFError
        return self.lines.pop(0)


def test_bad_input_gives_a_message_and_a_new_prompt():
    mask = np.zeros(NUM_ACTIONS, dtype=bool)
    mask[[parse_card("QH"), parse_card("2H")]] = True
    out = io.StringIO()
    script = Script(["hello", "AS", "?", "", "qh"])
    action = play.ask_move(mask, script, out, explain=lambda a: "R13: seat 0 must follow suit H")
    assert action == parse_card("QH")
    assert len(script.prompts) == 5
    text = out.getvalue()
    assert "cannot read 'hello'" in text
    assert "A♠ is not allowed now: R13: seat 0 must follow suit H" in text
    assert "How to type a move" in text
    assert "legal: " not in text or "♥ Q 2" in text


def test_enter_takes_the_only_legal_move_and_quit_raises():
    mask = np.zeros(NUM_ACTIONS, dtype=bool)
    mask[7] = True
    assert play.ask_move(mask, Script([""]), io.StringIO()) == 7
    with pytest.raises(play.QuitGame):
        play.ask_move(mask, Script(["quit"]), io.StringIO())
    with pytest.raises(EOFError):
        play.ask_move(mask, Script([]), io.StringIO())


def test_illegal_move_names_the_engine_rule():
    """A held card that does not follow suit is refused citing R13 (engine.illegal_reason)."""
    rng = np.random.default_rng(0)
    for seed in range(50):
        state = engine.init([seed], Rules(num_deals=1))
        while state.phase[0] != engine.OVER:
            if state.phase[0] == engine.PLAY and state.trick[0, 0] >= 0:
                hand = engine.legal_action_mask(state)[0]
                held = [c for c in range(52) if int(state.hands[0, state.to_act[0]]) >> c & 1 and not hand[c]]
                if held:
                    out = io.StringIO()
                    legal = int(np.flatnonzero(hand)[0])
                    script = Script([play.card_text(held[0]), play.card_text(legal)])
                    action = play.ask_move(hand, script, out, explain=lambda a: engine.illegal_reason(state, 0, a))
                    assert action == legal
                    assert "R13" in out.getvalue() or "R14" in out.getvalue()
                    return
            engine.step(state, records.random_actions(state, rng))
    pytest.fail("no position with an illegal held card found")


# ============================================================================ whole games

class FirstLegalTyper:
    """Reads the screen like a person: types the first move of the last 'legal:' line."""

    def __init__(self, out: io.StringIO, first_illegal: bool = False):
        self.out = out
        self.prompts = 0
        self.first_illegal = first_illegal  # once: try a held card that is not legal first
        self.tried_illegal = False

    def __call__(self, prompt):
        self.prompts += 1
        lines = self.out.getvalue().splitlines()
        legal = [line for line in lines if line.startswith("legal: ")][-1][len("legal: "):]
        if self.first_illegal and not self.tried_illegal and lines[-2].startswith("Play to the trick"):
            hand = [line for line in lines if line.startswith("your hand: ")][-1][len("your hand: "):]
            if _cards(hand) != _cards(legal):
                self.tried_illegal = True
                return sorted(set(_cards(hand)) - set(_cards(legal)))[0]
        if "(" in legal or legal.split()[0] in ("NT", "MIN"):  # modes: '♠ (S)  NT  MIN'
            return legal.split()[0]
        return _cards(legal)[0]


def _cards(text: str) -> list[str]:
    """'♠ A 7   ♥ Q' -> ['A♠', '7♠', 'Q♥']; mode lists give their first word."""
    cards, suit = [], None
    for token in text.split():
        if token in "♠♣♥♦":
            suit = token
        elif suit is not None:
            cards.append(token + suit)
    return cards


def test_full_one_deal_game_with_a_scripted_person(registry):
    out = io.StringIO()
    typer = FirstLegalTyper(out, first_illegal=True)
    status = play.main(["--opponents", "random,random", "--seat", "1", "--seed", "3", "--option", "num_deals=1"],
                       input_fn=typer, output=out)
    text = out.getvalue()
    assert status == 0, text[-2000:]
    assert "=== Game over ===" in text
    assert "Deal 1 over" in text and "points" in text and "total" in text
    assert "Winner" in text or "Shared win" in text
    assert typer.prompts >= 5  # at least the person's 5 or more cards and decisions
    assert typer.tried_illegal and "is not allowed now: R1" in text  # R13 or R14, then a new prompt
    assert "your hand: " in text and "mode:" in text and "you (seat 1)" in text


def test_play_game_with_agent_objects_and_a_record(tmp_path):
    out = io.StringIO()
    result = play.play_game([RandomPolicy(), None, RandomPolicy()], 1, 12, Rules(num_deals=2), FirstLegalTyper(out),
                            out, record=True)
    assert sum(result["scores"]) == 0
    records.replay(result["record"])
    assert "Deal 2 over" in out.getvalue()


def test_record_option_writes_a_replayable_record(tmp_path, registry):
    out = io.StringIO()
    path = tmp_path / "game.jsonl"
    status = play.main(["--opponents", "random,random", "--seed", "8", "--option", "num_deals=1", "--record",
                        str(path)], input_fn=FirstLegalTyper(out), output=out)
    assert status == 0
    (record,) = records.read_jsonl(str(path))
    assert records.check_record(record) is None
    assert record["players"] == ["human", "random", "random"]


@pytest.mark.parametrize("error, status", [(EOFError, 0), (KeyboardInterrupt, 130)])
def test_eof_and_ctrl_c_leave_cleanly(registry, error, status):
    def typer(prompt):
        raise error

    out = io.StringIO()
    assert play.main(["--opponents", "random,random", "--seed", "1"], input_fn=typer, output=out) == status
    assert "seed 1" in out.getvalue().splitlines()[-1]


def test_quit_leaves_cleanly(registry):
    out = io.StringIO()
    assert play.main(["--opponents", "random,random", "--seed", "2"], input_fn=Script(["quit"]), output=out) == 0
    assert "unfinished" in out.getvalue()


@pytest.mark.parametrize("argv", [
    ["--opponents", "random"], ["--opponents", "random,nosuchagent"], ["--option", "nosuch=1"], ["--seat", "3"],
])
def test_bad_arguments_exit_2(registry, argv, capsys):
    argv = argv if "--opponents" in argv else [*argv, "--opponents", "random,random"]
    with pytest.raises(SystemExit) as exit_info:
        play.main(argv, input_fn=Script([]), output=io.StringIO())
    assert exit_info.value.code == 2
    assert "error" in capsys.readouterr().err


# ============================================================================ the human agent

def test_human_agent_is_a_batched_agent():
    from agents.human import HumanAgent

    state = engine.init([5], Rules(num_deals=1))
    mask = engine.legal_action_mask(state)
    out = io.StringIO()
    agent = HumanAgent(input_fn=Script(["banana", "nt"]), output=out)
    assert agent.name == "human"
    actions = agent.act(observe(state, int(state.to_act[0])), mask, np.random.default_rng(0))
    assert actions.dtype == np.int64 and actions.tolist() == [MODE_ACTION_OFFSET + 4]
    text = out.getvalue()
    assert "deal 1, mode: not chosen yet" in text and "your hand: " in text and "cannot read 'banana'" in text
    # a view of a position in play renders too
    rng = np.random.default_rng(1)
    while state.phase[0] != engine.PLAY or state.trick[0, 0] < 0:
        engine.step(state, records.random_actions(state, rng))
    view = play.render_observation(observe(state, int(state.to_act[0]))[0])
    assert "trick (led by" in view and "talon" in view


def test_registry_makes_the_human_agent():
    """make_agent("human") gives a HumanAgent (registered by agents/__init__.py; if it is not
    registered yet, the one-line hook is applied here and removed afterwards)."""
    agents = pytest.importorskip("agents")
    if not hasattr(agents, "make_agent"):
        pytest.skip("the agents registry is not there yet")
    from agents.human import HumanAgent

    added = "human" not in agents.known_agents()
    if added:
        agents.register_agent("human", lambda: __import__("agents.human", fromlist=["HumanAgent"]).HumanAgent(),
                              help="a person at the terminal (python -m sergeant_major_env.play)")
    try:
        assert isinstance(agents.make_agent("human"), HumanAgent)
    finally:
        if added:
            agents.unregister_agent("human")
