"""`sergeant-major train`'s options as one typed, checked, frozen config (CleanRL's `Args`).

`TrainConfig` declares every option once: its type, default, the values it allows
(a `Check`), its flag, its group and its line of help. The command line's parser is
built from it (`sergeant_major_env.arguments.add_arguments`), and `--resume` rebuilds a run's config from its
`run.json` through the same checks (`TrainConfig.from_stored`): a value the command
line refuses is refused in a stored run too, with one line naming the option and what is
allowed, before anything is written.

Checks run in `TrainConfig.__post_init__`, so no unchecked config exists:

* each option by its `Check` (a stored value must have the option's JSON type: the
  text `"5"` is not the integer 5);
* the rule options (`--option NAME=VALUE`, RULES.md section 9) by [`Rules`][];
* the opponent pool's weights, and no `human` agent (a person at a terminal cannot play
  the thousands of games training needs, nor be imitated);
* the network's size (`MAX_LAYERS`, `MAX_PARAMETERS`) and the memory a run
  needs at once against this machine's (`memory_needed`);
* the seeds the run derives from `--seed` and `--eval-seed` (the one seed rule).

No torch here: `--help` and usage errors work without the train extra.
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Any, Mapping

from sergeant_major_env.cards import NUM_ACTIONS
from sergeant_major_env import arguments
from sergeant_major_env.arguments import (  # noqa: F401  (the one mechanism of every command's options)
    MAX_TEXT, Check, Choice, ConfigError, Flag, HelpFormatter, Integer, Number, RuleOptions, Seed, Text, check_fields,
    opt)
from sergeant_major_env.limits import available_bytes
from sergeant_major_env.observation import OBSERVATION_SIZE
from sergeant_major_env.rules import Rules
from sergeant_major_env.seeding import MAX_SEED

IMITATION_SEED = 2_000_000_000
"""The imitation games' seeds start here (+ --seed): apart from the training and evaluation deals."""
MAX_LAYERS = 16
"""Hidden layers of a network, at most."""
MAX_WIDTH = 65536
"""Units of a hidden layer, at most."""
MAX_PARAMETERS = 50_000_000
"""Weights of the policy and value networks together, at most: 200 MB of float32, 800 MB with
their gradients and Adam's two moments."""
IMITATION_BYTES_PER_DECISION = 3_700
"""Memory of one teacher decision held for a round of imitation (observation, mask, action,
return, and torch's copies)."""
MAX_EVAL_OPPONENTS = 8
"""Evaluation tables (`--eval-opponents`), at most: each is played at every evaluation."""
NAME_PATTERN = re.compile(r"[A-Za-z0-9._-]{1,100}")
"""A run name (`--name`): 1 to 100 of these characters, not `.` or `..`."""


# ============================================================================ checks of train's own

class AgentName(Text):
    """An agent name (`sergeant-major agents` lists them), not `human`: training plays
    thousands of games at once, with no terminal; `none_allowed`: or `none`."""

    shown = True

    def __init__(self, none_allowed: bool = False) -> None:
        super().__init__()
        self.allowed = "an agent name (sergeant-major agents lists them; not human)" + \
            (" or none" if none_allowed else "")

    def check(self, value: Any) -> str:
        value = super().check(value)
        from ..agents.human import is_human  # the one test of "the human agent" (names and agents)

        if is_human(value):
            raise ValueError(f"human needs a person at a terminal and cannot train or be imitated; give "
                             f"{self.allowed}, got {value!r}")
        return value


class Pool(Text):
    """Opponents and their weights: `NAME=WEIGHT,...` (`parse_pool`), no `human`."""

    shown = True

    def __init__(self) -> None:
        super().__init__()
        self.allowed = POOL_FORM

    def check(self, value: Any) -> str:
        value = super().check(value)
        from ..agents.human import is_human

        for name in parse_pool(value):
            if is_human(name):
                raise ValueError(f"human needs a person at a terminal and cannot train; the pool takes agent "
                                 f"names (sergeant-major agents lists them) and 'self', got {value!r}")
        return value


class Opponents(Text):
    """The evaluation tables' opponents: 1 to `MAX_EVAL_OPPONENTS` distinct agent names
    separated by commas, none `human` (`self` is not an agent: a table needs a fixed player)."""

    shown = True

    def __init__(self) -> None:
        super().__init__()
        self.allowed = (f"1 to {MAX_EVAL_OPPONENTS} distinct agent names separated by commas (sergeant-major agents "
                        f"lists them; not human)")

    def check(self, value: Any) -> str:
        value = super().check(value)
        from ..agents.human import is_human

        names = eval_opponent_names(value)
        if not 1 <= len(names) <= MAX_EVAL_OPPONENTS or len(set(names)) != len(names) or "" in names \
                or "self" in names or any(is_human(name) for name in names):
            raise self.refuse(value)
        return value


def eval_opponent_names(text: str) -> list[str]:
    """'random,heuristic' -> ['random', 'heuristic'] (names may hold colons: `ppo:RUN`)."""
    return [name.strip() for name in text.split(",")]


class LayerSizes(Check):
    """Hidden layer sizes: 1 to `MAX_LAYERS` integers, each 1 to `MAX_WIDTH` (`128,128`)."""

    allowed = (f"hidden layer sizes separated by commas, 1 to {MAX_LAYERS} layers of 1 to {MAX_WIDTH} units "
               f"(e.g. 128,128)")

    def check(self, value: Any) -> tuple[int, ...]:
        if not isinstance(value, (list, tuple)) or not 1 <= len(value) <= MAX_LAYERS or not all(
                isinstance(size, int) and not isinstance(size, bool) and 1 <= size <= MAX_WIDTH for size in value):
            raise self.refuse(value)
        return tuple(value)

    def parse(self, text: str) -> tuple[int, ...]:
        try:
            return self.check([int(x) for x in text.split(",")])
        except ValueError:
            raise self.refuse(text) from None


class RunName(Check):
    """`--name`: a folder name under runs/ (`NAME_PATTERN`), or none."""

    allowed = "1 to 100 letters, digits, '.', '_' or '-' (it makes runs/NAME; --out DIR takes a path)"

    def check(self, value: Any) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str) or not NAME_PATTERN.fullmatch(value) or value in (".", ".."):
            raise self.refuse(value)
        return value


POOL_FORM = ("NAME=WEIGHT,... of distinct agent names (not human) and 'self', each weight above 0: its share "
             "of the games (a name alone: 1)")
"""What --opponents takes (`parse_pool`)."""


def parse_pool(text: str) -> dict[str, float]:
    """'random=1,heuristic=2,self=2' -> {name: weight}; a name alone has weight 1. The weights
    are the members' shares of the games, so one member alone plays them all whatever its
    weight (`self` alone: pure self-play). A ValueError, naming the problem and `POOL_FORM`,
    for a member without a name, a name given twice (which weight would it be?), a weight
    that is not a finite number, and a weight of 0 (that member would never play). The weight
    follows the last '=', so an agent whose options hold one needs it: `pool_member`."""
    pool: dict[str, float] = {}
    for item in (x.strip() for x in text.split(",")):
        name, _, weight = item.rpartition("=") if "=" in item else (item, "", "1")
        name = name.strip()
        if not name:
            raise ValueError(f"an opponent without a name in {text!r}; give {POOL_FORM}")
        if name in pool:
            raise ValueError(f"{name} is given twice in {text!r}; give {POOL_FORM}")
        try:
            pool[name] = float(weight)
        except ValueError:
            options = f"; an agent with options takes its weight after them: {item}=1" if ":" in item else ""
            raise ValueError(f"bad weight in {item!r}{options}; give {POOL_FORM}") from None
        if not pool[name] > 0 or not math.isfinite(pool[name]):
            never = " (at 0 it would never play)" if pool[name] == 0 else ""
            raise ValueError(f"{item!r} needs a finite, positive weight{never}; give {POOL_FORM}")
    return pool


def pool_member(agent: str) -> str:
    """The --opponents text of `agent` alone: its name, its weight after it where the name holds
    an '=' (`pimc:worlds=8=1`; `pimc:worlds=8` would read as pimc:worlds at weight 8)."""
    return f"{agent}=1" if "=" in agent else agent


# ============================================================================ the options

RUN, OPPONENTS, IMITATION, NETWORK, EVALUATION = (
    "run", "opponents", "imitation warm start", "network and PPO", "evaluation and checkpoints")


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """Every option of `sergeant-major train`: one field each, checked when made.

    The attribute docstrings are the options' lines of `--help`. Options with
    `run=False` (where and how this command runs) are not part of the run: run.json does
    not keep them and `--resume` takes them from the command line.
    """

    total_timesteps: int = opt(3_000_000, Integer(1), RUN, metavar="T")
    """learner decisions (env steps) to train for, in all (--resume may raise it)"""
    num_envs: int = opt(512, Integer(1, 1_000_000), RUN, metavar="N")
    """games played in parallel"""
    seed: int = arguments.seed(0, RUN)
    """seed of everything"""
    option: tuple[str, ...] = arguments.rule_options((), RUN, run=False)
    name: str | None = opt(None, RunName(), RUN, run=False)
    """run name: output in runs/NAME (default: a new timestamp)"""
    out: str | None = opt(None, Text(optional=True), RUN, metavar="DIR", run=False)
    """output folder (default runs/NAME; on --resume, RUN itself)"""
    overwrite: bool = arguments.overwrite(RUN, run=False)
    """empty the output folder first if it holds a run (else refused)"""
    resume: str | None = opt(None, Text(optional=True), RUN, metavar="RUN", run=False)
    """continue a run folder or checkpoint .zip with its own options (it unpickles: your own runs only)"""
    device: str = opt("cpu", Text(), RUN, run=False)
    """torch device of the learner: cpu, cuda, cuda:N, mps or auto"""
    update_threads: int = opt(2, Integer(1, 256), RUN, metavar="N")
    """torch CPU threads of the learner: PPO's rollouts and gradient updates, the imitation (evaluations keep one); part of the run's bits"""
    no_progress: bool = arguments.no_progress(RUN, run=False)

    opponents: str = opt("heuristic=1", Pool(), OPPONENTS, metavar="NAME=W,...")
    """opponent pool: agent names and 'self' (the league of learner snapshots) with their weights; one name alone
    plays every game (self alone: pure self-play, the live learner until its first snapshot)"""
    opponent_pairs: str = opt("same", Choice("same", "independent"), OPPONENTS)
    """same: one pool member plays both opponent seats of a game; independent: one draw per seat"""
    curriculum: bool = opt(True, Flag(), OPPONENTS, flag="--no-curriculum", kind="no-flag")
    """constant pool weights (default: a curriculum from weak to strong opponents)"""
    curriculum_end: float = opt(0.5, Number(0, 1, low_open=True), OPPONENTS, metavar="F")
    """fraction of the run after which the --opponents weights hold"""
    snapshot_every: int = opt(20, Integer(1), OPPONENTS, metavar="K")
    """PPO updates between league snapshots"""
    league_size: int = opt(3, Integer(1, 1000), OPPONENTS, metavar="M")
    """snapshots kept in the league (the latest)"""
    snapshot_actions: str = opt("sample", Choice("sample", "argmax"), OPPONENTS)
    """snapshots play a sample of their masked policy, or its most likely action"""

    imitate: str = opt("heuristic", AgentName(none_allowed=True), IMITATION, metavar="AGENT")
    """before PPO, copy this agent's moves and fit the value to its returns ('heuristic', ...; 'none': no warm start)"""
    imitate_steps: int = opt(1_200_000, Integer(0), IMITATION, metavar="T")
    """teacher decisions to learn from (not counted in --total-timesteps)"""
    imitate_lr: float = opt(3e-3, Number(0, 1, low_open=True), IMITATION, metavar="LR")
    """imitation learning rate"""
    imitate_epochs: int = opt(4, Integer(1, 1000), IMITATION, metavar="E")
    """passes over each round of teacher decisions"""
    imitate_round: int = opt(300_000, Integer(1), IMITATION, metavar="L")
    """teacher decisions gathered, then fitted in shuffled minibatches (memory: ~3.7 kB each)"""

    net_arch: tuple[int, ...] = opt((128, 128), LayerSizes(), NETWORK, metavar="H,H")
    """hidden layer sizes of the policy and of the (separate) value network"""
    activation: str = opt("relu", Choice("relu", "tanh"), NETWORK)
    """activation of the hidden layers (SB3's default is tanh; relu imitated better)"""
    init: str = opt("none", Text(), NETWORK, metavar="POLICY")
    """start from this policy's weights instead of new ones: learned, learned-ppo, a run folder or policy.safetensors, whose networks must have --net-arch and --activation ('none': new weights; with a policy, --imitate defaults to none)"""
    learning_rate: float = opt(2e-4, Number(0, 1, low_open=True), NETWORK, metavar="LR")
    """Adam learning rate"""
    anneal_lr: bool = opt(True, Flag(), NETWORK, kind="on-off")
    """decay the learning rate linearly to 0 over the run (--no-anneal-lr keeps it constant)"""
    n_steps: int = opt(16, Integer(1), NETWORK, metavar="K")
    """steps per game slot per rollout"""
    batch_size: int = opt(1024, Integer(2), NETWORK, metavar="B")
    """minibatch size"""
    n_epochs: int = opt(2, Integer(1, 1000), NETWORK, metavar="E")
    """epochs per rollout"""
    gamma: float = opt(0.995, Number(0, 1), NETWORK)
    """discount factor"""
    gae_lambda: float = opt(0.95, Number(0, 1), NETWORK)
    """GAE lambda"""
    clip_range: float = opt(0.2, Number(0, 1, low_open=True), NETWORK)
    """PPO clip range"""
    reward_scale: float = opt(1.0, Number(0, 1e6, low_open=True), NETWORK, metavar="C")
    """PPO's rewards are each deal's points times C (logged returns stay in points)"""
    ent_coef: float = opt(0.003, Number(0, 1e6), NETWORK)
    """entropy bonus coefficient"""
    vf_coef: float = opt(0.5, Number(0, 1e6), NETWORK)
    """value loss coefficient"""
    max_grad_norm: float = opt(0.5, Number(0, 1e6, low_open=True), NETWORK)
    """gradient clipping norm"""

    eval_every: int = opt(1_000_000, Integer(0), EVALUATION, metavar="T")
    """timesteps between evaluations (0: only the final one)"""
    eval_opponents: str = opt("random,heuristic", Opponents(), EVALUATION, metavar="NAME,...")
    """the evaluation tables: the learner against two copies of each of these agents"""
    eval_games: int = opt(180, Integer(1, 1_000_000), EVALUATION, metavar="G")
    """games per evaluation table, rounded up to a multiple of 6"""
    final_eval_games: int = opt(600, Integer(1, 1_000_000), EVALUATION, metavar="G")
    """games per final evaluation table"""
    eval_seed: int = opt(1_000_000, Seed(), EVALUATION, metavar="S")
    """first engine seed of the evaluation deals, the same at every evaluation"""
    save_evaluated: bool = opt(False, Flag(), EVALUATION, kind="flag")
    """write the policy of every evaluation to RUN/evaluated/policy_T.safetensors (code-free; ppo:PATH plays it)"""
    checkpoint_every: int = opt(1_000_000, Integer(0), EVALUATION, metavar="T")
    """timesteps between checkpoints (0: only at the end; an interrupt writes one too)"""

    def __post_init__(self) -> None:
        """Every option by its check (normalised: lists become tuples, numbers floats), then the
        checks across options. A `ConfigError` names the option."""
        check_fields(self)
        try:
            self.rules
        except ValueError as error:
            raise ConfigError("option", str(error)) from None
        check_network(self)
        check_memory(self)
        check_derived_seeds(self)

    # ---------------------------------------------------------------- what follows from the options

    @property
    def rules(self) -> Rules:
        """The rule options (`--option`)."""
        return Rules.from_strings(list(self.option))

    @property
    def eval_tables(self) -> tuple[str, ...]:
        """The evaluation tables' opponents (`--eval-opponents`), in order."""
        return tuple(eval_opponent_names(self.eval_opponents))

    @property
    def pool(self) -> dict[str, float]:
        """The opponent pool, {agent name or 'self': weight}."""
        return parse_pool(self.opponents)

    def run_options(self) -> dict[str, Any]:
        """What run.json keeps of the run, as JSON values: every option with `run=True` (the
        rule options are kept apart, as `rules`)."""
        return {name: list(value) if isinstance(value, tuple) else value
                for name, value in dataclasses.asdict(self).items() if name in run_option_names()}

    def replace(self, **changes: Any) -> "TrainConfig":
        """This config with `changes`, checked again."""
        return dataclasses.replace(self, **changes)

    # ---------------------------------------------------------------- from a stored run

    @classmethod
    def from_stored(cls, options: Any, rules: Any, where: str,
                    before: Mapping[str, Any] | None = None) -> "TrainConfig":
        """The config of a stored run (`options` and `rules` of its run.json) through the same
        checks as the command line's; a ValueError names `where` (the file), the option and what
        it allows. Options it lacks have the values of `before` (what runs had before the option
        existed), else their defaults."""
        if not isinstance(options, Mapping):
            raise ValueError(f"{where}: 'options' must be a JSON object of option names and values, got "
                             f"{type(options).__name__}")
        if not isinstance(rules, Mapping):
            raise ValueError(f"{where}: 'rules' must be a JSON object of rule options ({', '.join(Rules.names())}), "
                             f"got {type(rules).__name__}")
        options = {**(before or {}), **options}
        known = run_option_names()
        unknown = sorted(str(name) for name in options if name not in known)
        if unknown:
            not_kept = sorted(set(f.name for f in fields()) - set(known))
            raise ValueError(f"{where}: unknown option {unknown[0][:50]!r}; a run's options are those "
                             f"sergeant-major train --help lists, except {', '.join(not_kept)}")
        try:
            rule_options = tuple(f"{name}={rule_text(value)}"
                                 for name, value in Rules.from_dict(rules).to_dict().items())
        except (TypeError, ValueError) as error:
            raise ValueError(f"{where}: 'rules': {error}") from None
        try:
            return cls(**options, option=rule_options)
        except ConfigError as error:
            shown = error.field if error.field in known else "rules" if error.field == "option" else error.field
            raise ValueError(f"{where}: option {shown}: {error.message}") from None


def rule_text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def fields() -> tuple[dataclasses.Field, ...]:
    return dataclasses.fields(TrainConfig)


def run_option_names() -> list[str]:
    """The options that describe the run (kept in run.json), in order."""
    return [field.name for field in fields() if field.metadata["run"]]


def flag_of(name: str) -> str:
    """The command line's flag of option `name` (its first spelling)."""
    return arguments.flag_of(TrainConfig, name)


def defaults() -> TrainConfig:
    return TrainConfig()


# ============================================================================ checks across options

def network_parameters(net_arch: tuple[int, ...]) -> int:
    """Weights and biases of the policy network (observation -> hidden layers -> 58 logits) plus
    the value network (the same hidden layers -> 1 value)."""
    def mlp(outputs: int) -> int:
        sizes = [OBSERVATION_SIZE, *net_arch, outputs]
        return sum(a * b + b for a, b in zip(sizes, sizes[1:]))

    return mlp(NUM_ACTIONS) + mlp(1)


def check_network(config: TrainConfig) -> None:
    parameters = network_parameters(config.net_arch)
    if parameters > MAX_PARAMETERS:
        raise ConfigError("net_arch", f"{','.join(map(str, config.net_arch))} makes networks of {parameters:,} "
                                      f"weights; at most {MAX_PARAMETERS:,} are allowed (e.g. 256,256 has "
                                      f"{network_parameters((256, 256)):,})")


def memory_needed(config: TrainConfig) -> int:
    """Bytes a run holds at once, roughly: the networks with gradients and Adam's moments (16
    bytes a weight), one round of imitation (`IMITATION_BYTES_PER_DECISION` each) and
    PPO's rollout buffer (`rollout_bytes`)."""
    network = 16 * network_parameters(config.net_arch)
    imitation = IMITATION_BYTES_PER_DECISION * min(config.imitate_round, config.imitate_steps) \
        if config.imitate != "none" else 0
    return network + imitation + rollout_bytes(config)


def rollout_bytes(config: TrainConfig) -> int:
    """PPO's rollout buffer: for each of --num-envs x --n-steps steps, the observation, the action
    mask and seven numbers (action, reward, return, value, log-probability, advantage, episode
    start), each a float32 (as SB3 and sb3-contrib store them)."""
    return config.num_envs * config.n_steps * 4 * (OBSERVATION_SIZE + NUM_ACTIONS + 7)


def check_memory(config: TrainConfig, available: int | None = None) -> None:
    """A ConfigError when `memory_needed` is beyond the memory this machine has available
    (the one size rule's reading, `sergeant_major_env.limits.available_bytes`), naming the
    option that needs the most."""
    available = available_bytes() if available is None else available
    needed = memory_needed(config)
    if available is None or needed <= available:
        return
    parts = {"net_arch": 16 * network_parameters(config.net_arch),
             "imitate_round": IMITATION_BYTES_PER_DECISION * min(config.imitate_round, config.imitate_steps),
             "num_envs": rollout_bytes(config)}
    largest = max(parts, key=parts.get)
    raise ConfigError(largest, f"the run would hold about {needed / 2**30:,.1f} GiB at once, more than the "
                               f"{available / 2**30:,.1f} GiB this machine has available (networks, an imitation round of --imitate-round "
                               f"decisions, PPO's rollout of --num-envs x --n-steps steps)")


def check_derived_seeds(config: TrainConfig) -> None:
    """The seeds the run derives from --seed and --eval-seed stay within the one seed rule."""
    largest = config.seed + IMITATION_SEED + config.imitate_steps + config.total_timesteps + config.num_envs
    if largest > MAX_SEED:
        raise ConfigError("seed", f"{config.seed} is too large: the run's games use seeds up to --seed + "
                                  f"{largest - config.seed} ({largest}), above the largest seed {MAX_SEED}")
    games = max(config.eval_games, config.final_eval_games)
    if config.eval_seed + games > MAX_SEED:
        raise ConfigError("eval_seed", f"{config.eval_seed} is too large: the evaluation deals use seeds up to "
                                       f"--eval-seed + {games}, above the largest seed {MAX_SEED}")


# ============================================================================ the command line

def field_help() -> dict[str, str]:
    """{option: its line of help}: its attribute docstring."""
    return arguments.field_help(TrainConfig)
