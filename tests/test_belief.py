"""The belief model (issue 29): its code-free file, the worlds ``pimc:belief=...`` weights with it,
and ``sergeant-major distill belief`` that trains it."""

from __future__ import annotations

import json
import pickle
import tomllib
from pathlib import Path

import numpy as np
import pytest

from conftest import needs

torch = needs("torch")

from sergeant_major_env import Rules, engine  # noqa: E402
from sergeant_major_env.agents import make_agent  # noqa: E402
from sergeant_major_env.agents.belief import (BELIEF_FOLDER, FORMAT, Belief, BeliefNetwork, load_belief,  # noqa: E402
                                              save_belief)
from sergeant_major_env.agents.pimc import PIMCAgent  # noqa: E402
from sergeant_major_env.cards import bits_to_bool, random_member  # noqa: E402
from sergeant_major_env.engine import OVER  # noqa: E402
from sergeant_major_env.evaluation import TablePlan, play_tables  # noqa: E402
from sergeant_major_env.observation import observe  # noqa: E402
from sergeant_major_env.worlds import knowledge, sample_worlds  # noqa: E402
from test_worlds import assert_worlds_keep_what_the_seat_knows  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _model(folder: Path, layers=(8,), seed: int = 0) -> Path:
    torch.manual_seed(seed)
    folder.mkdir(parents=True, exist_ok=True)
    save_belief(BeliefNetwork(list(layers)), folder, list(layers), {"training": {"note": "a test"}})
    return folder


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    return _model(tmp_path_factory.mktemp("belief"))


def _positions(seed: int, batch: int = 6, every: int = 13, rules: Rules = Rules(num_deals=2)):
    """(state, live games) every ``every`` random steps of a batch of games, to their end."""
    state = engine.init(engine.game_seeds(seed, batch), rules)
    rng = np.random.default_rng(seed)
    while (state.phase != OVER).any():
        yield state, np.flatnonzero(state.phase != OVER)
        for _ in range(every):
            engine.step(state, random_member(engine.legal_bits(state), rng))


# ============================================================================ the file

def test_a_belief_file_round_trips_and_gives_probabilities(model):
    network, metadata = load_belief(model)
    torch.manual_seed(0)
    original = BeliefNetwork([8])
    for name, tensor in original.state_dict().items():
        assert torch.equal(network.state_dict()[name], tensor), name
    assert metadata["format"] == FORMAT and metadata["layers"] == [8] and metadata["training"] == {"note": "a test"}
    state, live = next(_positions(1))
    log_p = Belief(model).log_probs(observe(state.take(live), state.to_act[live]))
    assert log_p.shape == (live.size, 52, 3)
    np.testing.assert_allclose(np.exp(log_p).sum(axis=2), 1.0)


def _malformed(folder: Path, how: str) -> None:
    tensors, meta = folder / "belief.safetensors", folder / "belief.json"
    metadata = json.loads(meta.read_text())
    if how == "truncated":
        tensors.write_bytes(tensors.read_bytes()[:100])
    elif how == "wrong shapes":
        metadata["layers"] = [9]
    elif how == "missing layer":
        metadata["layers"] = [8, 8]
    elif how == "nan":
        from safetensors.torch import load_file, save_file
        weights = load_file(tensors)
        weights["head.bias"][3] = float("nan")
        save_file(weights, tensors)
    elif how == "float64":
        from safetensors.torch import load_file, save_file
        save_file({name: t.double() for name, t in load_file(tensors).items()}, tensors)
    elif how == "wrong format":
        metadata["format"] = "sergeant-major-env policy"
    elif how == "format version":
        metadata["format_version"] = 2
    elif how == "observation":
        metadata["observation"] = {"version": 1, "size": 500}
    elif how == "bins":
        metadata["bins"] = 4
    elif how == "layers":
        metadata["layers"] = [8, -1]
    elif how == "too big":
        tensors.write_bytes(tensors.read_bytes() + b"\0" * 2_000_000)
    elif how == "not json":
        meta.write_text("{not json")
        return
    elif how == "no tensors":
        tensors.unlink()
    meta.write_text(json.dumps(metadata))


@pytest.mark.parametrize("how, message", [
    ("truncated", r"is not a readable safetensors file"),
    ("wrong shapes", r"tensor body.0.weight has shape \(8, 919\), its belief.json layers need \(9, 919\)"),
    ("missing layer", r"does not match its belief.json layers: missing tensors .*body.2.bias.*body.2.weight"),
    ("nan", r"tensor head.bias holds 1 values that are NaN or infinite"),
    ("float64", r"tensor body.0.weight is torch.float64, expected torch.float32"),
    ("wrong format", r"is not a belief model's metadata"),
    ("format version", r"has format version 2; this package reads version 1"),
    ("observation", r"was trained on observation .*; this package observes version 2 \(919 floats\)"),
    ("bins", r"has cards 52 and bins 4; this package has 52 cards in 3 bins"),
    ("layers", r"\"layers\" must be a list of at most 8 layer sizes from 1 to 4096, got \[8, -1\]"),
    ("too big", r"but the tensors file has [\d,]+ bytes: they do not belong together"),
    ("not json", r"^belief metadata .* is not valid JSON"),
    ("no tensors", r"^belief file '.*belief.safetensors' not found"),
])
def test_a_malformed_belief_file_is_one_line_before_any_use(tmp_path, how, message):
    folder = _model(tmp_path / "m")
    _malformed(folder, how)
    with pytest.raises(ValueError, match=message) as error:
        load_belief(folder)
    assert "\n" not in str(error.value) and len(str(error.value)) < 400
    with pytest.raises(ValueError, match=r"^pimc: belief: .*" + message.lstrip("^")) as error:  # the agent: one line
        make_agent(f"pimc:belief={folder}")
    assert "\n" not in str(error.value)


def test_a_pickle_in_place_of_the_tensors_is_refused_without_running_it(tmp_path):
    """Nothing in a belief file runs code: a pickle whose loading would write a file is refused
    as not a safetensors file, and the file is not written."""
    folder = _model(tmp_path / "m")
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return (Path.write_text, (marker, "ran"))

    (folder / "belief.safetensors").write_bytes(pickle.dumps(Payload()))
    with pytest.raises(ValueError, match=r"is not a readable safetensors file"):
        load_belief(folder)
    assert not marker.exists()


# ============================================================================ the worlds

def _weighted(model: Path, **options) -> PIMCAgent:
    """The search weighting uniform candidates by the belief (``belief_draw=false``), or drawing
    its worlds by it with ``belief_draw=True``."""
    options.setdefault("belief_draw", False)
    return PIMCAgent(worlds=3, candidates=4, belief=str(model), rollout="greedy", **options)


def test_belief_weighted_worlds_keep_everything_the_seat_knows(model):
    """The worlds kept by weight are the sampler's, so they keep what the seat knows: the same
    checks as tests/test_worlds.py's for sample_worlds."""
    pimc = _weighted(model, belief_power=3.0)
    for rules in (Rules(num_deals=2), Rules(num_deals=2, must_overtake=True, must_overtrump=True)):
        for state, live in _positions(2, rules=rules):
            w = pimc._worlds(state, live, pimc.streams(state, live))
            assert_worlds_keep_what_the_seat_knows(state, live, w, pimc.worlds)


def _log_likelihood(belief: Belief, state, live, worlds, per_game: int) -> np.ndarray:
    """float[G, per_game]: each world's sum of the model's log-probabilities of its unseen cards' bins."""
    view = state.take(live)
    log_p = np.repeat(belief.log_probs(observe(view, view.to_act)), per_game, axis=0)
    seat = np.repeat(view.to_act.astype(np.intp), per_game)
    unseen = np.repeat(knowledge(state, live)["unseen"], per_game)
    rows = np.arange(worlds.batch_size)
    left, right = (worlds.hands[rows, (seat + k) % 3] & unseen for k in (1, 2))
    in_bin = np.stack([bits_to_bool(bits, 52) for bits in (left, right, unseen & ~(left | right))], axis=2)
    return np.where(in_bin, log_p, 0.0).sum(axis=(1, 2)).reshape(live.size, per_game)


def test_the_worlds_kept_are_the_likelier_ones_under_the_belief(model):
    """Resampling by the belief keeps worlds the model finds likelier than uniform worlds; with
    belief_power 0 the weights are equal."""
    pimc = _weighted(model, belief_power=5.0)
    gained = []
    for state, live in _positions(3):
        uniform = sample_worlds(state, live, pimc.worlds, np.random.default_rng(0))
        kept = pimc._worlds(state, live, pimc.streams(state, live))
        gained.append(_log_likelihood(pimc._belief, state, live, kept, pimc.worlds).mean()
                      - _log_likelihood(pimc._belief, state, live, uniform, pimc.worlds).mean())
    assert np.mean(gained) > 0
    flat = _weighted(model, belief_power=0.0)
    state, live = next(_positions(3, every=40))
    pool = sample_worlds(state, live, 4, np.random.default_rng(0))
    assert np.ptp(flat.belief_power * flat.belief_log_weights(state, live, pool, 4)) == 0


@pytest.mark.parametrize("exact", [True, False])
def test_worlds_drawn_by_the_belief_keep_what_the_seat_knows_and_are_likelier(model, exact):
    """``belief_draw``: the worlds come from the sampler drawing by the model (exactly, each world
    by the product of its probabilities; or by the cards' keys biased by it), so they keep what
    the seat knows (tests/test_worlds.py's checks) and the model finds them likelier than
    uniform worlds; by keys at belief_power 0 they are the uniform worlds, bit for bit (the
    exact draw at 0 is uniform too, other worlds: tests/test_worlds.py)."""
    pimc = _weighted(model, belief_power=2.0, belief_draw=True, belief_exact=exact)
    gained = []
    for rules in (Rules(num_deals=2), Rules(num_deals=2, must_overtake=True, must_overtrump=True)):
        for state, live in _positions(2, rules=rules):
            w = pimc._worlds(state, live, pimc.streams(state, live))
            assert_worlds_keep_what_the_seat_knows(state, live, w, pimc.worlds)
            uniform = pimc._sample_worlds(state, live, pimc.streams(state, live), pimc.worlds)
            gained.append(_log_likelihood(pimc._belief, state, live, w, pimc.worlds).mean()
                          - _log_likelihood(pimc._belief, state, live, uniform, pimc.worlds).mean())
    assert np.mean(gained) > 0
    if exact:
        return
    flat = _weighted(model, belief_power=0.0, belief_draw=True, belief_exact=False)
    state, live = next(_positions(3, every=40))
    np.testing.assert_array_equal(flat._worlds(state, live, flat.streams(state, live)).buffer,
                                  flat._sample_worlds(state, live, flat.streams(state, live), flat.worlds).buffer)


def test_the_belief_reads_only_what_the_seat_knows(model):
    """A state that differs only in what the seat to act cannot see (one of its own worlds) gives
    the same belief weights to the same worlds, the same worlds kept and the same decisions."""
    pimc = _weighted(model, belief_power=2.0)
    rng = np.random.default_rng(0)
    for k, (state, live) in enumerate(_positions(4, every=17)):
        twin = sample_worlds(state, live, 1, rng)
        twin_games = np.arange(live.size)
        pool = sample_worlds(state, live, 5, np.random.default_rng(k))
        np.testing.assert_array_equal(pimc.belief_log_weights(state, live, pool, 5),
                                      pimc.belief_log_weights(twin, twin_games, pool, 5))
        a = pimc._worlds(state, live, pimc.streams(state, live))
        b = pimc._worlds(twin, twin_games, pimc.streams(twin, twin_games))
        np.testing.assert_array_equal(a.hands, b.hands)
        if k % 3 == 0:
            np.testing.assert_array_equal(pimc.act_on_state(state, live, None),
                                          pimc.act_on_state(twin, twin_games, None))


def test_pimc_with_the_shipped_belief_plays_legally_and_is_deterministic():
    """``pimc:belief=learned`` finishes games (the engine refuses an illegal action), and its
    decisions depend on the position and its seed alone."""
    agent = make_agent("pimc:belief=learned:worlds=4")
    assert agent.settings.belief == "learned" and agent._belief is not None and agent.deterministic
    result = play_tables([agent, make_agent("heuristic"), make_agent("random")],
                         TablePlan(games=6, seed=5, rules={"num_deals": 1}, progress=False))
    assert result.games == 6
    state, live = next(s for k, s in enumerate(_positions(6, every=29)) if k == 3)
    first = agent.act_on_state(state, live, np.random.default_rng(0))
    again = make_agent("pimc:belief=learned:worlds=4").act_on_state(state, live, np.random.default_rng(1))
    np.testing.assert_array_equal(first, again)


# ============================================================================ the option

@pytest.mark.parametrize("spec, message", [
    ("pimc:cheat:belief=learned", r"^pimc: cheat searches the true deal; belief \(weighting sampled worlds\) does "
                                  r"not apply to it$"),
    ("pimc:belief_power=inf", r"^pimc: belief_power must be a finite number >= 0, got inf$"),
    ("pimc:belief_power=-1", r"^pimc: belief_power must be a finite number >= 0, got -1"),
    ("pimc:belief=nowhere/model", r"^pimc: belief: 'nowhere/model' is not a belief file: give a "
                                  r"\.safetensors file, its \.json or a folder holding belief\.safetensors$"),
    ("pimc:belief=learned:belief=none", r"^pimc: option belief given twice"),
    ("pimc:belief=learned:belief_draw=maybe", r"^pimc: belief_draw must be true or false"),
    ("pimc:belief=learned:belief_exact=2", r"^pimc: belief_exact must be true or false"),
])
def test_bad_belief_options_are_one_line(spec, message):
    with pytest.raises(ValueError, match=message):
        make_agent(spec)


def test_the_belief_options_parse_and_default_to_uniform_worlds():
    agent = make_agent("pimc:belief=learned:belief_power=0.5:candidates=2")
    assert (agent.settings.belief, agent.belief_power, agent.candidates) == ("learned", 0.5, 2)
    assert make_agent("pimc")._belief is None and make_agent("pimc").settings.belief == "none"
    assert make_agent("pimc:belief=learned").belief_power == 0.5  # the best measured (docs/results.md)
    drawn = make_agent("pimc:belief=learned:belief_power=0.25")  # the worlds drawn exactly by the belief, by default
    assert drawn.belief_draw and drawn.settings.belief_draw is True and drawn.belief_exact is True
    assert make_agent("pimc:belief=learned:belief_draw=false").belief_draw is False
    assert make_agent("pimc:belief=learned:belief_exact=false").belief_exact is False  # the keys' draw


# ============================================================================ training and shipping

def test_distill_belief_trains_writes_and_refuses_to_overwrite(tmp_path, capsys):
    from sergeant_major_env.cli.distill import main

    out = tmp_path / "b"
    argv = ["belief", "--out", str(out), "--games", "3", "--option", "num_deals=1", "--epochs", "1", "--layers", "16",
            "--holdout", "0.5", "--no-progress"]
    assert main(argv) == 0
    network, metadata = load_belief(out)
    training = metadata["training"]
    assert training["command"].startswith("sergeant-major distill belief --out ") and training["positions"] > 0
    history = training["history"]
    assert [row["epoch"] for row in history] == [0, 1] and 0 < history[0]["uniform"]["true_bin_probability"] < 1
    assert "uniform worlds: cross-entropy" in capsys.readouterr().err
    before = (out / "belief.safetensors").read_bytes()
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2 and "exists; add --overwrite to replace it" in capsys.readouterr().err
    assert (out / "belief.safetensors").read_bytes() == before
    for bad, said in ((["--players", "human,heuristic"], "a player cannot be human"),
                      (["--layers", "0"], "layers must be 1 to 8 sizes from 1 to 4096"),
                      (["--layers", "a,b"], "expected layer sizes separated by commas")):
        with pytest.raises(SystemExit):
            main(["belief", "--out", str(tmp_path / "c"), *bad])
        assert said in capsys.readouterr().err
    assert not (tmp_path / "c").exists()


def test_the_training_truth_is_a_bin_the_seat_allows(tmp_path):
    """Every position's true bin is one the seat's knowledge allows, seen cards have none, and
    the seats' tables mix the players."""
    from sergeant_major_env.training.belief import BeliefOptions, make_positions, seat_players

    data = make_positions(BeliefOptions(games=2, rules=Rules(num_deals=1), holdout=0.5))
    truth, allowed = data["truth"], data["allowed"]
    known = truth >= 0
    picked = np.take_along_axis(allowed, np.maximum(truth, 0)[:, :, None].astype(np.intp), axis=2)[:, :, 0]
    assert picked[known].all() and not allowed[~known].any() and known.any(axis=1).all()
    assert data["observation"].dtype == np.float16 and data["uniform"].shape[1:] == (52, 3)
    assert {tuple(row) for row in seat_players(8, 2)} == {(a, b, c) for a in (0, 1) for b in (0, 1) for c in (0, 1)}


def test_the_shipped_belief_model_loads_and_is_package_data():
    network, metadata = load_belief(BELIEF_FOLDER)
    assert metadata["training"]["command"].startswith("sergeant-major distill belief")
    history = metadata["training"]["history"]
    assert history[-1]["true_bin_probability"] > history[0]["uniform"]["true_bin_probability"]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = project["tool"]["setuptools"]["package-data"]["sergeant_major_env.agents.belief"]
    assert sorted(patterns) == sorted(path.name for path in BELIEF_FOLDER.iterdir()
                                      if path.is_file() and path.suffix not in (".py", ".pyc"))
