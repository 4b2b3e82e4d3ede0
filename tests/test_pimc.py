"""The ``pimc`` search bot (agents/pimc.py): every decision kind, legal, blind to hidden cards."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from sergeant_major_env.agents import make_agent
from sergeant_major_env.agents.pimc import DEFAULTS, PIMCAgent, PIMCSettings
from sergeant_major_env import Rules, engine
from sergeant_major_env.cards import bits_to_bool, random_member
from sergeant_major_env.engine import DECISIONS, OVER
from sergeant_major_env.evaluation import TablePlan, play_tables
from sergeant_major_env.worlds import sample_worlds


class Recording(PIMCAgent):
    """pimc that notes the decision kinds it was asked."""

    def __init__(self, **options):
        super().__init__(**options)
        self.kinds = set()

    def act_on_state(self, state, games, rng):
        self.kinds.update(DECISIONS[p] for p in state.phase[games].tolist())
        return super().act_on_state(state, games, rng)


def test_pimc_plays_every_decision_kind_legally_to_the_end_of_games():
    """Mode (R8, R9), exchange gives and free returns (R21), discards and play: the engine
    accepts every action pimc chooses (it raises on an illegal one) and the games finish."""
    pimc = Recording(worlds=4)
    result = play_tables([pimc, make_agent("random"), make_agent("random")],
                         TablePlan(games=12, seed=5, rules={"num_deals": 4}, progress=False))
    assert result.games == 12
    assert pimc.kinds == {"mode", "exchange_give", "exchange_return", "discard", "play"}


def _positions(seed: int, batch: int = 16, every: int = 9):
    state = engine.init(engine.game_seeds(seed, batch), Rules(num_deals=3))
    rng = np.random.default_rng(seed)
    while (state.phase != OVER).any():
        live = np.flatnonzero(state.phase != OVER)
        yield state, live
        for _ in range(every):
            engine.step(state, random_member(engine.legal_bits(state), rng))


@pytest.mark.parametrize("options", [{"rollout": "greedy"}, {"rollout": "learned", "prior": "learned"}],
                         ids=["greedy-rollouts", "learned-rollouts-and-prior"])
def test_pimc_decisions_do_not_depend_on_cards_the_seat_cannot_see(options):
    """Given a state that differs only in what the seat to act cannot see (one of its own
    sampled worlds), pimc makes exactly the same decisions with the same random numbers
    (with the learned policy too: its prior reads the seat's observation only)."""
    pimc = PIMCAgent(worlds=4, **options)
    rng = np.random.default_rng(0)
    for k, (state, live) in enumerate(_positions(11)):
        if k % 4:
            continue
        twin = sample_worlds(state, live, 1, rng)
        a = pimc.act_on_state(state, live, np.random.default_rng(k))
        b = pimc.act_on_state(twin, np.arange(live.size), np.random.default_rng(k))
        np.testing.assert_array_equal(a, b)


def test_pimc_values_are_the_mean_deal_points_over_worlds():
    """With one world and a deterministic rollout, an action's value is that world's deal
    points for the seat; illegal actions are -inf."""
    state = next(s for s, _ in _positions(3, batch=4, every=20) if (s.phase == engine.PLAY).all())
    pimc = PIMCAgent(worlds=3, rollout="heuristic")
    legal = engine.legal_bits(state)
    values, kept = pimc.action_values(state, np.arange(4), legal, pimc.streams(state, np.arange(4)))
    mask = engine.legal_action_mask(state)
    assert np.isfinite(values[mask]).all() and np.isneginf(values[~mask]).all()
    assert (np.abs(values[mask]) <= 13).all()  # a deal's points lie in -13..13 (R23, R24)


def test_pimc_horizon_and_epsilon_options_give_legal_choices():
    state, live = next(_positions(4, batch=6, every=30))
    for options in ({"horizon": 3}, {"epsilon": 0.5, "rollouts": 2, "rollout": "random"}):
        pimc = PIMCAgent(worlds=2, **options)
        actions = pimc.act_on_state(state, live, np.random.default_rng(0))
        legal = engine.legal_bits(state, live)
        assert ((legal >> actions.astype(np.uint64)) & np.uint64(1)).all()


def test_pimc_options_parse_and_bad_ones_are_refused():
    agent = make_agent("pimc:worlds=8:rollout=greedy:horizon=5:epsilon=0.1")
    assert (agent.worlds, agent.horizon, agent.epsilon, agent.rollout_policy.name) == (8, 5, 0.1, "greedy")
    for spec, message in (("pimc:worlds=0", "worlds must be an integer from 1 to 100,000"),
                          ("pimc:size=3", "bad option"),
                          ("pimc:worlds=many", "worlds must be an integer"), ("pimc:rollout=pimc", "cannot itself"),
                          ("pimc:epsilon=2", "epsilon must be a number in"), ("pimc:rollout=nobody", "unknown agent")):
        with pytest.raises(ValueError, match=message):
            make_agent(spec)


@pytest.mark.parametrize("spec, name", [
    ("pimc:worlds=1:worlds=2", "worlds"),
    ("pimc:worlds=4:rollout=greedy:worlds=4", "worlds"),  # the same value twice is still a slip
    ("pimc:rollout=ppo:runs/x:rollout=greedy", "rollout"),
])
def test_a_pimc_option_named_twice_is_refused_not_the_last_one_winning(spec, name):
    with pytest.raises(ValueError, match=rf"^pimc: option {name} given twice \(.*\); give each option once$"):
        make_agent(spec)


@pytest.mark.parametrize("spec, message", [
    ("pimc:rollouts=100000000", r"rollouts must be an integer from 1 to 100,000, got 100000000$"),
    ("pimc:worlds=100000000", r"worlds must be an integer from 1 to 100,000, got 100000000$"),
    ("pimc:worlds=1000:rollouts=1000", r"worlds x rollouts must be at most 100,000 and worlds x candidates at most"),
    ("pimc:worlds=1000:candidates=1000", r"worlds x rollouts must be at most 100,000 and worlds x candidates at most"),
    ("pimc:max_rows=10000000000", r"max_rows must be an integer from 1 to 4,000,000"),
    pytest.param("pimc:worlds=" + "9" * 5000, r"worlds must be an integer, got '9{50,60}\.\.\.$",
                 id="worlds-of-5000-digits"),
    ("pimc:prune=inf", r"prune must be a finite number >= 0, got inf$"),
    ("pimc:prune=nan", r"prune must be a finite number >= 0, got nan$"),
    ("pimc:prior_weight=inf", r"prior_weight must be a finite number >= 0, got inf$"),
    ("pimc:infer_power=-inf", r"infer_power must be a finite number >= 0, got -inf$"),
    ("pimc:epsilon=nan", r"epsilon must be a number in \[0, 1\], got nan$"),
])
def test_pimc_sizes_beyond_the_documented_maxima_and_non_finite_numbers_are_one_short_line(spec, message):
    """rollouts=100000000 once tried to allocate 691 GiB; prune=inf and prior_weight=inf were
    accepted (issue 20, items 7 and 9). Refused when the agent is made, before any search."""
    with pytest.raises(ValueError, match=r"^pimc: " + message) as error:
        make_agent(spec)
    assert len(str(error.value)) < 250


def test_pimc_search_memory_is_checked_against_this_machine(monkeypatch):
    from sergeant_major_env import limits
    from sergeant_major_env.agents.pimc import search_bytes

    assert search_bytes(16, 1, 60_000) < 200 * 2**20  # the defaults: about 94 MB at the peak
    monkeypatch.setattr(limits, "available_bytes", lambda: 50 * 2**20)
    with pytest.raises(ValueError, match=r"^pimc: a search of 16 worlds x 1 rollouts \(max_rows=60000\) would need "
                                         r"about 89.3 MiB of memory; this machine has 50.0 MiB available; give fewer"):
        PIMCAgent()


def test_pimc_settings_are_one_checked_object_that_the_spec_and_the_fields_both_make():
    """PIMCAgent's 14 parameters are one frozen PIMCSettings (issue 31): the spec string, the
    fields and the settings give the same agent; the settings are checked when made."""
    import dataclasses

    settings = PIMCSettings(worlds=8, rollout="greedy", seed=3)
    by_spec = make_agent("pimc:worlds=8:rollout=greedy:seed=3")
    by_fields = PIMCAgent(worlds=8, rollout="greedy", seed=3)
    assert by_spec.settings == by_fields.settings == PIMCAgent(settings).settings == settings
    assert repr(by_spec) == repr(by_fields) == ("PIMCAgent(worlds=8, rollouts=1, rollout='greedy', horizon=0, "
                                                "epsilon=0.0, prune=0.0, prior=none, prior_weight=0.5, seed=3)")
    assert DEFAULTS == dataclasses.asdict(PIMCSettings()) and list(DEFAULTS)[:3] == ["worlds", "rollouts", "rollout"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.worlds = 9
    with pytest.raises(ValueError, match=r"^pimc: worlds must be "):
        PIMCSettings(worlds=0)
    with pytest.raises(ValueError, match=r"^pimc: the rollout policy cannot itself be pimc$"):
        PIMCSettings(rollout="pimc:worlds=2")
    with pytest.raises(TypeError, match="PIMCAgent takes a PIMCSettings or its fields"):
        PIMCAgent(settings, worlds=4)
    assert isinstance(PIMCSettings(epsilon=0).epsilon, float) and type(PIMCSettings(seed=np.int64(2)).seed) is int


def test_pimc_act_without_the_state_explains_itself():
    with pytest.raises(TypeError, match="act_on_state"):
        PIMCAgent().act(np.zeros((1, 5), np.float32), np.ones((1, 58), bool), np.random.default_rng(0))


def test_evaluate_py_plays_pimc_against_the_heuristic(tmp_path):
    """``python evaluate.py --agents pimc,heuristic,heuristic`` works (a one-deal match here)."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "evaluate.py", "--agents", "pimc:worlds=4:rollout=greedy,heuristic,heuristic",
                           "--games", "6", "--options", "num_deals=1", "--json", str(tmp_path / "r.json")],
                          cwd=root, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "r.json").read_text())
    assert [a["name"] for a in result["agents"]].count("heuristic") == 1 and result["games"] == 6


def test_equivalent_cards_are_searched_once():
    """R16: with JH played, 9H TH QH take the same tricks, so only 9H is searched; 2S 3S are
    one card, AS (4S is still out) another; modes are never merged."""
    from sergeant_major_env.agents.pimc import distinct_cards
    from sergeant_major_env.cards import card_name, cards_to_bits, parse_card

    def cards(*names):
        return np.array([cards_to_bits(np.array([parse_card(n) for n in names]))], dtype=np.uint64)

    legal = cards("9H", "TH", "QH", "2S", "3S", "AS") | np.uint64(0b11 << 52)
    kept = int(distinct_cards(legal, cards("JH", "5S"))[0])
    assert [card_name(c) for c in range(52) if kept >> c & 1] == ["2S", "AS", "9H"]
    assert kept >> 52 == 0b11


def test_pimc_plays_as_an_opponent_in_the_vec_env_and_the_single_seat_env():
    """The environments hand search opponents the engine state (act_on_state)."""
    from sergeant_major_env.single_seat import SergeantMajorEnv
    from sergeant_major_env.vec_env import SergeantMajorVecEnv

    pimc = PIMCAgent(worlds=2, rollout="greedy")
    vec = SergeantMajorVecEnv(4, seed=1, opponents=pimc, num_deals=1)
    vec.reset()
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(40):
        actions = np.array([rng.choice(np.flatnonzero(mask)) for mask in vec.action_masks()])
        _, _, dones, _ = vec.step(actions)
        finished += int(dones.sum())
    assert finished >= 4  # every one-deal game ended
    single = SergeantMajorEnv(opponents=(pimc, pimc), num_deals=1)
    _, info = single.reset(seed=3)
    done = False
    while not done:
        mask = single.action_masks()
        _, _, terminated, truncated, _ = single.step(int(np.flatnonzero(mask)[0]))
        done = terminated or truncated


def test_a_person_can_play_against_pimc_and_pimc_can_sit_in_the_aec_env():
    """play.py and AECSeat hand pimc the game state (it reads only its seat's knowledge)."""
    import io

    from sergeant_major_env.agents import AECSeat
    from sergeant_major_env import env as make_env
    from sergeant_major_env import terminal_game
    from test_play import FirstLegalTyper

    pimc = PIMCAgent(worlds=2, rollout="greedy")
    out = io.StringIO()
    result = terminal_game.play_game([pimc, None, pimc], 1, 4, Rules(num_deals=1), FirstLegalTyper(out), out)
    assert sum(result["scores"]) == 0
    game = make_env(num_deals=1)
    game.reset(seed=2)
    seats = {name: AECSeat(pimc, np.random.default_rng(0), env=game) for name in game.possible_agents}
    for name in game.agent_iter():
        observation, _, termination, truncation, _ = game.last()
        game.step(None if termination or truncation else seats[name](observation))
    with pytest.raises(TypeError, match="env=game"):
        AECSeat(pimc)


def test_pimc_decisions_do_not_depend_on_the_other_games_searched_with_them():
    """Each game's worlds come from its own stream (the seed and the seat's observation): a
    table searched in one call decides exactly as each of its games searched alone."""
    pimc = PIMCAgent(worlds=3, rollout="greedy")
    for k, (state, live) in enumerate(_positions(12, batch=8, every=11)):
        if k % 3:
            continue
        together = pimc.act_on_state(state, live, np.random.default_rng(k))
        alone = [pimc.act_on_state(state, live[i:i + 1], np.random.default_rng(100 + i))[0] for i in range(live.size)]
        np.testing.assert_array_equal(together, alone)


def test_pimc_seed_decides_its_worlds_and_the_callers_rng_does_not():
    """Same seed, same decisions whatever generator the caller passes; another seed draws
    other worlds, so some close decision comes out differently."""
    state, live = next(_positions(13, batch=16, every=25))
    first = PIMCAgent(worlds=2, rollout="greedy").act_on_state(state, live, np.random.default_rng(0))
    again = PIMCAgent(worlds=2, rollout="greedy").act_on_state(state, live, np.random.default_rng(99))
    np.testing.assert_array_equal(first, again)
    others = [PIMCAgent(worlds=2, rollout="greedy", seed=s).act_on_state(state, live, None) for s in range(1, 6)]
    assert any((other != first).any() for other in others)


class _AskedRows:
    """A rollout policy (greedy) that records every batch it is asked to decide."""

    name = "asked"

    def __init__(self):
        self.greedy = make_agent("greedy")
        self.batches = []

    def act(self, observations, legal_mask, rng):
        self.batches.append(np.asarray(legal_mask).copy())
        return self.greedy.act(observations, legal_mask, rng)


def test_rollouts_ask_the_policy_only_where_there_is_a_real_choice():
    """A single legal card, or legal cards that are all one (R16: every card between them
    played), is played without a policy call; the policy sees at most POLICY_ROWS rows a call."""
    from sergeant_major_env.agents.pimc import POLICY_ROWS, choices

    asked = _AskedRows()
    pimc = PIMCAgent(worlds=8, rollout=asked)
    state, live = next(_positions(14, batch=64, every=60))
    sims = sample_worlds(state, live, 8, np.random.default_rng(0))
    pimc._roll_out(sims, sims.to_act.astype(np.intp), np.random.default_rng(0))
    assert asked.batches and max(len(b) for b in asked.batches) <= POLICY_ROWS
    assert all((b.sum(axis=1) > 1).all() for b in asked.batches)
    # Rows with several equivalent cards exist in such rollouts, and choices() merges them.
    state = engine.init(engine.game_seeds(3, 1), Rules(num_deals=1))
    from sergeant_major_env.cards import cards_to_bits, parse_card

    state.phase[:] = engine.PLAY
    state.to_act[:] = 0
    state.mode[:] = 4  # NT
    state.hands[0, 0] = cards_to_bits(np.array([parse_card(c) for c in ("9H", "TH", "2S")]))
    state.played[0, 1] = cards_to_bits(np.array([parse_card("JH")]))
    merged = choices(state)
    assert int(merged[0]) == int(cards_to_bits(np.array([parse_card("9H"), parse_card("2S")])))


def test_exchanged_cards_are_never_merged_as_equivalent():
    """R21: a given or returned card goes to another hand, so 9H and TH are different gifts
    even when equivalent in play; discards and plays merge them."""
    from sergeant_major_env.agents.pimc import choices
    from sergeant_major_env.cards import cards_to_bits, parse_card

    state = engine.init(engine.game_seeds(3, 3), Rules(num_deals=1))
    hand = cards_to_bits(np.array([parse_card(c) for c in ("9H", "TH", "2S")]))
    state.hands[:, 0] = hand
    state.to_act[:] = 0
    state.phase[:] = [engine.GIVE, engine.RETURN, engine.DISCARD]
    merged = choices(state, legal=np.full(3, hand, dtype=np.uint64))
    assert merged.tolist() == [int(hand), int(hand), int(hand & ~cards_to_bits(np.array([parse_card("TH")])))]


def test_rollout_option_may_name_a_policy_with_a_colon():
    """``pimc:rollout=ppo:RUN:worlds=8``: the rollout policy's own colon stays in its name."""
    from sergeant_major_env.agents.pimc import _option_items

    assert _option_items("rollout=ppo:runs/x:worlds=8") == [("rollout", "ppo:runs/x"), ("worlds", "8")]
    assert _option_items("worlds=4:seed=3") == [("worlds", "4"), ("seed", "3")]
    with pytest.raises(ValueError, match="bad option 'runs'"):
        _option_items("worlds=4:runs")
    with pytest.raises(ValueError, match="seed must be an integer from 0"):
        make_agent("pimc:seed=-1")


def test_pruning_drops_only_actions_clearly_behind_the_leader_world_by_world():
    """prune=z: an action whose paired shortfall to the best is beyond z standard errors (a
    spread of at least a quarter point) is not rolled out in the second half of the worlds."""
    pimc = PIMCAgent(worlds=8, prune=1.5, rollout="greedy")
    points = np.full((1, 58, 4), np.nan)
    points[0, 0] = [1, 2, 1, 2]      # the leader
    points[0, 1] = [0, 1, 0, 1]      # one point behind in every world: dropped
    points[0, 2] = [2, 1, 1, 1]      # level on average: kept
    points[0, 3] = [-5, 6, -5, 6]    # behind by 1.25 on average, but noisy: kept
    kept = np.zeros((1, 58), dtype=bool)
    kept[0, :4] = True
    assert np.flatnonzero(pimc._clearly_worse(points, kept)[0]).tolist() == [1]
    assert pimc._stages() == [(0, 4), (4, 8)] and PIMCAgent(worlds=8)._stages() == [(0, 8)]


def test_pruned_search_still_plays_legally_and_keeps_the_best():
    state, live = next(_positions(15, batch=8, every=30))
    pimc = PIMCAgent(worlds=4, prune=1.5, rollout="greedy")
    legal = engine.legal_bits(state, live)
    values, kept = pimc.action_values(state, live, legal, pimc.streams(state, live))
    mask = engine.legal_action_mask(state)[live]
    assert (kept <= mask).all() and kept.any(axis=1).all()
    assert np.isfinite(values[mask]).all() and np.isneginf(values[~mask]).all()
    actions = pimc.act_on_state(state, live, None)
    assert ((legal >> actions.astype(np.uint64)) & np.uint64(1)).all()


def test_inference_needs_a_policy_with_probabilities():
    """infer=NAME weights worlds by a policy's probabilities (agents.inference): the heuristic has none."""
    with pytest.raises(ValueError, match="infer needs a policy with action probabilities"):
        make_agent("pimc:infer=heuristic")
    assert make_agent("pimc")._log_probs is None  # auto: the heuristic rollout gives no model
    assert make_agent("pimc:infer=learned")._log_probs is not None


@pytest.mark.slow
def test_pimc_speed_times_a_table_against_another_checkout(tmp_path):
    """benchmarks/pimc_speed.py --table --against TREE: both checkouts' runs and their ratio."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "benchmarks/pimc_speed.py", "--table", "--games", "6", "--num-deals", "1",
                           "--agent", "pimc:worlds=2:rollout=greedy", "--against", str(root), "--repeat", "1"],
                          cwd=root, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len([line for line in lines if line.startswith("run 1")]) == 2 and "x faster" in lines[-1]
    bad = subprocess.run([sys.executable, "benchmarks/pimc_speed.py", "--against", str(tmp_path)], cwd=root,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "is not a checkout of this project" in bad.stderr.splitlines()[-1]


class _Extreme:
    """A rollout policy that plays its lowest (or highest) legal action and counts the rows it decides."""

    def __init__(self, highest: bool):
        self.highest, self.rows = highest, 0
        self.name = "highest" if highest else "lowest"

    def act(self, observations, legal_mask, rng):
        self.rows += len(legal_mask)
        mask = np.asarray(legal_mask)
        return (57 - mask[:, ::-1].argmax(axis=1)) if self.highest else mask.argmax(axis=1)


def test_rollout_plays_the_searching_seat_and_others_play_the_other_two():
    """rollout= decides the searching seat's rollout moves, others= the other seats' (one
    observation of the rows serves both), each row's action from its own policy."""
    own_policy, others_policy = _Extreme(highest=False), _Extreme(highest=True)
    pimc = PIMCAgent(worlds=2, rollout=own_policy, others=others_policy)
    state, live = next(_positions(16, batch=12, every=25))
    sims = sample_worlds(state, live, 2, np.random.default_rng(0))
    legal = engine.legal_bits(sims)
    rows = np.flatnonzero(np.bitwise_count(legal) > 1)
    own = sims.to_act[rows] == 0  # seat 0 searching in every world
    assert own.any() and (~own).any()
    actions = pimc._ask(sims, rows, legal[rows], own, np.random.default_rng(0))
    mask = bits_to_bool(legal[rows], 58)
    assert (actions[own] == mask[own].argmax(axis=1)).all()
    assert (actions[~own] == 57 - mask[~own][:, ::-1].argmax(axis=1)).all()
    assert (own_policy.rows, others_policy.rows) == (own.sum(), (~own).sum())
    assert PIMCAgent(worlds=2, rollout="greedy", others="rollout").others_policy.name == "greedy"


def test_the_same_agent_for_both_rollout_roles_is_one_policy_called_once_a_step():
    """Default pimc (heuristic for every seat) asks one policy a step, not one per role."""
    pimc = PIMCAgent()
    assert pimc.others_policy is pimc.rollout_policy
    assert PIMCAgent(rollout="greedy", others="greedy").others_policy.name == "greedy"
    mixed = PIMCAgent(rollout="greedy")
    assert (mixed.rollout_policy.name, mixed.others_policy.name) == ("greedy", "heuristic")


def test_prior_needs_probabilities_and_auto_takes_the_rollout_policys():
    """prior=NAME adds a policy's log-probabilities to the values; prior=auto uses the rollout
    policy's (learned has them, the heuristic none); the default pimc searches without."""
    assert make_agent("pimc")._prior is None
    assert make_agent("pimc:rollout=learned")._prior is None
    assert make_agent("pimc:rollout=learned:prior=auto")._prior is not None
    assert make_agent("pimc:prior=auto")._prior is None
    assert make_agent("pimc:prior=learned")._prior is not None
    with pytest.raises(ValueError, match="prior needs a policy with action probabilities"):
        make_agent("pimc:prior=greedy")
    with pytest.raises(ValueError, match="prior_weight must be a finite number >= 0"):
        make_agent("pimc:prior=learned:prior_weight=-1")


def test_prior_sums_the_probabilities_of_equivalent_cards_onto_the_searched_one():
    """R16: a searched card stands for the equivalent cards merged into it, so the prior gives
    it their summed probability: over the searched actions the probabilities add up to 1."""
    from sergeant_major_env.agents.pimc import choices

    pimc = PIMCAgent(worlds=2, prior="learned")
    merged = 0
    for state, live in _positions(23, every=5):
        legal = choices(state, live)
        log_probs = pimc.prior_log_probs(state, live, legal)
        searched = bits_to_bool(legal, 58)
        assert np.isneginf(log_probs[~searched]).all()
        np.testing.assert_allclose(np.exp(log_probs).sum(axis=1), 1.0, rtol=1e-9)
        merged += int((searched.sum(axis=1) < engine.legal_action_mask(state)[live].sum(axis=1)).sum())
    assert merged > 0  # some positions had equivalent cards to merge


def test_a_dominant_prior_plays_the_policys_choice():
    """With a prior weight far above any deal's points, pimc chooses the prior's most likely
    searched action (its equivalent cards summed) wherever it searches."""
    from sergeant_major_env.agents.pimc import choices

    pimc = PIMCAgent(worlds=2, prior="learned", prior_weight=1e6)
    for state, live in _positions(29, every=11):
        legal = choices(state, live)
        expected = pimc.prior_log_probs(state, live, legal).argmax(axis=1)
        np.testing.assert_array_equal(pimc.act_on_state(state, live), expected)


def test_worlds_of_many_games_sampled_together_are_each_games_own():
    """One sampler call for all the searched games draws each game's worlds from that game's
    stream: exactly the worlds of one call per game (so decisions stay independent of the batch)."""
    from sergeant_major_env.agents.pimc import _stream

    pimc = PIMCAgent(worlds=5)
    checked = 0
    for state, live in _positions(31, batch=24, every=7):
        keys = pimc.keys(state, live)
        together = pimc._sample_worlds(state, live, [_stream(key) for key in keys], 5)
        one_by_one = state.take(np.repeat(live, 5))
        for i, (game, key) in enumerate(zip(live.tolist(), keys)):
            one_by_one.put(slice(i * 5, (i + 1) * 5), sample_worlds(state, [game], 5, _stream(key)))
        for name, value in together.arrays().items():
            np.testing.assert_array_equal(value, one_by_one.arrays()[name], err_msg=name)
        checked += 1
    assert checked > 10


# ----------------------------------------------------------------------------- compiled rollouts (issue 28)

class _Stepwise(PIMCAgent):
    """pimc with its rollouts always on the step-by-step Python loop (the path of every
    rollout policy before the compiled rounds, and still of every policy but the heuristic
    and the policy networks)."""

    def _compiled_rollouts(self):
        return None


FROZEN_DECISIONS = {
    # (options): (decisions, sha256 of their int64 actions, first 16 hex digits), from the code of
    # 0f17715 (before the compiled rollouts) on the positions of _frozen_positions.
    (("worlds", 4),): (605, "25652b361aefe926"),
    (("worlds", 3), ("horizon", 6), ("seed", 7)): (605, "d9bc1fbc38d14287"),
}


def _frozen_positions():
    """Mode choices, exchange gives and returns, discards and play (33, 36, 2, 25, 509 of them):
    16 games of three deals at a time, every ninth move random, seeds 1 and 2."""
    for seed in (1, 2):
        yield from _positions(seed)


@pytest.mark.parametrize("options", list(FROZEN_DECISIONS), ids=["default", "horizon"])
def test_pimc_chooses_exactly_what_it_chose_before_its_rollouts_were_compiled(options):
    """The default pimc (the heuristic in every rollout seat) plays its rollouts in compiled
    rounds (agents/pimc_kernels.py): the same worlds, the same rollout decisions, so the same
    choices as the code before (frozen here as a digest of 605 decisions of every kind), with
    and without a horizon. (The compiled exp and log may flip a rollout's card where two scores
    tie to the last bit: rare, see the test below; none of these 605 decisions moves.)"""
    import hashlib

    pimc = PIMCAgent(**dict(options))
    assert pimc._compiled_rollouts() is not None
    chosen = np.concatenate([pimc.act_on_state(state, live) for state, live in _frozen_positions()])
    digest = hashlib.sha256(chosen.astype(np.int64).tobytes()).hexdigest()[:16]
    assert (chosen.size, digest) == FROZEN_DECISIONS[options]


def test_compiled_rollouts_give_the_stepwise_loops_values_and_points():
    """Every action's value (mean deal points over the worlds) is the step-by-step loop's to the
    last bit, at every decision kind (exchange gives in the rollouts go to the numpy heuristic),
    and so are the points of each single rollout game, on these positions (the compiled exp and
    log flip a rollout only where two cards' scores tie to the last bit: the test below)."""
    compiled, stepwise = PIMCAgent(worlds=3), _Stepwise(worlds=3)
    kinds = set()
    for k, (state, live) in enumerate(_positions(21, batch=12, every=7)):
        if k % 2:
            continue
        legal = engine.legal_bits(state, live)
        kinds.update(state.phase[live].tolist())
        got, _ = compiled.action_values(state, live, legal, compiled.streams(state, live))
        want, _ = stepwise.action_values(state, live, legal, stepwise.streams(state, live))
        np.testing.assert_array_equal(got, want)
    assert kinds >= {engine.MODE, engine.GIVE, engine.DISCARD, engine.PLAY}
    state, live = next(_positions(14, batch=64, every=60))
    sims = sample_worlds(state, live, 8, np.random.default_rng(0))
    seat = sims.to_act.astype(np.intp)
    np.testing.assert_array_equal(compiled._roll_out(sims.copy(), seat, np.random.default_rng(0)),
                                  stepwise._roll_out(sims.copy(), seat, np.random.default_rng(0)))


def test_compiled_rollouts_end_as_the_stepwise_loops_but_for_last_bit_ties():
    """The compiled rollouts' heuristic calls the compiled exp and log, which differ from numpy's
    (the numpy heuristic's) in the last bit on a few arguments in a hundred; a rollout can then
    end otherwise only where two cards' scores tie to the last bit: at most 1 in 500 of some
    thousands of rollout games from every kind of position end with other points."""
    compiled, stepwise = PIMCAgent(), _Stepwise()
    differ = total = 0
    for state, live in itertools.islice(_positions(31, batch=48, every=11), 0, None, 3):
        sims = sample_worlds(state, live, 16, np.random.default_rng(total))
        seat = sims.to_act.astype(np.intp)
        got = compiled._roll_out(sims.copy(), seat, np.random.default_rng(0))
        want = stepwise._roll_out(sims.copy(), seat, np.random.default_rng(0))
        differ, total = differ + int((got != want).sum()), total + got.size
    assert total > 3000 and differ <= total / 500, (differ, total)


@pytest.mark.parametrize("options", [{"rollout": "greedy"}, {"others": "random"}, {"epsilon": 0.1},
                                     {"rollout": "ppo-sampled"}, {"rollout": "learned", "others": "learned-ppo"}],
                         ids=["greedy", "random-others", "epsilon", "sampled-network", "two-networks"])
def test_other_rollout_policies_keep_the_stepwise_loop(options):
    """Only the deterministic heuristic and policy networks playing their most likely action
    run compiled, without epsilon (two networks, or two heuristics with other weights, do not);
    any other policy is asked step by step as before."""
    if options.get("rollout") == "ppo-sampled":
        from sergeant_major_env.agents.ppo import PPOAgent

        options = {"rollout": PPOAgent(make_agent("learned").path, sample=True)}
    assert PIMCAgent(worlds=2, **options)._compiled_rollouts() is None
    heuristic = PIMCAgent(worlds=2)
    heuristic.rollout_policy.explore_modes = True  # random mode choices: not the kernels' heuristic
    assert heuristic._compiled_rollouts() is None
    tuned = PIMCAgent(worlds=2, rollout=make_agent("heuristic"))
    tuned.rollout_policy.params = {**tuned.rollout_policy.params, "lam": 0.5}  # own weights differ from others'
    assert tuned._compiled_rollouts() is None


@pytest.mark.parametrize("others", ["heuristic", "rollout"], ids=["network-and-heuristic", "network-everywhere"])
def test_network_rollouts_run_compiled_and_end_as_the_stepwise_loops(others):
    """``pimc:rollout=learned`` (the ``search`` agent) rolls out with the network compiled
    (agents/network_kernels.py) beside the heuristic's kernels, or everywhere with
    ``others=rollout``: the network sums in another order than torch, so a rollout may end
    otherwise only where two legal logits tie to float32's last bits: at most 1 in 500 of some
    thousands of rollout games from every kind of position, and the action values of these
    positions the stepwise loop's."""
    compiled = PIMCAgent(rollout="learned", others=others)
    plan = compiled._compiled_rollouts()
    assert plan is not None and plan.by_network.tolist() == [1, int(others == "rollout")]
    stepwise = _Stepwise(rollout="learned", others=others)
    differ = total = 0
    kinds = set()
    for state, live in itertools.islice(_positions(21, batch=12, every=7), 0, None, 2):
        kinds.update(state.phase[live].tolist())
        sims = sample_worlds(state, live, 16, np.random.default_rng(total))
        seat = sims.to_act.astype(np.intp)
        got = compiled._roll_out(sims.copy(), seat, np.random.default_rng(0))
        want = stepwise._roll_out(sims.copy(), seat, np.random.default_rng(0))
        differ, total = differ + int((got != want).sum()), total + got.size
    assert kinds >= {engine.MODE, engine.GIVE, engine.DISCARD, engine.PLAY}
    assert total > 2000 and differ <= total / 500, (differ, total)
    state, live = next(itertools.islice(_positions(43, batch=12, every=7), 3, None))
    legal = engine.legal_bits(state, live)
    got, _ = compiled.action_values(state, live, legal, compiled.streams(state, live))
    want, _ = stepwise.action_values(state, live, legal, stepwise.streams(state, live))
    np.testing.assert_array_equal(got, want)


# ============================================================================ pimc:cheat and search (issue 29)

def test_pimc_cheat_plays_every_decision_kind_legally_to_the_end_of_games():
    """``pimc:cheat`` searches copies of the true deal with pimc's rollouts: every decision kind is
    searched, the engine accepts every action, the games finish, and the table knows it cheats."""
    cheat = Recording(cheat=True, worlds=4)
    assert (cheat.cheats, cheat.name, cheat.worlds) == (True, "pimc:cheat", 1)  # deterministic rollouts: one copy
    result = play_tables([cheat, make_agent("random"), make_agent("random")],
                         TablePlan(games=30, seed=5, rules={"num_deals": 4}, progress=False))
    assert result.games == 30 and result.cheats == ["pimc:cheat"]
    assert cheat.kinds == {"mode", "exchange_give", "exchange_return", "discard", "play"}


def test_pimc_cheat_decisions_depend_on_the_hidden_cards():
    """The opposite of pimc's promise (test_pimc_decisions_do_not_depend_on_cards_the_seat_cannot_see):
    on a state that differs only in what the seat cannot see, the cheat decides otherwise in some
    games, while pimc with the same settings never does. In one batch, a game and its twin (the
    same to the seat) are searched apart, each on its own hidden cards."""
    cheat, fair = PIMCAgent(cheat=True, rollout="greedy"), PIMCAgent(worlds=1, rollout="greedy")
    rng = np.random.default_rng(0)
    differ = 0
    for k, (state, live) in enumerate(_positions(11)):
        if k % 4:
            continue
        twin = sample_worlds(state, live, 1, rng)
        np.testing.assert_array_equal(fair.act_on_state(state, live, np.random.default_rng(k)),
                                      fair.act_on_state(twin, np.arange(live.size), np.random.default_rng(k)))
        real = cheat.act_on_state(state, live, np.random.default_rng(k))
        other = cheat.act_on_state(twin, np.arange(live.size), np.random.default_rng(k))
        both = state.take(np.concatenate([live, live]))
        both.put(np.arange(live.size, 2 * live.size), twin)
        np.testing.assert_array_equal(cheat.act_on_state(both, np.arange(2 * live.size), np.random.default_rng(k)),
                                      np.concatenate([real, other]))
        differ += int((real != other).sum())
    assert differ > 0


def test_pimc_cheat_searches_worlds_copies_only_when_its_rollouts_are_random():
    """Deterministic rollouts give every copy of the true deal the same outcome: one is searched;
    random ones (a random policy, epsilon > 0) search ``worlds`` copies, each with its own noise."""
    assert make_agent("pimc:cheat:worlds=8").worlds == 1
    noisy = make_agent("pimc:cheat:worlds=8:epsilon=0.2")
    assert noisy.worlds == 8 and not noisy.deterministic
    state, live = next(_positions(4, batch=4, every=30))
    worlds = noisy._worlds(state, live, noisy.streams(state, live))
    assert worlds.batch_size == 8 * live.size
    np.testing.assert_array_equal(worlds.hands, state.hands[np.repeat(live, 8)])  # the true hidden cards
    actions = noisy.act_on_state(state, live, np.random.default_rng(0))
    assert ((engine.legal_bits(state, live) >> actions.astype(np.uint64)) & np.uint64(1)).all()


@pytest.mark.parametrize("spec, cheats", [("pimc:cheat", True), ("pimc:worlds=4:cheat", True),
                                          ("pimc:cheat=true:rollout=greedy", True), ("pimc:cheat=FALSE", False),
                                          ("pimc", False), ("pimc:rollout=ppo:runs/cheat", None)])
def test_pimc_cheat_is_a_flag_option(spec, cheats):
    """``cheat`` alone turns the flag on; ``cheat=true``/``cheat=false`` are accepted too; a policy
    path that merely contains the word stays the path."""
    from sergeant_major_env.agents.base import option_items

    if cheats is None:
        assert option_items("pimc", spec[5:], DEFAULTS, ("rollout",)) == [("rollout", "ppo:runs/cheat")]
        return
    agent = make_agent(spec)
    assert agent.cheats is cheats and agent.settings.cheat is cheats
    assert agent.name == ("pimc:cheat" if cheats else "pimc") and ("cheat=True" in repr(agent)) is cheats


@pytest.mark.parametrize("spec, message", [
    ("pimc:cheat:cheat", r"^pimc: option cheat given twice \(cheat=true and cheat\); give each option once$"),
    ("pimc:cheat=true:worlds=2:cheat=false", r"^pimc: option cheat given twice"),
    ("pimc:cheat=maybe", r"^pimc: cheat must be true or false \(or cheat alone for true\), got 'maybe'$"),
    ("pimc:cheats", r"^pimc: bad option 'cheats'; expected NAME=VALUE with NAME one of worlds, .*, cheat "
                    r"\(or a flag alone: belief_draw, belief_exact, cheat\)$"),
    ("pimc:worlds", r"^pimc: bad option 'worlds'; expected NAME=VALUE"),  # only flags stand alone
    ("pimc:cheat:infer=auto", r"^pimc: cheat searches the true deal; infer \(weighting sampled worlds\) does not "
                              r"apply to it$"),
])
def test_bad_pimc_cheat_specs_are_one_line(spec, message):
    with pytest.raises(ValueError, match=message):
        make_agent(spec)


def test_pimc_cheat_has_its_own_help_line_saying_it_sees_every_hidden_card():
    from sergeant_major_env.agents import agent_help

    lines = agent_help()
    names = list(lines)
    assert names.index("pimc:cheat") == names.index("pimc") + 1
    assert "sees every hidden card" in lines["pimc:cheat"] and "perfect inference only" in lines["pimc:cheat"]
    assert "sees every hidden card" in PIMCAgent.__doc__.replace("SEES EVERY HIDDEN CARD", "sees every hidden card")


def test_search_is_pimc_with_the_belief_learned_rollouts_and_prior_by_one_name():
    """``search`` names the strongest search measured: the same agent as
    ``pimc:rollout=learned:belief=learned:prior=learned:prior_weight=0.2`` (its repr, settings and
    decisions), listed with its parts; it takes no options, and no search rolls out a search."""
    from sergeant_major_env.agents import SEARCH, agent_help

    spec = "pimc:rollout=learned:belief=learned:prior=learned:prior_weight=0.2"
    search, spelled = make_agent("search"), make_agent(spec)
    assert SEARCH == spec and SEARCH in agent_help()["search"]
    assert search.settings.belief == "learned" and search.settings.belief_draw and search.settings.worlds == 16
    assert search.settings.belief_exact and search.settings.belief_power == 0.5  # the exact draw, at its best power
    assert search.settings.prior == "learned" and search.settings.prior_weight == 0.2 and search._prior is not None
    assert repr(search) == repr(spelled) and search.settings == spelled.settings and not search.cheats
    state, live = next(_positions(6, batch=3, every=25))
    np.testing.assert_array_equal(search.act_on_state(state, live, np.random.default_rng(1)),
                                  spelled.act_on_state(state, live, np.random.default_rng(2)))
    with pytest.raises(ValueError, match=r"^search: bad option 'worlds=4'; search takes no options"):
        make_agent("search:worlds=4")
    with pytest.raises(ValueError, match=r"^pimc: the rollout policy cannot itself be pimc \(search is pimc\)$"):
        make_agent("pimc:rollout=search")


def test_rollouts_on_every_core_give_the_points_of_one_thread(monkeypatch):
    """One decision's compiled rollouts go to threads.spread's threads in chunks when they are many
    (ROLLOUT_THREADS_FROM): the same points, bit for bit, as on one thread, with the heuristic
    (whose exchange gives come back to Python from each chunk) and with the network."""
    import sergeant_major_env.agents.pimc as pimc_module
    from sergeant_major_env import threads

    monkeypatch.setattr(pimc_module, "ROLLOUT_THREADS_FROM", 2)
    for options in ({}, {"rollout": "learned"}):
        search = PIMCAgent(**options)
        for k, (state, live) in enumerate(_positions(23, batch=12, every=7)):
            if k % 3:
                continue
            sims = sample_worlds(state, live, 8, np.random.default_rng(k))
            seat = sims.to_act.astype(np.intp)
            previous = threads.set_threads(1)
            try:
                alone = search._roll_out(sims.copy(), seat, np.random.default_rng(0))
                threads.set_threads(2)
                spread = search._roll_out(sims.copy(), seat, np.random.default_rng(0))
            finally:
                threads.set_threads(previous)
            np.testing.assert_array_equal(alone, spread)


def test_the_rollout_kernel_is_called_with_the_types_it_declares(monkeypatch):
    """`pimc_kernels.ROLLOUTS_SIGNATURE` (the types of `rollouts_k`, composed of the named
    tuples' types declared beside them) is what pimc hands the kernel, the heuristic's and a
    network's rollouts alike: the kernel compiled ahead is the one that runs."""
    import numba
    from numba.core import sigutils

    from sergeant_major_env.agents import pimc as pimc_module
    from sergeant_major_env.agents import pimc_kernels

    declared = sigutils.normalize_signature(f"({pimc_kernels.ROLLOUTS_SIGNATURE},)")[0]
    called = []

    def recording(*arguments):
        called.append(tuple(numba.typeof(argument) for argument in arguments))
        return pimc_kernels.rollouts_k(*arguments)

    monkeypatch.setattr(pimc_module, "rollouts_k", recording)
    state, live = next(_positions(3, batch=4, every=9))
    for spec in ("pimc:worlds=2", "pimc:worlds=2:rollout=learned"):
        make_agent(spec).act_on_state(state.copy(), live)
    assert called and set(called) == {declared}
    assert pimc_kernels.rollouts_k.signatures == [declared]
