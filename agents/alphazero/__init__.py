"""An AlphaZero-style agent for every board: a convolutional policy-value network
(``network``), PUCT search over a batch of trees at once (``search``), batched self-play with
Dirichlet noise, a temperature schedule and exploring starts (``self_play``), a replay buffer
drawn under the board's symmetries (``replay``), training (``training``), the trained network as
a policy, raw or with search (``policy``), and its pickle-free files (``files``).

``train.py --algo alphazero`` runs it; ``agents.models.load_policy`` loads its files. Importing
this package needs torch.
"""

from agents.alphazero.files import load, save
from agents.alphazero.network import NetworkSettings, PolicyValueNet
from agents.alphazero.policy import AlphaZeroPolicy
from agents.alphazero.self_play import PlaySettings
from agents.alphazero.training import AlphaZeroSettings, Trainer

__all__ = ["AlphaZeroPolicy", "AlphaZeroSettings", "NetworkSettings", "PlaySettings",
           "PolicyValueNet", "Trainer", "load", "save"]
