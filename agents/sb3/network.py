"""The network an SB3 model file describes, checked against the file before anything is built.

A model file's settings (the algorithm, the board, ``policy_kwargs``) fix the shape of every
tensor of its policy. :func:`network` computes those shapes with integer arithmetic alone and
refuses settings whose network would exceed ``MAX_PARAMETERS``; :func:`read_weights` reads the
tensors' headers first (``torch.load`` onto the meta device: no data), compares them with the
shapes, and only then loads the data, so loading costs the size of the weights; and
:func:`build_policy` builds the policy alone (no replay or rollout buffer, no env), which is all
that playing needs.
"""

from __future__ import annotations

import io
import math
import pickle
import re
import struct
import warnings
import zipfile
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import torch as th
from gymnasium import spaces
from stable_baselines3.common.policies import BasePolicy
from stable_baselines3.common.utils import FloatSchedule

from agents.archives import ZIP_ERRORS, one_line
from agents.sb3.policy import ALGO_CLASSES, observation_space

MAX_PARAMETERS = 2**22  # 16 MB of float32; our networks have 25-60 thousand
MAX_LAYERS = 16
DEFAULT_NET_ARCH = [64, 64]  # SB3's, for files without net_arch
# policy_kwargs that leave the shapes as net_arch makes them; any other is refused.
NEUTRAL_KWARGS = ("ortho_init", "share_features_extractor", "normalize_images")
TENSOR_OVERHEAD = 1024  # a tensor's record in torch's zip: header, name, 64-byte alignment
PICKLE_BYTES = 64 * 1024  # torch's data.pkl: a few hundred bytes per tensor
_TORCH_RECORD = re.compile(r"[^/]+/(data\.pkl|version|\.format_version|\.storage_alignment|"
                           r"byteorder|\.data/serialization_id|data/\d+)")


@dataclass(frozen=True)
class Network:
    """The policy of one algorithm on a board of ``n_cells``: how to build it, its tensors."""

    algo: str
    n_cells: int
    net_arch: list[int] | dict[str, list[int]]
    shapes: dict[str, tuple[int, ...]]  # the policy's state dict

    @property
    def n_parameters(self) -> int:
        return sum(math.prod(shape) for shape in self.shapes.values())

    @property
    def weight_bytes(self) -> int:
        """The float32 weights; ``max_file_bytes`` adds what torch's zip adds around them."""
        return 4 * self.n_parameters

    def max_file_bytes(self, copies: int = 1) -> int:
        """The most a torch file of ``copies`` of the weights (Adam keeps two) can take."""
        return copies * (self.weight_bytes + TENSOR_OVERHEAD * len(self.shapes)) + PICKLE_BYTES


def network(algo: str, n_cells: int, policy_kwargs: Any) -> Network:
    """The network ``policy_kwargs`` describe, from arithmetic alone; ValueError(problem)."""
    if policy_kwargs is None:
        policy_kwargs = {}
    if not isinstance(policy_kwargs, dict):
        raise ValueError(f"policy_kwargs must be a JSON object, found {policy_kwargs!r}")
    other = sorted(set(policy_kwargs) - {"net_arch", *NEUTRAL_KWARGS})
    if other or not all(isinstance(policy_kwargs[key], bool)
                        for key in NEUTRAL_KWARGS if key in policy_kwargs):
        raise ValueError(f"policy_kwargs may hold net_arch and the booleans {NEUTRAL_KWARGS}, "
                         f"found {sorted(policy_kwargs)}")
    arch = policy_kwargs.get("net_arch")
    inputs = 3 * n_cells  # one plane per cell state, as SB3 encodes MultiDiscrete and we Box
    if algo == "dqn":
        layers = _layers(DEFAULT_NET_ARCH if arch is None else arch, "net_arch")
        q_net = _mlp("q_net.q_net", [inputs, *layers, n_cells])
        shapes = {**q_net, **{key.replace("q_net.", "q_net_target.", 1): shape
                              for key, shape in q_net.items()}}
        built: list[int] | dict[str, list[int]] = layers
    else:
        pi, vf = _actor_critic_layers(arch)
        shapes = {**_mlp("mlp_extractor.policy_net", [inputs, *pi]),
                  **_mlp("mlp_extractor.value_net", [inputs, *vf]),
                  **_linear("action_net", (pi or [inputs])[-1], n_cells),
                  **_linear("value_net", (vf or [inputs])[-1], 1)}
        built = {"pi": pi, "vf": vf}
    found = Network(algo, n_cells, built, shapes)
    if found.n_parameters > MAX_PARAMETERS:
        raise ValueError(f"net_arch {arch!r} makes a network of {found.n_parameters:,} "
                         f"parameters, more than the {MAX_PARAMETERS:,} allowed")
    return found


def _actor_critic_layers(arch: Any) -> tuple[list[int], list[int]]:
    if arch is None:
        return list(DEFAULT_NET_ARCH), list(DEFAULT_NET_ARCH)
    if isinstance(arch, list):  # SB3: the same layers for the actor and the critic
        return _layers(arch, "net_arch"), _layers(arch, "net_arch")
    if not (isinstance(arch, dict) and set(arch) <= {"pi", "vf"}):
        raise ValueError(f"net_arch must be a list of layer sizes or {{'pi': [...], 'vf': "
                         f"[...]}}, found {arch!r}")
    return _layers(arch.get("pi", []), "pi"), _layers(arch.get("vf", []), "vf")


def _layers(sizes: Any, name: str) -> list[int]:
    if not (isinstance(sizes, list) and len(sizes) <= MAX_LAYERS and all(
            isinstance(size, int) and not isinstance(size, bool) and size >= 1
            for size in sizes)):
        raise ValueError(f"{name} must be a list of at most {MAX_LAYERS} positive layer sizes, "
                         f"found {sizes!r}")
    return list(sizes)


def _mlp(prefix: str, sizes: list[int]) -> dict[str, tuple[int, ...]]:
    # SB3's MLPs are nn.Sequential(Linear, activation, Linear, ...): Linear i sits at 2 * i.
    shapes: dict[str, tuple[int, ...]] = {}
    for i, (inputs, outputs) in enumerate(pairwise(sizes)):
        shapes.update(_linear(f"{prefix}.{2 * i}", inputs, outputs))
    return shapes


def _linear(prefix: str, inputs: int, outputs: int) -> dict[str, tuple[int, ...]]:
    return {f"{prefix}.weight": (outputs, inputs), f"{prefix}.bias": (outputs,)}


def read_weights(raw: bytes, net: Network) -> dict[str, th.Tensor]:
    """The policy's tensors from torch's file ``raw``, after checking its records and every
    tensor's header (dtype, shape, storage) against ``net``; ValueError(problem)."""
    _check_records(raw, net)
    headers = _torch_load(raw, "meta")  # shapes and storages only: no data is read
    if not isinstance(headers, dict) or not all(isinstance(value, th.Tensor)
                                                for value in headers.values()):
        raise ValueError("the weights are not a dict of tensors")
    if {key: tuple(value.shape) for key, value in headers.items()} != net.shapes:
        raise ValueError(f"the weights' tensors {_summary(headers)} are not those of the "
                         f"network the settings describe {net.shapes}")
    for key, tensor in headers.items():
        if (tensor.dtype != th.float32 or tensor.storage_offset() != 0
                or not tensor.is_contiguous()
                or tensor.untyped_storage().nbytes() != 4 * tensor.numel()):
            raise ValueError(f"tensor {key!r} is not a plain float32 tensor of its own")
    weights = _torch_load(raw, "cpu")
    bad = [key for key, tensor in weights.items() if not th.isfinite(tensor).all()]
    if bad:
        raise ValueError(f"tensors {bad[:5]} hold non-finite values")
    return weights


def _check_records(raw: bytes, net: Network) -> None:
    """torch's zip holds its few small records and exactly the weights' bytes, uncompressed."""
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as inner:
            infos = inner.infolist()
    except (*ZIP_ERRORS, ValueError) as error:
        raise ValueError(f"the weights are not torch's zip ({one_line(error)})") from None
    data: list[zipfile.ZipInfo]
    small: list[zipfile.ZipInfo]
    data, small = [], []
    for info in infos:
        (data if re.fullmatch(r"[^/]+/data/\d+", info.filename) else small).append(info)
    if not (all(_TORCH_RECORD.fullmatch(info.filename) for info in infos)
            and all(info.compress_type == zipfile.ZIP_STORED for info in infos)
            and all(info.file_size <= PICKLE_BYTES for info in small)
            and len(data) == len(net.shapes)
            and sum(info.file_size for info in data) == net.weight_bytes):
        raise ValueError(f"the weights' records ({len(infos)}) are not the {len(net.shapes)} "
                         f"float32 tensors ({net.weight_bytes:,} bytes) the settings describe")


def _torch_load(raw: bytes, device: str) -> Any:
    try:
        # A damaged pickle makes torch warn (its protocol, storage types): the file is refused
        # or loaded whole all the same, with our own words.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return th.load(io.BytesIO(raw), map_location=device, weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, EOFError, ValueError, KeyError, IndexError,
            TypeError, AttributeError, AssertionError, struct.error, OverflowError,
            NotImplementedError, zipfile.BadZipFile, UnicodeDecodeError) as error:
        # torch's own message would advise unsafe loading (weights_only=False): not here.
        raise ValueError(f"torch's safe loader refuses the weights ({type(error).__name__})"
                         ) from None


def _summary(tensors: dict[str, th.Tensor]) -> str:
    text = str({key: tuple(value.shape) for key, value in list(tensors.items())[:20]})
    return text if len(tensors) <= 20 else f"{text[:-1]}, ... ({len(tensors)} in all)}}"


class NoOptimizer:
    """The optimiser of a policy built to play, which never learns: building torch's Adam
    imports its compiler on first use, costing more than the rest of loading (docs/agents.md)."""

    def __init__(self, params: Any, **kwargs: Any) -> None:
        self.param_groups: list[dict[str, Any]] = []


def build_policy(net: Network, weights: dict[str, th.Tensor]) -> BasePolicy:
    """The algorithm's policy alone, holding ``weights`` (checked by :func:`read_weights`),
    in evaluation mode: what playing needs, without the algorithm's buffers, an env or an
    optimiser (``NoOptimizer``)."""
    cls = ALGO_CLASSES[net.algo].policy_aliases["MlpPolicy"]
    policy = cls(observation_space(net.algo, net.n_cells), spaces.Discrete(net.n_cells),
                 FloatSchedule(0.0), net_arch=net.net_arch, optimizer_class=NoOptimizer)
    policy.load_state_dict(weights, strict=True)
    policy.set_training_mode(False)
    return policy
