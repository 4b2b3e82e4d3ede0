"""The baseline agents (agents/): the batched protocol, legality everywhere, the registry,
PPO checkpoints, the AEC adapter, and that the stronger agents beat the weaker ones."""

from __future__ import annotations

import importlib.util
import itertools

import numpy as np
import pytest

from conftest import needs, tiny_maskable_ppo
import sergeant_major_env.agents as agents
from sergeant_major_env.agents import (AECSeat, GreedyAgent, HeuristicAgent, RandomAgent, make_agent, register_agent,
                                    unregister_agent)
from sergeant_major_env.agents.heuristic import mode_values, plan_values
from sergeant_major_env.agents.view import View, legal_sets
from sergeant_major_env import Rules, engine
from sergeant_major_env.cards import NUM_ACTIONS, bits_to_bool, highest, random_member
from sergeant_major_env.engine import DISCARD, GIVE, MODE, OVER, PLAY, RETURN
from sergeant_major_env.observation import OBSERVATION_SIZE, observe

RULE_SETS = [
    Rules(num_deals=4),
    Rules(num_deals=4, must_overtake=True, must_overtrump=True),
    Rules(num_deals=3, must_overtake=True, dealer_builds_talon=True),
    Rules(num_deals=3, must_overtrump=True, exchanges=False),
]
BUILT_IN = ("random", "greedy", "heuristic")


def _check_actions(actions: np.ndarray, mask: np.ndarray, where: str) -> None:
    assert isinstance(actions, np.ndarray) and actions.dtype == np.int64, where
    assert actions.shape == (mask.shape[0],), where
    rows = np.flatnonzero(mask.any(axis=1))
    chosen = actions[rows]
    assert ((chosen >= 0) & (chosen < NUM_ACTIONS)).all(), where
    bad = rows[~mask[rows, chosen]]
    assert bad.size == 0, f"{where}: illegal action {actions[bad[0]]} in game {bad[0]}"


# ----------------------------------------------------------------------------- legality

@pytest.mark.parametrize("rules", RULE_SETS, ids=lambda r: ",".join(f"{k}={v}" for k, v in r.to_dict().items()
                                                                    if v != Rules().to_dict()[k]))
def test_agents_choose_only_legal_actions(rules):
    """Every agent is asked at every decision of random and self-played games (all kinds of
    decisions, all phases), and must answer legally in every game of the batch."""
    players = [make_agent(name) for name in BUILT_IN]
    rng = np.random.default_rng(0)
    state = engine.init(engine.game_seeds(100, 48), rules)
    seen = set()
    step = 0
    while (state.phase != OVER).any():
        legal = engine.legal_bits(state)
        mask = bits_to_bool(legal, NUM_ACTIONS)
        obs = observe(state, np.maximum(state.to_act, 0))
        seen.update(np.unique(state.phase[state.phase != OVER]).tolist())
        answers = [p.act(obs, mask, rng) for p in players]
        for player, actions in zip(players, answers):
            _check_actions(actions, mask, f"{player.name} at step {step}")
        # A third of the games follow each agent (random play reaches the odd situations).
        driver = np.arange(state.batch_size) % 3
        actions = np.choose(driver, answers)
        engine.step(state, actions, legal=legal)
        step += 1
    assert {MODE, DISCARD, PLAY} <= seen
    if rules.exchanges:
        assert {GIVE, RETURN} <= seen


def test_agents_legal_in_forced_and_single_action_situations():
    """The last card of a deal, a playmaker's last mode, must_overtake / must_overtrump:
    situations with one legal action or few."""
    rules = Rules(num_deals=18, must_overtake=True, must_overtrump=True)
    players = [make_agent(name) for name in BUILT_IN]
    rng = np.random.default_rng(1)
    state = engine.init(engine.game_seeds(7, 12), rules)
    singles = 0
    while (state.phase != OVER).any():
        legal = engine.legal_bits(state)
        mask = bits_to_bool(legal, NUM_ACTIONS)
        singles += int((mask.sum(axis=1) == 1).sum())
        obs = observe(state, np.maximum(state.to_act, 0))
        answers = [p.act(obs, mask, rng) for p in players]
        for player, actions in zip(players, answers):
            _check_actions(actions, mask, player.name)
        engine.step(state, answers[2], legal=legal)  # the heuristic drives the games
    assert singles > 1000


@pytest.mark.parametrize("name", BUILT_IN)
def test_batch_shapes_and_finished_games(name):
    agent = make_agent(name)
    rng = np.random.default_rng(0)
    state = engine.init(engine.game_seeds(3, 7), Rules(num_deals=1))
    for _ in range(30):
        engine.step(state, random_member(engine.legal_bits(state), rng))
    mask = engine.legal_action_mask(state)
    obs = observe(state, state.to_act)
    for rows in ([0], [2, 5], list(range(7))):
        _check_actions(agent.act(obs[rows], mask[rows], rng), mask[rows], name)
    # A finished game (no legal action) gets some action (ignored by the engine), never an error.
    mask[3] = False
    actions = agent.act(obs, mask, rng)
    assert actions.shape == (7,) and actions.dtype == np.int64
    assert isinstance(agent.name, str) and agent.name == name
    empty = agent.act(np.zeros((0, OBSERVATION_SIZE), np.float32), np.zeros((0, NUM_ACTIONS), bool), rng)
    assert empty.shape == (0,) and empty.dtype == np.int64
    # Even an observation that does not match the mask gets a legal answer.
    _check_actions(agent.act(np.zeros_like(obs), mask, rng), mask, name)
    # AEC-style int8 masks and float64 observations are accepted too.
    _check_actions(agent.act(obs.astype(np.float64), mask.astype(np.int8), rng), mask, name)


@pytest.mark.parametrize("name", BUILT_IN)
def test_agents_are_deterministic_given_the_rng(name):
    state = engine.init(engine.game_seeds(11, 64), Rules(num_deals=2))
    rng = np.random.default_rng(5)
    for _ in range(200):
        engine.step(state, random_member(engine.legal_bits(state), rng))
    mask = engine.legal_action_mask(state)
    obs = observe(state, np.maximum(state.to_act, 0))
    first = make_agent(name).act(obs, mask, np.random.default_rng(42))
    again = make_agent(name).act(obs.copy(), mask.copy(), np.random.default_rng(42))
    np.testing.assert_array_equal(first, again)
    # The agents decide from the observation: the inputs are left as they were.
    np.testing.assert_array_equal(obs, observe(state, np.maximum(state.to_act, 0)))


def test_view_decodes_the_observation():
    """agents.view reads back what the engine put in the observation (the acting seat's view)."""
    rng = np.random.default_rng(3)
    state = engine.init(engine.game_seeds(20, 32), Rules(num_deals=3))
    checked = 0
    while (state.phase != OVER).any() and checked < 400:
        live = np.flatnonzero(state.phase != OVER)
        sub = state.take(live)
        v = View(observe(sub, sub.to_act))
        rows = np.arange(sub.batch_size)
        seat = sub.to_act.astype(np.int64)
        choosing = sub.phase == MODE
        hand = np.where(choosing, sub.first_six, sub.hands[rows, seat])
        np.testing.assert_array_equal(v.hand, hand)
        np.testing.assert_array_equal(v.decision, sub.phase)
        np.testing.assert_array_equal(v.mode, sub.mode)
        np.testing.assert_array_equal(v.trick, sub.trick)
        np.testing.assert_array_equal(v.tricks_won, sub.tricks_won[rows[:, None], (seat[:, None] + np.arange(3)) % 3])
        np.testing.assert_array_equal(v.role[:, 0], (seat - sub.dealer) % 3)
        played = sub.played[rows[:, None], (seat[:, None] + np.arange(3)) % 3]
        np.testing.assert_array_equal(v.played, played)
        leading = sub.leader >= 0
        np.testing.assert_array_equal(v.leader[leading], ((sub.leader - seat) % 3)[leading])
        assert (v.unseen & v.hand == 0).all()
        engine.step(state, random_member(engine.legal_bits(state), rng))
        checked += 1
    np.testing.assert_array_equal(highest(np.uint64(0)), -1)


def test_view_rows_read_the_same_numbers_as_the_whole_view():
    """View.rows: a view of some games reads every attribute as the whole view's rows, whether the
    attribute was decoded before the rows were taken or is decoded later (on first use), and a
    view of a view's rows as well."""
    rng = np.random.default_rng(4)
    state = engine.init(engine.game_seeds(30, 24), Rules(num_deals=2))
    for _ in range(120):
        engine.step(state, random_member(engine.legal_bits(state), rng))
    whole = View(observe(state, np.maximum(state.to_act, 0)))
    names = ("hand", "played", "trick", "talon", "discards", "given", "received", "decision", "mode", "trumps",
             "position", "unseen", "role", "leader", "modes_available", "targets", "tricks_won", "exchange_done",
             "prev_points", "scores", "deal")
    early = View(observe(state, np.maximum(state.to_act, 0)))
    early.role, early.prev_points  # decoded before the rows are taken
    index = np.array([20, 3, 3, 11, 0])
    for sub in (whole.rows(index), early.rows(index), whole.rows(np.arange(24)[::-1]).rows(23 - index)):
        assert sub.n == index.size
        for name in names:
            np.testing.assert_array_equal(getattr(sub, name), getattr(whole, name)[index], err_msg=name)


def test_legal_sets_roundtrip():
    mask = np.zeros((3, NUM_ACTIONS), dtype=bool)
    mask[0, [0, 51]] = True
    mask[1, 52:] = True
    mask[2, 13:26] = True
    np.testing.assert_array_equal(bits_to_bool(legal_sets(mask), 52), mask[:, :52])


# ----------------------------------------------------------------------------- registry

def test_make_agent_known_and_unknown():
    assert isinstance(make_agent("random"), RandomAgent)
    assert isinstance(make_agent("greedy"), GreedyAgent)
    assert isinstance(make_agent("heuristic"), HeuristicAgent)
    with pytest.raises(ValueError, match="unknown agent 'nope'.*greedy.*heuristic.*random"):
        make_agent("nope")
    with pytest.raises(ValueError, match="known agents"):
        make_agent("")
    with pytest.raises(ValueError, match=r"^greedy: bad option '3'; greedy takes no options \(got 'greedy:3'\)$"):
        make_agent("greedy:3")
    with pytest.raises(ValueError, match="ppo:PATH"):
        make_agent("ppo")
    assert "ppo:ARG" in agents.known_agents()


def test_agent_is_the_old_name_of_policy_and_warns():
    """One name for the batched protocol: `policies.Policy`; `agents.Agent` (its old second
    name) still answers, with a DeprecationWarning."""
    from sergeant_major_env.policies import Policy

    with pytest.warns(DeprecationWarning, match="policies.Policy"):
        assert agents.Agent is Policy
    with pytest.raises(AttributeError):
        agents.NoSuchName


def test_register_agent_extension_point():
    class Fixed:
        name = "first-legal"

        def __init__(self, offset: int = 0) -> None:
            self.offset = offset

        def act(self, observations, legal_mask, rng):
            return np.asarray(legal_mask).argmax(axis=1).astype(np.int64)

    try:
        register_agent("first-legal", Fixed)
        register_agent("first-legal-arg", lambda arg: Fixed(int(arg or 0)), takes_argument=True)
        assert isinstance(make_agent("first-legal"), Fixed)
        assert make_agent("first-legal-arg:4").offset == 4
        assert make_agent("first-legal-arg").offset == 0
        assert "first-legal" in agents.known_agents()
        with pytest.raises(ValueError, match="already registered"):
            register_agent("first-legal", Fixed)
        register_agent("first-legal", Fixed, overwrite=True)
        with pytest.raises(ValueError):
            register_agent("bad:name", Fixed)
        with pytest.raises(TypeError):
            register_agent("not-callable", 3)
    finally:
        agents.unregister_agent("first-legal")
        agents.unregister_agent("first-legal-arg")
    assert "first-legal" not in agents.known_agents()


# ----------------------------------------------------------------------------- PPO checkpoints

def _tiny_model(obs_size: int = OBSERVATION_SIZE, n_actions: int = NUM_ACTIONS):
    return tiny_maskable_ppo(obs_size, n_actions)


def test_ppo_checkpoint_loads_and_plays_legally(tmp_path):
    model = _tiny_model()
    path = tmp_path / "tiny.zip"
    model.save(path)
    for spec in (f"ppo-unsafe-pickle:{path}", f"ppo-unsafe-pickle:{tmp_path / 'tiny'}"):  # .zip may be left out
        agent = make_agent(spec)
        assert agent.name == spec
        rng = np.random.default_rng(0)
        state = engine.init(engine.game_seeds(0, 16), Rules(num_deals=1))
        while (state.phase != OVER).any():
            mask = engine.legal_action_mask(state)
            obs = observe(state, np.maximum(state.to_act, 0))
            actions = agent.act(obs, mask, rng)
            _check_actions(actions, mask, "ppo")
            engine.step(state, actions)
        assert agent.fallbacks == 0


def test_ppo_errors_name_the_path(tmp_path):
    missing = tmp_path / "missing.zip"
    for name in ("ppo", "ppo-unsafe-pickle"):
        with pytest.raises(ValueError, match="missing.zip"):
            make_agent(f"{name}:{missing}")
    junk = tmp_path / "junk.zip"
    junk.write_text("not a model")
    needs("sb3_contrib")
    with pytest.raises(ValueError, match="junk.zip"):
        make_agent(f"ppo-unsafe-pickle:{junk}")
    with pytest.raises(ValueError, match="junk.zip is an SB3 zip: loading it unpickles"):
        make_agent(f"ppo:{junk}")  # refused before it is opened (tests/test_model_safety.py)
    wrong = tmp_path / "wrong.zip"
    _tiny_model(obs_size=5, n_actions=3).save(wrong)
    with pytest.raises(ValueError, match="wrong.zip.*expected"):
        make_agent(f"ppo-unsafe-pickle:{wrong}")


# ----------------------------------------------------------------------------- AEC adapter

@pytest.mark.skipif(importlib.util.find_spec("sergeant_major_env.aec") is None, reason="no PettingZoo env yet")
def test_aec_seat_plays_a_pettingzoo_game():
    from sergeant_major_env.aec import env

    game = env(num_deals=2)
    game.reset(seed=4)
    seats = {name: AECSeat(make_agent(spec), np.random.default_rng(i))
             for i, (name, spec) in enumerate(zip(game.possible_agents, BUILT_IN))}
    steps = 0
    for name in game.agent_iter():
        observation, reward, termination, truncation, info = game.last()
        action = None if termination or truncation else seats[name](observation)
        if action is not None:
            assert isinstance(action, int) and observation["action_mask"][action] == 1
            steps += 1
        game.step(action)
    assert steps > 100
    assert not game.agents  # every agent stepped out: the game is over
    with pytest.raises(ValueError, match="no legal action"):
        seats["player_0"]({"observation": np.zeros(OBSERVATION_SIZE, np.float32),
                           "action_mask": np.zeros(NUM_ACTIONS, np.int8)})
    assert AECSeat("greedy").name == "greedy"


# ----------------------------------------------------------------------------- strength

def _duplicate_points(names, groups: int, seed: int) -> np.ndarray:
    """Mean points per game of names[0] per duplicate group (the same deals under each seating)."""
    players = {n: make_agent(n) for n in names}
    distinct = list(dict.fromkeys(names))
    seatings = sorted(set(itertools.permutations([distinct.index(n) for n in names])))
    seeds = np.repeat(seed + np.arange(groups), len(seatings)).astype(np.uint64)
    table = np.tile(np.array(seatings), (groups, 1))
    state = engine.init(seeds, Rules())
    rng = np.random.default_rng(seed)
    rows = np.arange(seeds.size)
    while (state.phase != OVER).any():
        legal = engine.legal_bits(state)
        mask = bits_to_bool(legal, NUM_ACTIONS)
        obs = observe(state, np.maximum(state.to_act, 0))
        who = table[rows, np.maximum(state.to_act, 0)]
        actions = np.zeros(seeds.size, dtype=np.int64)
        for k, n in enumerate(distinct):
            games = np.flatnonzero(who == k)
            actions[games] = players[n].act(obs[games], mask[games], rng)
        engine.step(state, actions, legal=legal)
    points = np.where(table == 0, state.final_scores, 0).sum(axis=1)
    return points.reshape(groups, len(seatings)).mean(axis=1)


def test_greedy_beats_random():
    points = _duplicate_points(["greedy", "random", "random"], groups=24, seed=1000)
    assert points.mean() > 20  # about +58 points per 18-deal game


def test_heuristic_beats_greedy():
    points = _duplicate_points(["heuristic", "greedy", "greedy"], groups=40, seed=2000)
    assert points.mean() > 2  # about +10 points per game; 40 groups put the mean within +-2


def test_mode_values_and_plan():
    hand = np.zeros((2, 52), dtype=bool)
    hand[0, [12, 11, 10, 9, 8, 7]] = True      # six top spades: trumps in spades
    hand[1, [0, 1, 13, 14, 26, 39]] = True      # twos and threes: MIN
    values = mode_values(hand)
    assert values[0].argmax() == 0
    assert values[1].argmax() == 5
    plan = plan_values()
    assert plan.shape == (64,) and plan[0] == 0 and np.isfinite(plan).all()
    # With one mode left there is no choice: V({m}) is the mean value of m on random hands.
    assert plan[1 << 5] == pytest.approx(plan_values()[1 << 5])


@pytest.mark.parametrize("spec, message", [
    ("pimc:worlds=4:worlds=8", r"^pimc: option worlds given twice \(worlds=4 and worlds=8\); give each option once$"),
    ("ismcts:simulations=5:simulations=9",
     r"^ismcts: option simulations given twice \(simulations=5 and simulations=9\); give each option once$"),
    ("pimc:bogus=1", r"^pimc: bad option 'bogus=1'; expected NAME=VALUE with NAME one of worlds, "),
    ("ismcts:bogus=1", r"^ismcts: bad option 'bogus=1'; expected NAME=VALUE with NAME one of simulations, "),
    ("pimc:worlds=many", r"^pimc: worlds must be an integer, got 'many'$"),
    ("ismcts:exploration=high", r"^ismcts: exploration must be a number, got 'high'$"),
])
def test_every_agent_with_options_parses_them_the_same_way(spec, message):
    """One parser (agents.base.agent_options) for every agent with options: a repeated option,
    an unknown one or a value of the wrong type is the same one-line refusal (issue 31; ismcts
    silently kept the last of a repeated option before)."""
    if spec.startswith("ismcts"):
        needs("pyspiel")
    with pytest.raises(ValueError, match=message):
        make_agent(spec)


class _Search:
    """A plug-in agent with options, registered with ``options=``."""

    name = "plug"

    def __init__(self, depth: int = 2, width: float = 1.5, policy: str = "heuristic") -> None:
        self.depth, self.width, self.policy = depth, width, policy

    def act(self, observations, legal_mask, rng):
        return np.asarray(legal_mask).argmax(axis=1).astype(np.int64)


@pytest.mark.parametrize("spec, message", [
    ("plug:depth=3:depth=4", r"^plug: option depth given twice \(depth=3 and depth=4\); give each option once$"),
    ("plug:bogus=1", r"^plug: bad option 'bogus=1'; expected NAME=VALUE with NAME one of depth, width, policy$"),
    ("plug:width=wide", r"^plug: width must be a number, got 'wide'$"),
    ("heuristic:depth=3", r"^heuristic: bad option 'depth=3'; heuristic takes no options \(got 'heuristic:depth=3'\)$"),
    ("learned:runs/x", r"^learned: bad option 'runs/x'; learned takes no options \(got 'learned:runs/x'\)$"),
])
def test_a_registered_agent_with_options_gets_the_same_parser(spec, message):
    """register_agent(name, factory, options=...) parses a plug-in's options with the parser of
    pimc and ismcts (issue 31), and an agent without options refuses one in the same shape."""
    register_agent("plug", _Search, options={"depth": 2, "width": 1.5, "policy": "heuristic"},
                   policy_options=("policy",), overwrite=True)
    try:
        agent = make_agent("plug:width=3:policy=ppo:runs/x:depth=5")
        assert (agent.depth, agent.width, agent.policy) == (5, 3.0, "ppo:runs/x")
        assert "plug:ARG" in agents.known_agents()
        with pytest.raises(ValueError, match=message) as error:
            make_agent(spec)
        assert "\n" not in str(error.value)
    finally:
        unregister_agent("plug")


def test_options_and_an_argument_are_one_or_the_other():
    with pytest.raises(ValueError, match="give options or takes_argument=True, not both"):
        register_agent("plug", _Search, options={"depth": 2}, takes_argument=True)
    assert "plug" not in agents.agent_help()


class _Flagged(_Search):
    """A plug-in with a flag option (``fast``)."""

    def __init__(self, depth: int = 2, fast: bool = False) -> None:
        super().__init__(depth)
        self.fast = fast


@pytest.mark.parametrize("spec, expected", [
    ("plug:fast", (True, 2)), ("plug:depth=3:fast", (True, 3)), ("plug:fast=false", (False, 2)),
    ("plug:fast=True:depth=4", (True, 4)), ("plug", (False, 2)),
    ("plug:fast:fast=false", r"^plug: option fast given twice \(fast=true and fast=false\); give each option once$"),
    ("plug:fast=1", r"^plug: fast must be true or false \(or fast alone for true\), got '1'$"),
    ("plug:depth", r"^plug: bad option 'depth'; expected NAME=VALUE with NAME one of depth, fast "
                   r"\(or a flag alone: fast\)$"),
])
def test_an_option_whose_default_is_a_bool_is_a_flag(spec, expected):
    """Issue 29 (``pimc:cheat``): a bool option alone turns it on; NAME=true/false say it in full;
    any other value, a repeat, or a non-flag option alone is the parser's one line."""
    register_agent("plug", _Flagged, options={"depth": 2, "fast": False}, overwrite=True)
    try:
        if isinstance(expected, str):
            with pytest.raises(ValueError, match=expected):
                make_agent(spec)
        else:
            agent = make_agent(spec)
            assert (agent.fast, agent.depth) == expected and type(agent.fast) is bool
    finally:
        unregister_agent("plug")


def test_a_variant_is_listed_on_its_own_line_after_its_agent():
    register_agent("plug", _Flagged, options={"depth": 2, "fast": False}, overwrite=True,
                   variants={"plug:fast": "the plug, fast"})
    try:
        names = list(agents.agent_help())
        assert names[names.index("plug") + 1] == "plug:fast" and agents.agent_help()["plug:fast"] == "the plug, fast"
        assert make_agent("plug:fast").fast is True
    finally:
        unregister_agent("plug")
    assert "plug:fast" not in agents.agent_help()
    with pytest.raises(ValueError, match=r"^agent 'plug': variants must be specs plug:ARGUMENT, got \['other:x'\]$"):
        register_agent("plug", _Search, variants={"other:x": "no"})
