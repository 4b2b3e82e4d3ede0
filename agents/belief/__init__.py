"""`belief`: where the unseen cards are, as one seat sees it (a network, its code-free file).

A belief model reads one seat's observation ([`sergeant_major_env.observation.observe`][],
the seat's whole information state) and gives, for each of the 52 cards, three logits: the
card is in the hand of the seat on the left (seat + 1), in the hand on the right (seat + 2),
or in the pile (the talon before it is shown, the playmaker's discards after; during the
playmaker's own mode choice also its ten cards not yet seen). These are the three bins of
[`sergeant_major_env.worlds.knowledge`][]. Only the unseen cards' logits mean anything: the
model is trained on them alone (`sergeant-major distill belief`,
`sergeant_major_env.training.belief`), each card's softmax taken over the bins it may be in.

`pimc:belief=learned` weights its sampled worlds by it (`Belief.world_log_weights`):
a world's log-weight is the sum, over the unseen cards, of the log of the model's probability
of the bin the world put the card in over the share of the uniform candidates that put it
there. The worlds are drawn uniformly among those consistent with what the seat knows, so the
weights only choose among consistent worlds; the model never sees a hidden card (it reads the
observation alone).

The file is a pair, like a policy file (`sergeant_major_env.agents.policy_file`), and
cannot carry code: `belief.safetensors` (the tensors) and `belief.json` beside it
(`FORMAT`, `FORMAT_VERSION`, the observation layout, `cards` 52, `bins` 3, the
hidden layers, and how it was made). `load_belief` checks everything before use, each
problem one ValueError line: the JSON (bounded read, format, version, layout, layers), the
tensors file's size against the network the JSON describes (before it is read), the tensors'
names, shapes and dtype, and that every weight is finite. This folder holds the shipped
model, `belief=learned`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from sergeant_major_env import files
from sergeant_major_env.cards import NUM_CARDS, bits_to_bool
from sergeant_major_env.limits import check_fits, shorten
from sergeant_major_env.observation import OBSERVATION_SIZE
from sergeant_major_env.observation import VERSION as OBSERVATION_VERSION

from ..policy_file import MAX_HEADER_BYTES, check_tensors, read_described, read_tensors, shown_path

FORMAT = "sergeant-major-env belief"
FORMAT_VERSION = 1
TENSORS_FILE = "belief.safetensors"
METADATA_FILE = "belief.json"
BINS = 3
"""Left hand, right hand, pile (`sergeant_major_env.worlds.A_BIN`, `B_BIN`, `PILE`)."""
BELIEF_FOLDER = Path(__file__).resolve().parent
"""The shipped model (`belief=learned`)."""
SHIPPED = {"learned": BELIEF_FOLDER}
MAX_METADATA_BYTES = 1_000_000
MAX_METADATA_DEPTH = 32
MAX_LAYERS = 8
"""Most hidden layers a belief file may describe."""
MAX_LAYER_SIZE = 4096
"""Largest hidden layer a belief file may describe."""
_OWN_KEYS = ("format", "format_version", "tensors", "observation", "cards", "bins", "layers")


class BeliefNetwork(nn.Module):
    """An MLP (ReLU) from the observation to `[B, 52, 3]` logits: `body` the hidden layers,
    `head` the last linear layer (52 x 3 outputs)."""

    def __init__(self, layers: list[int]) -> None:
        super().__init__()
        modules: list[nn.Module] = []
        width = OBSERVATION_SIZE
        for size in layers:
            modules += [nn.Linear(width, size), nn.ReLU()]
            width = size
        self.body = nn.Sequential(*modules)
        self.head = nn.Linear(width, NUM_CARDS * BINS)

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(observations)).reshape(-1, NUM_CARDS, BINS)


def belief_source(name: str | Path) -> Path:
    """The file or folder a `belief` option names: the shipped model's folder for `learned`."""
    return SHIPPED.get(str(name), Path(name))


def belief_paths(path: str | Path) -> tuple[Path, Path]:
    """(`.safetensors`, `.json`) of `path`: either file of the pair or a folder holding
    belief.safetensors; a one-line ValueError when they are not there."""
    path = Path(path)
    if path.is_dir():
        tensors = path / TENSORS_FILE
    elif path.suffix in (".safetensors", ".json"):
        tensors = path.with_suffix(".safetensors")
    else:
        raise ValueError(f"{shorten(str(path))} is not a belief file: give a .safetensors file, its .json or a folder "
                         f"holding {TENSORS_FILE}")
    for needed in (tensors, tensors.with_suffix(".json")):
        if not needed.is_file():
            raise ValueError(f"belief file {shown_path(needed)!r} not found (a belief model is NAME.safetensors with "
                             f"NAME.json beside it)")
    return tensors, tensors.with_suffix(".json")


def parameter_count(layers: list[int]) -> int:
    """Numbers in a `BeliefNetwork` of these hidden layers (weights and biases)."""
    widths = [OBSERVATION_SIZE, *layers, NUM_CARDS * BINS]
    return sum((a + 1) * b for a, b in zip(widths, widths[1:]))


def read_belief_metadata(path: str | Path) -> dict[str, Any]:
    """The checked belief.json of `path`: bounded read, format and version, the observation
    layout, 52 cards in 3 bins, hidden layers of at most `MAX_LAYERS` sizes from 1 to
    `MAX_LAYER_SIZE`; each problem one ValueError line."""
    _, metadata_path = belief_paths(path)
    metadata, where = read_described(metadata_path, "belief", "a belief model's", FORMAT, FORMAT_VERSION,
                                     MAX_METADATA_BYTES, MAX_METADATA_DEPTH)
    observation = metadata.get("observation")
    layout = (observation.get("version"), observation.get("size")) if isinstance(observation, dict) else None
    if layout != (OBSERVATION_VERSION, OBSERVATION_SIZE):
        raise ValueError(f"belief {where} was trained on observation {shorten(observation)}; this package observes "
                         f"version {OBSERVATION_VERSION} ({OBSERVATION_SIZE} floats)")
    if (metadata.get("cards"), metadata.get("bins")) != (NUM_CARDS, BINS):
        raise ValueError(f"belief {where} has cards {shorten(metadata.get('cards'))} and bins "
                         f"{shorten(metadata.get('bins'))}; this package has {NUM_CARDS} cards in {BINS} bins")
    layers = metadata.get("layers")
    if not (isinstance(layers, list) and len(layers) <= MAX_LAYERS
            and all(type(n) is int and 1 <= n <= MAX_LAYER_SIZE for n in layers)):
        raise ValueError(f"belief {where}: \"layers\" must be a list of at most {MAX_LAYERS} layer sizes from 1 to "
                         f"{MAX_LAYER_SIZE}, got {shorten(layers)}")
    return metadata


def load_belief(path: str | Path) -> tuple[BeliefNetwork, dict[str, Any]]:
    """(network, metadata) of a belief file or folder; nothing is unpickled, and everything is
    checked before use (the module docstring), each problem one ValueError line."""
    tensors_path, _ = belief_paths(path)
    metadata = read_belief_metadata(path)
    where = shown_path(tensors_path)
    layers = metadata["layers"]
    parameters = parameter_count(layers)
    needed, size = 4 * parameters, tensors_path.stat().st_size
    if size > needed + MAX_HEADER_BYTES:
        raise ValueError(f"belief {where}: its belief.json network has {parameters:,} parameters ({needed:,} bytes as "
                         f"float32), but the tensors file has {size:,} bytes: they do not belong together")
    check_fits(f"belief {where}", 2 * min(size, needed))
    with torch.device("meta"):  # shapes only: every number comes from the file
        shapes = BeliefNetwork(layers)
    tensors = read_tensors(tensors_path)
    check_tensors(tensors, {name: tuple(p.shape) for name, p in shapes.state_dict().items()}, f"belief {where}",
                  "its belief.json layers", "a model's weights", needs="need")
    network = shapes.to_empty(device="cpu")
    network.load_state_dict(tensors, strict=True)
    network.eval()
    network.requires_grad_(False)
    return network, metadata


def save_belief(network: BeliefNetwork, folder: str | Path, layers: list[int],
                metadata: dict[str, Any] | None = None) -> Path:
    """Write `network` as FOLDER/belief.safetensors + FOLDER/belief.json, each atomically, the
    tensors first; `metadata` (JSON-able: how it was made) is added to the JSON. Returns the
    tensors' path. The caller checks beforehand that it may replace them (`--overwrite`)."""
    from safetensors.torch import save

    clash = sorted(set(metadata or {}) & set(_OWN_KEYS))
    if clash:
        raise ValueError(f"belief metadata may not set {', '.join(clash)}: the writer sets those")
    tensors_path = Path(folder) / TENSORS_FILE
    tensors = {name: t.detach().to("cpu").contiguous().clone() for name, t in network.state_dict().items()}
    description = {"format": FORMAT, "format_version": FORMAT_VERSION, "tensors": TENSORS_FILE,
                   "observation": {"version": OBSERVATION_VERSION, "size": OBSERVATION_SIZE},
                   "cards": NUM_CARDS, "bins": BINS, "layers": list(layers), **(metadata or {})}
    files.write_bytes(tensors_path, save(tensors, metadata={"format": FORMAT, "format_version": str(FORMAT_VERSION)}))
    files.write_json(tensors_path.with_suffix(".json"), description)
    return tensors_path


class Belief:
    """A loaded belief model as the search uses it (`pimc:belief=...`)."""

    def __init__(self, source: str | Path) -> None:
        from ..torch_setup import use_torch_threads

        use_torch_threads()
        self.source = str(source)
        self.network, self.metadata = load_belief(belief_source(source))

    def log_probs(self, observations: np.ndarray) -> np.ndarray:
        """float64[B, 52, 3]: each card's log-probability of each bin (a softmax over the three;
        the worlds' weights need them only up to a constant per card)."""
        with torch.no_grad():
            logits = self.network(torch.as_tensor(np.asarray(observations, dtype=np.float32)))
        return torch.log_softmax(logits.double(), dim=2).numpy()

    def world_log_weights(self, observations: np.ndarray, worlds, seat: np.ndarray, unseen: np.ndarray,
                          per_game: int) -> np.ndarray:
        """float[G * per_game]: the log-weight of each world (row `i * per_game + w` one of game
        i's `per_game` uniform candidates): the sum over game i's `unseen` cards (uint64[G])
        of log p(bin) - log u(bin), the bin the world put the card in, p the model's probability
        from `observations` (float32[G, D]: the seat's, never the world's; `seat` int[G] the
        seat to act), u the share of the game's candidates putting the card there (`SMOOTHING`
        added). Uniform worlds already follow what the seat knows (a void, a hand's size): the
        ratio moves their marginals to the model's without counting that knowledge twice, as the
        probabilities alone do (their product favours worlds the sampler already favours)."""
        log_p = np.repeat(self.log_probs(observations), per_game, axis=0)  # [R, 52, 3]
        rows = np.arange(worlds.batch_size)
        seat = np.repeat(np.asarray(seat, dtype=np.intp), per_game)
        unseen = np.repeat(unseen, per_game)
        left = worlds.hands[rows, (seat + 1) % 3] & unseen
        right = worlds.hands[rows, (seat + 2) % 3] & unseen
        in_bin = np.stack([bits_to_bool(bits, NUM_CARDS) for bits in (left, right, unseen & ~(left | right))], axis=2)
        shares = in_bin.reshape(-1, per_game, NUM_CARDS, BINS).sum(axis=1)
        log_u = np.log((shares + SMOOTHING) / (per_game + BINS * SMOOTHING))
        return np.where(in_bin, log_p - np.repeat(log_u, per_game, axis=0), 0.0).sum(axis=(1, 2))


SMOOTHING = 0.5
"""Added to each bin's count of candidates when their shares estimate the uniform marginals
(Jeffreys' prior): a card in a bin of few candidates is not weighted without bound."""
