"""The policy-value network: convolutional over the board's planes, so one architecture (and one
set of settings) serves every board from 3x3 to 15x15.

Input: two planes seen by the player to move, its own marks and the other's (the env's agent
view: 1 own, 2 the other's). A stem and ``blocks`` residual blocks of ``channels`` 3x3
convolutions keep the board's shape; the policy head is a 1x1 convolution to one logit per cell,
the value head a 1x1 convolution, a mean over the cells and a small linear layer to a tanh value
for the player to move. Nothing in it depends on the board's size.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import torch
from torch import nn

from gym_tictactoe.checks import check_int

MAX_CHANNELS, MAX_BLOCKS = 256, 20  # bounds a file's header may ask for


@dataclass(frozen=True)
class NetworkSettings:
    """The network's shape: its width and depth (the board's size is not part of it)."""

    channels: int = 32
    blocks: int = 2

    def __post_init__(self) -> None:
        check_int(self.channels, "channels", 1, MAX_CHANNELS)
        check_int(self.blocks, "blocks", 0, MAX_BLOCKS)

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


class _Block(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x + self.conv2(torch.relu(self.conv1(x))))


class PolicyValueNet(nn.Module):
    """Logits per cell and a value in [-1, 1] for the player to move, on any board shape."""

    def __init__(self, settings: NetworkSettings = NetworkSettings()) -> None:
        super().__init__()
        width = settings.channels
        self.settings = settings
        self.stem = nn.Conv2d(2, width, 3, padding=1)
        self.blocks = nn.Sequential(*[_Block(width) for _ in range(settings.blocks)])
        self.policy_head = nn.Conv2d(width, 1, 1)
        self.value_head = nn.Conv2d(width, width, 1)
        self.value_out = nn.Linear(width, 1)

    def forward(self, planes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``planes`` (N, 2, rows, cols) -> logits (N, rows * cols), values (N,)."""
        x = self.blocks(torch.relu(self.stem(planes)))
        logits = self.policy_head(x).flatten(1)
        pooled = torch.relu(self.value_head(x)).mean(dim=(2, 3))
        return logits, torch.tanh(self.value_out(pooled)).squeeze(1)


def planes_of(relative: npt.NDArray[np.int8], shape: tuple[int, int]) -> torch.Tensor:
    """The network's input for boards seen by the player to move ((N, cells): 1 own, 2 other)."""
    boards = np.asarray(relative).reshape(-1, *shape)
    stacked = np.stack([boards == 1, boards == 2], axis=1).astype(np.float32)
    return torch.from_numpy(stacked)


def device_of(net: nn.Module) -> torch.device:
    """Where ``net``'s weights are (``train.py --device``): its inputs go there too."""
    return next(net.parameters()).device


def masked_priors(logits: torch.Tensor, legal: npt.NDArray[np.bool_]) -> npt.NDArray[np.float32]:
    """Softmax of ``logits`` over the ``legal`` cells of each row (0 elsewhere), on the CPU."""
    masked = logits.masked_fill(torch.from_numpy(~legal).to(logits.device), float("-inf"))
    # A row with no legal cell (a finished board) would be all NaN: give it zeros instead.
    return torch.nan_to_num(torch.softmax(masked, dim=1), nan=0.0).cpu().numpy()


def activation_bytes(cells: int, settings: NetworkSettings, training: bool) -> int:
    """About the most bytes one board's activations take at once in the network: a few layers'
    outputs when inferring (each freed once the next is computed), every layer's output, kept
    for the backward pass, and their gradients when training."""
    layers = 4 * settings.blocks + 4 if training else 6
    return 4 * cells * settings.channels * layers


@torch.no_grad()
def infer(net: PolicyValueNet, relative: npt.NDArray[np.int8], shape: tuple[int, int]
          ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """Priors over the empty cells and values of a batch of boards, in one network call."""
    relative = np.asarray(relative)
    if len(relative) == 0:
        return np.zeros((0, relative.shape[1]), np.float32), np.zeros(0, np.float32)
    was_training = net.training
    net.eval()
    logits, values = net(planes_of(relative, shape).to(device_of(net)))
    net.train(was_training)
    return masked_priors(logits, relative == 0), values.cpu().numpy()


def state_arrays(net: PolicyValueNet) -> dict[str, npt.NDArray[np.float32]]:
    """The weights as plain float32 arrays, by parameter name."""
    return {name: t.detach().cpu().numpy().astype(np.float32)
            for name, t in net.state_dict().items()}


def expected_shapes(settings: NetworkSettings) -> dict[str, tuple[int, ...]]:
    """Every weight's shape for ``settings``, from a network built on the meta device (no
    memory): what a file's arrays are checked against before any is read."""
    with torch.device("meta"):
        net = PolicyValueNet(settings)
    return {name: tuple(t.shape) for name, t in net.state_dict().items()}


def build(settings: NetworkSettings, weights: dict[str, Any] | None = None) -> PolicyValueNet:
    """A network of ``settings``, with ``weights`` (checked by the caller) when given."""
    net = PolicyValueNet(settings)
    if weights is not None:
        net.load_state_dict({k: torch.from_numpy(np.asarray(v)) for k, v in weights.items()})
    return net
