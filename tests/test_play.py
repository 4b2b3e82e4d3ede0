"""The terminal game: move parsing and prompts (sergeant_major_env.terminal_game), whole games, and the
command line (``sergeant-major play``, which resolves agent names with agents.make_agent)."""

from __future__ import annotations

import importlib.util
import io
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sergeant_major_env import Rules, engine, records, render, terminal_game
from sergeant_major_env.cards import MODE_ACTION_OFFSET, NUM_ACTIONS, parse_card
from sergeant_major_env.observation import observe
from sergeant_major_env.policies import RandomPolicy
from sergeant_major_env.seeding import MAX_SEED

ROOT = Path(__file__).resolve().parents[1]


def load_cli():
    """``sergeant-major play`` (``python play.py``): :mod:`sergeant_major_env.cli.play`."""
    return importlib.import_module("sergeant_major_env.cli.play")


@pytest.fixture(scope="module")
def cli():
    return load_cli()


# ============================================================================ parsing

@pytest.mark.parametrize("text, card", [
    ("QH", "QH"), ("qh", "QH"), ("10h", "TH"), ("♥Q", "QH"), ("T♥", "TH"), ("10♥", "TH"), ("♥10", "TH"),
    (" q h ", "QH"), ("2s", "2S"), ("AD", "AD"), ("♦a", "AD"), ("kc", "KC"), ("♣K", "KC"), ("J♠", "JS"),
    ("9♥", "9H"), ("♥️Q", "QH"),  # emoji variation selector
])
def test_parse_cards(text, card):
    assert terminal_game.parse_move(text) == parse_card(card)


@pytest.mark.parametrize("text, mode", [
    ("NT", 4), ("nt", 4), ("no trump", 4), ("no-trump", 4), ("min", 5), ("MIN", 5), ("minimum", 5),
    ("spades", 0), ("spade", 0), ("♠", 0), ("S", 0), ("clubs", 1), ("♣", 1), ("hearts", 2), ("h", 2), ("♦", 3),
    ("diamonds", 3), ("mode NT", 4), ("trumps ♥", 2), ("trump s", 0), ("trumps spades", 0), ("♥ trumps", 2),
    ("trumps d", 3), ("mode trumps c", 1),
])
def test_parse_modes(text, mode):
    assert terminal_game.parse_move(text) == MODE_ACTION_OFFSET + mode


@pytest.mark.parametrize("text", ["", "ZZ", "11h", "QX", "Q", "queen of hearts", "1h", "QHH", "Q!H"])
def test_parse_rejects_with_a_hint(text):
    with pytest.raises(ValueError, match="like QH"):
        terminal_game.parse_move(text)


@pytest.mark.parametrize("text", ["trumps", "trump", "TRUMPS", "mode trumps", " trumps "])
def test_trumps_without_a_suit_is_ambiguous(text):
    """Issue 11: 'trumps' at the mode prompt silently chose spades (irrevocably)."""
    with pytest.raises(ValueError, match="ambiguous: trumps in which suit"):
        terminal_game.parse_move(text)


def test_texts():
    assert render.card_text(parse_card("QH")) == "Q♥"
    assert render.hand_text((1 << parse_card("QH")) | (1 << parse_card("2S")) | (1 << parse_card("AS"))) == \
        "♠ A 2   ♥ Q"
    mask = np.zeros(NUM_ACTIONS, dtype=bool)
    mask[[MODE_ACTION_OFFSET + 4, MODE_ACTION_OFFSET + 5]] = True
    assert render.legal_text(mask) == "NT  MIN"


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
    action = terminal_game.ask_move(mask, script, out, explain=lambda a: "R13: you must follow suit H")
    assert action == parse_card("QH")
    assert len(script.prompts) == 5
    text = out.getvalue()
    assert "cannot read 'hello'" in text
    assert "A♠ is not allowed now: R13: you must follow suit H" in text
    assert "How to type a move" in text
    assert "type a move; legal: ♥ Q 2" in text


def test_ambiguous_mode_asks_again_and_chooses_nothing():
    mask = np.zeros(NUM_ACTIONS, dtype=bool)
    mask[MODE_ACTION_OFFSET:] = True
    out = io.StringIO()
    script = Script(["trumps", "trumps ♥"])
    assert terminal_game.ask_move(mask, script, out) == MODE_ACTION_OFFSET + 2
    assert len(script.prompts) == 2
    assert "'trumps' is ambiguous" in out.getvalue()


def test_enter_takes_the_only_legal_move_and_quit_raises():
    mask = np.zeros(NUM_ACTIONS, dtype=bool)
    mask[7] = True
    assert terminal_game.ask_move(mask, Script([""]), io.StringIO()) == 7
    with pytest.raises(terminal_game.QuitGame):
        terminal_game.ask_move(mask, Script(["quit"]), io.StringIO())
    with pytest.raises(EOFError):
        terminal_game.ask_move(mask, Script([]), io.StringIO())


def illegal_positions(count=40):
    """(state, seat, illegal action) from random one-deal games: held cards that break R13/R14,
    cards not held, used modes, cards in the mode decision."""
    rng = np.random.default_rng(0)
    found = []
    for seed in range(count):
        state = engine.init([seed], Rules(num_deals=2))
        while state.phase[0] != engine.OVER:
            seat = int(state.to_act[0])
            legal = engine.legal_action_mask(state)[0]
            illegal = np.flatnonzero(~legal)
            found.append((state.copy(), seat, int(rng.choice(illegal))))
            engine.step(state, records.random_actions(state, rng))
    return found


def test_illegal_move_names_the_engine_rule_and_says_you():
    """A refused move cites the rule (engine.illegal_reason), addressed to the person: never
    "seat N" for the person's own seat."""
    rules_seen = set()
    for state, seat, action in illegal_positions():
        reason = terminal_game.reason_for_you(engine.illegal_reason(state, 0, action), seat)
        assert re.match(r"^(R\d+|action ids)", reason), reason
        assert f"seat {seat}" not in reason and "seat must" not in reason, reason
        # Issue 50, item 6: in the person's notation: no R3 card name (TH), suit or mode letter, action id.
        assert not re.search(r"\b[2-9TJQKA][SCHD]\b|\b(suit|mode) [SCHD]\b|actions \d|exchange_|\(play\)", reason), reason
        rules_seen.add(reason.split(":")[0])
    assert {"R8", "R12", "R13", "R21"} <= rules_seen


def test_illegal_held_card_is_refused_with_R13_or_R14_and_asked_again():
    rng = np.random.default_rng(0)
    for seed in range(50):
        state = engine.init([seed], Rules(num_deals=1))
        while state.phase[0] != engine.OVER:
            if state.phase[0] == engine.PLAY and state.trick[0, 0] >= 0:
                seat = int(state.to_act[0])
                legal = engine.legal_action_mask(state)[0]
                held = [c for c in range(52) if int(state.hands[0, seat]) >> c & 1 and not legal[c]]
                if held:
                    out = io.StringIO()
                    script = Script([render.card_text(held[0]), render.card_text(int(np.flatnonzero(legal)[0]))])
                    terminal_game.ask_move(legal, script, out, explain=lambda a: terminal_game.reason_for_you(
                        engine.illegal_reason(state, 0, a), seat))
                    assert re.search(r"is not allowed now: R1[34]: you (must|cannot)", out.getvalue())
                    return
            engine.step(state, records.random_actions(state, rng))
    pytest.fail("no position with an illegal held card found")


# ============================================================================ hints

def positions_in_play(mode: int, rules=Rules(num_deals=1)):
    """One-deal games where the playmaker chose ``mode``, at a card to follow a lead."""
    rng = np.random.default_rng(0)
    for seed in range(200):
        state = engine.init([seed], rules)
        engine.step(state, np.array([MODE_ACTION_OFFSET + mode]))
        while state.phase[0] != engine.OVER:
            if state.phase[0] == engine.PLAY and state.trick[0, 0] >= 0:
                yield state
                break
            engine.step(state, records.random_actions(state, rng))


@pytest.mark.parametrize("mode", [4, 5])
def test_no_trump_hint_in_NT_and_MIN(mode):
    """Issue 11: the hint said 'else trump if you can (R14)' in NT and MIN, which have no trumps."""
    state = next(positions_in_play(mode))
    hint = render.decision_hint(state, render.seat_labels(["a", "b", "c"], you=int(state.to_act[0])))
    assert "trump if you can" not in hint and "trump (" not in hint
    assert "R13" in hint and f"no trumps in {('NT', 'MIN')[mode - 4]}" in hint


def test_trump_hint_names_the_trump_suit():
    state = next(positions_in_play(2))
    hint = render.decision_hint(state, render.seat_labels(["a", "b", "c"], you=int(state.to_act[0])))
    assert "else trump (♥) if you can (R14)" in hint


def test_hint_when_trumps_are_led_does_not_ask_to_trump():
    state = next(s for s in positions_in_play(2) if s.trick[0, 0] // 13 == 2)
    hint = render.decision_hint(state, ("you", "b", "c"))
    assert "follow ♥ if you can (R13), else any card (trumps were led)" in hint


def test_hint_mentions_the_R15_options_when_on():
    state = next(positions_in_play(0, Rules(num_deals=1, must_overtake=True)))
    assert "R15 option: beat the best card of the led suit" in render.decision_hint(state, ("you", "b", "c"))


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


def test_full_one_deal_game_with_a_scripted_person(cli):
    out = io.StringIO()
    typer = FirstLegalTyper(out, first_illegal=True)
    status = cli.main(["--opponents", "random,random", "--seat", "1", "--seed", "3", "--option", "num_deals=1"],
                      input_fn=typer, output=out)
    text = out.getvalue()
    assert status == 0, text[-2000:]
    assert "=== Game over ===" in text
    assert "Deal 1 over" in text and "points" in text and "total" in text
    assert "Winner" in text or "Shared win" in text
    assert typer.prompts >= 5  # at least the person's 5 or more cards and decisions
    assert typer.tried_illegal and re.search(r"is not allowed now: R1[34]: you ", text)
    assert "your hand: " in text and "mode:" in text and "> you " in text


def test_messages_call_the_person_you_not_seat_n(cli):
    """Issue 11: messages said "seat 0" to the person. Only the opening line names its seat.
    Three deals: each seat is the playmaker once (R5)."""
    for seat in range(3):
        out = io.StringIO()
        assert cli.main(["--opponents", "random,random", "--seat", str(seat), "--seed", "4", "--option",
                         "num_deals=3"], input_fn=FirstLegalTyper(out, first_illegal=True), output=out) == 0
        first, *rest = out.getvalue().splitlines()
        assert f"you hold seat {seat}" in first
        assert not [line for line in rest if f"seat {seat}" in line]
        assert "You play " in out.getvalue() and "You are the playmaker" in out.getvalue()


def test_the_person_is_shown_only_its_own_view(monkeypatch):
    """Every table shown to the person is render.seat_view of its seat (the one renderer)."""
    viewers = []
    seat_view = render.seat_view

    def spy(state, viewer, names, game=0):
        viewers.append(viewer)
        return seat_view(state, viewer, names, game)

    monkeypatch.setattr(render, "seat_view", spy)
    out = io.StringIO()
    terminal_game.play_game([RandomPolicy(), None, RandomPolicy()], 1, 6, Rules(num_deals=1), FirstLegalTyper(out), out)
    assert viewers and set(viewers) == {1}


def test_play_game_with_agent_objects_and_a_record():
    out = io.StringIO()
    result = terminal_game.play_game([RandomPolicy(), None, RandomPolicy()], 1, 12, Rules(num_deals=2), FirstLegalTyper(out),
                            out, record=True)
    assert sum(result["scores"]) == 0
    records.replay(result["record"])
    assert "Deal 2 over" in out.getvalue()


def test_play_game_checks_the_seed_and_the_seat():
    with pytest.raises(ValueError, match=r"seed must be an integer from 0 to 2\*\*63 - 1"):
        terminal_game.play_game([None] * 3, 0, MAX_SEED + 1, Rules(num_deals=1), Script([]), io.StringIO())
    with pytest.raises(ValueError, match="seat must be 0, 1 or 2"):
        terminal_game.play_game([None] * 3, 3, 0, Rules(num_deals=1), Script([]), io.StringIO())


def test_record_option_writes_a_replayable_record(tmp_path, cli):
    out = io.StringIO()
    path = tmp_path / "game.jsonl"
    status = cli.main(["--opponents", "random,random", "--seed", "8", "--option", "num_deals=1", "--record",
                       str(path)], input_fn=FirstLegalTyper(out), output=out)
    assert status == 0
    (record,) = records.read_jsonl(str(path))
    assert records.check_record(record) is None
    assert record["players"] == ["human", "random", "random"]
    assert [p.name for p in tmp_path.iterdir()] == ["game.jsonl"]  # no temporary file left behind


def test_record_replaces_an_existing_file_only_with_overwrite(tmp_path, cli, capsys):
    """One rule for every command's outputs (files.check_new_file): refused before the game
    without --overwrite, replaced with it."""
    path = tmp_path / "game.jsonl"
    path.write_text("old\n")
    argv = ["--opponents", "random,random", "--seed", "8", "--option", "num_deals=1", "--record", str(path)]
    script = Script([])
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv, input_fn=script, output=io.StringIO())
    assert exit_info.value.code == 2 and script.prompts == []  # no game was started
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith(
        f"--record file '{path}' exists; add --overwrite to replace it")
    assert path.read_text() == "old\n"
    out = io.StringIO()
    assert cli.main([*argv, "--overwrite"], input_fn=FirstLegalTyper(out), output=out) == 0
    (record,) = records.read_jsonl(str(path))
    assert records.check_record(record) is None


@pytest.mark.parametrize("where", ["missing/game.jsonl", "."])
def test_record_path_is_checked_before_the_game(tmp_path, cli, capsys, where):
    """Issue 11: an unwritable --record failed after the game, and the game was lost."""
    script = Script(["qh"])
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--opponents", "random,random", "--record", str(tmp_path / where)], input_fn=script,
                 output=io.StringIO())
    assert exit_info.value.code == 2
    assert script.prompts == []  # no game was started
    error = capsys.readouterr().err.strip().splitlines()
    assert "--record" in error[-1] and "Traceback" not in "".join(error)


def test_a_failed_record_write_after_the_game_leaves_no_file(tmp_path, cli, monkeypatch, capsys):
    path = tmp_path / "game.jsonl"
    path.write_text("old\n")

    def fail(records_, target):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cli, "write_jsonl", fail)
    out = io.StringIO()
    status = cli.main(["--opponents", "random,random", "--seed", "8", "--option", "num_deals=1", "--record",
                       str(path), "--overwrite"], input_fn=FirstLegalTyper(out), output=out)
    assert status == 1
    assert capsys.readouterr().err.strip() == f"sergeant-major play: error: cannot write {path}: No space left on device"
    assert path.read_text() == "old\n"


@pytest.mark.parametrize("error, status", [(EOFError, 0), (KeyboardInterrupt, 130)])
def test_eof_and_ctrl_c_leave_cleanly(cli, error, status):
    def typer(prompt):
        raise error

    out = io.StringIO()
    assert cli.main(["--opponents", "random,random", "--seed", "1"], input_fn=typer, output=out) == status
    assert "seed 1" in out.getvalue().splitlines()[-1]


def test_quit_leaves_cleanly(cli):
    out = io.StringIO()
    assert cli.main(["--opponents", "random,random", "--seed", "2"], input_fn=Script(["quit"]), output=out) == 0
    assert "unfinished" in out.getvalue()


@pytest.mark.parametrize("argv, message", [
    (["--opponents", "random"], "two agent names"),
    (["--opponents", "random,nosuchagent"], "nosuchagent"),
    (["--opponents", "random,human"], "you are the human player"),
    (["--option", "nosuch=1"], "nosuch"),
    (["--seat", "3"], "--seat"),
    (["--seed", str(2**63)], r"2\*\*63 - 1"),
    (["--seed", "-1"], r"2\*\*63 - 1"),
    (["--seed", "1.5"], r"2\*\*63 - 1"),
])
def test_bad_arguments_exit_2_with_one_line(cli, argv, message, capsys):
    argv = argv if "--opponents" in argv else [*argv, "--opponents", "random,random"]
    script = Script([])
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv, input_fn=script, output=io.StringIO())
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert re.search(message, err.splitlines()[-1]) and err.splitlines()[-1].startswith("sergeant-major play: error: ")
    assert script.prompts == []


def test_play_script_runs_with_piped_input():
    done = subprocess.run([sys.executable, "play.py", "--opponents", "random,random", "--seed", "5", "--option",
                           "num_deals=1"], cwd=ROOT, input="trumps\nquit\n", capture_output=True, text=True,
                          timeout=120, env={"PYTHONIOENCODING": "utf-8", "PATH": ""})
    assert done.returncode == 0, done.stderr
    assert "Game left unfinished (seed 5)" in done.stdout


# ============================================================================ layering

def test_the_terminal_library_never_imports_agents():
    """sergeant_major_env.terminal_game and .render (and a whole game with library policies) load no
    module of sergeant_major_env.agents; importing the human agent loads no command line."""
    code = """
import io, sys
from sergeant_major_env import Rules, render, terminal_game
from sergeant_major_env.policies import RandomPolicy
try:
    terminal_game.play_game([RandomPolicy(), None, RandomPolicy()], 1, 3, Rules(num_deals=1), lambda prompt: "quit",
                   io.StringIO())
except terminal_game.QuitGame:
    pass
print(sorted(m for m in sys.modules if m.startswith(("agents", "sergeant_major_env.agents"))))
import sergeant_major_env.agents.human
print(sorted(m for m in sys.modules if m.startswith("sergeant_major_env.cli")))
"""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[]", "[]"]
    source = (ROOT / "sergeant_major_env" / "terminal_game.py").read_text(encoding="utf-8")
    assert not re.search(r"^\s*(from|import) agents|make_named_agent|evaluation", source, re.M)


# ============================================================================ the human agent

def test_human_agent_is_a_batched_agent():
    from sergeant_major_env.agents.human import HumanAgent

    state = engine.init([5], Rules(num_deals=1))
    mask = engine.legal_action_mask(state)
    out = io.StringIO()
    agent = HumanAgent(input_fn=Script(["banana", "nt"]), output=out)
    assert agent.name == "human"
    actions = agent.act(observe(state, int(state.to_act[0])), mask, np.random.default_rng(0))
    assert actions.dtype == np.int64 and actions.tolist() == [MODE_ACTION_OFFSET + 4]
    text = out.getvalue()
    assert "deal 1 · mode: not chosen yet" in text and "your first six cards" in text
    assert "cannot read 'banana'" in text
    # a view of a position in play renders too
    rng = np.random.default_rng(1)
    while state.phase[0] != engine.PLAY or state.trick[0, 0] < 0:
        engine.step(state, records.random_actions(state, rng))
    view = render.observation_view(observe(state, int(state.to_act[0]))[0])
    assert "trick: " in view and "talon (face up)" in view and "your hand: " in view


def test_registry_makes_the_human_agent():
    import sergeant_major_env.agents as agents
    from sergeant_major_env.agents.human import HumanAgent

    assert isinstance(agents.make_agent("human"), HumanAgent)


# ============================================================================ wording a person reads

def test_refusals_name_the_suit_by_the_symbol_the_table_shows():
    """R13's reason speaks of suit letters (the engine's, as in records); the person reads symbols."""
    assert terminal_game.reason_for_you("R13: seat 1 must follow suit D", 1) == "R13: you must follow suit \u2666"
    assert terminal_game.reason_for_you("R13: seat 2 must follow suit S", 1) == "R13: seat 2 must follow suit \u2660"


def test_refusals_speak_the_notation_of_the_view_showing_them():
    """Issue 50, item 6: "T♥ is not allowed now: R12: you do not hold TH" mixed two notations.
    A refusal names cards and modes as its view names moves: the terminal (render.move_text)
    and the page (render.move_words, its mode buttons' words); a ten is 10."""
    for reason, terminal, page in (
            ("R12: seat 0 does not hold TH", "R12: you do not hold 10\u2665", "R12: you do not hold 10\u2665"),
            ("R8: seat 0 has already chosen mode S as playmaker", "R8: you have already chosen \u2660 (S) as playmaker",
             "R8: you have already chosen trumps \u2660 as playmaker"),
            ("R8: seat 0 has already chosen mode NT as playmaker", "R8: you have already chosen NT as playmaker",
             "R8: you have already chosen no-trump (NT) as playmaker"),
            ("R8: the playmaker must choose a mode (actions 52..57), not a card",
             "R8: the playmaker must choose a mode, not a card", "R8: the playmaker must choose a mode, not a card"),
            ("R21: a card is expected in this decision (exchange_give), not a mode",
             "R21: a card is expected in this decision (give a card), not a mode",
             "R21: a card is expected in this decision (give a card), not a mode")):
        assert terminal_game.reason_for_you(reason, 0) == terminal
        assert terminal_game.reason_for_you(reason, 0, render.move_words) == page


def test_a_ten_not_held_is_refused_in_one_notation_and_T_or_10_may_be_typed():
    """Issue 50, item 6, at the terminal: typing a ten the person does not hold (as th, T♥ or
    10h) is refused naming it 10♥ throughout; the table shows tens as 10."""
    ten = parse_card("TH")
    state = engine.init([0], Rules(num_deals=1))
    rng = np.random.default_rng(0)
    while not (state.phase[0] == engine.PLAY and not int(state.hands[0, state.to_act[0]]) >> ten & 1):
        engine.step(state, records.random_actions(state, rng))
    seat, legal = int(state.to_act[0]), engine.legal_action_mask(state)[0]
    for typed in ("th", "T\u2665", "10h"):
        out = io.StringIO()
        with pytest.raises(terminal_game.QuitGame):
            terminal_game.ask_move(legal, Script([typed, "quit"]), out,
                          explain=lambda a: terminal_game.reason_for_you(engine.illegal_reason(state, 0, a), seat))
        refusal = out.getvalue().splitlines()[0]
        assert refusal.startswith("10\u2665 is not allowed now: R12: you do not hold 10\u2665. Legal: "), refusal
        assert "T" not in refusal.replace("Legal", ""), refusal
    held = sum(1 for c in range(8, 52, 13) if int(state.hands[0, seat]) >> c & 1)
    table = render.seat_view(state, seat, render.seat_labels(["a", "b", "c"], you=seat))
    assert table.split("your hand: ")[1].split().count("10") == held


def test_an_empty_trick_says_you_lead_not_you_leads():
    from sergeant_major_env.render import _does

    assert _does(render.YOU, "lead") == "you lead"
    assert _does("seat 2 (heuristic)", "lead") == "seat 2 (heuristic) leads"


def test_leaving_a_recorded_game_says_that_nothing_was_written(tmp_path):
    cli = load_cli()
    path = tmp_path / "game.jsonl"
    out = io.StringIO()
    status = cli.main(["--opponents", "random,random", "--seed", "8", "--option", "num_deals=1", "--record",
                       str(path)], input_fn=lambda prompt: "quit", output=out)
    assert status == 0 and not path.exists()
    assert f"Nothing was written to {path}" in out.getvalue()
