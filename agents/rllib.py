"""`RLlibPolicy`: a policy trained by RLlib's PPO, acting as a tradearena agent.

`from_rllib` copies the actor of an RLlib module (its encoder's MLP and the ``pi`` head, the
default PPO module for a features seat) into an `RLlibPolicy`, which runs the same forward
pass in numpy: it saves with `Agent.save`, loads with `agents.load` without Ray or torch, and
takes a seat in any experiment (e.g. a tournament's frozen strategy, ``id =
"rllib_policy"``, ``from = PATH``, ``train = false``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from tradearena.agents.base import Agent, make_rng
from tradearena.agents.registry import make
from tradearena.envs.errors import UserError
from tradearena.envs.spec import MarketSpec

__all__ = ["ACTIVATIONS", "RLlibPolicy", "from_rllib"]

ACTIVATIONS = {"tanh": np.tanh, "relu": lambda x: np.maximum(x, 0.0), "linear": lambda x: x}
"""RLlib's ``fcnet_activation`` names this forward pass computes."""


class RLlibPolicy(Agent):
    """An MLP policy: features (F,) -> ``hidden`` layers with ``activation`` -> logits over
    the actions. ``explore=False`` takes the argmax (RLlib's greedy action); ``explore=True``
    draws from the softmax with the agent's generator. Does not learn. Built untrained (all
    weights zero: uniform over the actions); `from_rllib` gives one its trained weights.
    Spaces default to those of the default market's features seat."""

    name = "rllib_policy"
    stochastic = True  # explore=True samples its softmax
    description = "A policy trained by RLlib (PPO's actor network), frozen"
    _state: ClassVar[tuple[str, ...]] = ("parameters",)

    def __init__(
        self,
        hidden: Sequence[int] = (256, 256),
        activation: str = "tanh",
        observation_space: spaces.Box | None = None,
        action_space: spaces.Discrete | None = None,
        seed: int | None = None,
    ) -> None:
        if activation not in ACTIVATIONS:
            raise UserError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
        default = MarketSpec()
        observation_space = observation_space or default.observation_space("features")
        action_space = action_space or default.action_space
        if not isinstance(observation_space, spaces.Box):
            raise UserError("rllib_policy reads features (a Box observation space)")
        self.sizes = [int(np.prod(observation_space.shape)), *map(int, hidden), int(action_space.n)]
        self.activation = activation
        self.parameters = np.zeros(
            sum(n_in * n_out + n_out for n_in, n_out in self.layer_shapes()), dtype=np.float32
        )
        self.rng = make_rng(seed)

    def layer_shapes(self) -> list[tuple[int, int]]:
        """(inputs, outputs) of each linear layer, first to last."""
        return list(zip(self.sizes[:-1], self.sizes[1:]))

    def layers(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Each layer's (weight (outputs, inputs), bias (outputs,)): views of ``parameters``."""
        out, start = [], 0
        for n_in, n_out in self.layer_shapes():
            weight = self.parameters[start : start + n_in * n_out].reshape(n_out, n_in)
            start += n_in * n_out
            out.append((weight, self.parameters[start : start + n_out]))
            start += n_out
        return out

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """The action logits at observations ``obs``, (N, F) -> (N, actions) (or (F,) ->
        (actions,))."""
        x = np.asarray(obs, dtype=np.float32)
        layers = self.layers()
        for i, (weight, bias) in enumerate(layers):
            x = x @ weight.T + bias
            if i < len(layers) - 1:
                x = ACTIVATIONS[self.activation](x)
        return x

    def act(self, obs: Any, explore: bool = True) -> int:
        return int(self.act_batch(np.asarray(obs)[None], explore)[0])

    def act_batch(self, obs: Sequence[Any], explore: bool = True) -> np.ndarray:
        logits = self.logits(np.asarray(obs))
        if not explore:
            return logits.argmax(axis=1).astype(np.int64)
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        cumulative = np.cumsum(p / p.sum(axis=1, keepdims=True), axis=1)
        draws = self.rng.random((len(logits), 1))
        return np.minimum((cumulative < draws).sum(axis=1), logits.shape[1] - 1).astype(np.int64)


def from_rllib(module: Any, market_spec: MarketSpec, *, seed: int | None = None) -> RLlibPolicy:
    """An `RLlibPolicy` (built by `agents.make`, so it saves) with the actor weights of the
    RLlib module ``module`` (a PPO ``RLModule`` of a features seat of ``market_spec``, with
    RLlib's default encoder MLP and a ``pi`` head of one linear layer)."""
    config = module.model_config
    if config.get("head_fcnet_hiddens"):
        raise UserError("from_rllib reads a pi head of one linear layer (head_fcnet_hiddens=[])")
    state = module.get_state(inference_only=True)
    linear = [
        key
        for key in state
        if key.startswith(("encoder.", "pi.")) and key.endswith((".weight", ".bias"))
    ]
    observation_space = market_spec.observation_space("features")
    policy = make(
        "rllib_policy",
        hidden=list(config.get("fcnet_hiddens", [256, 256])),
        activation=config.get("fcnet_activation", "tanh"),
        observation_space=observation_space,
        action_space=market_spec.action_space,
        seed=seed,
        market_spec=market_spec,
    )
    parameters = [np.asarray(state[key], dtype=np.float32).ravel() for key in linear]
    flat = np.concatenate(parameters)
    if flat.shape != policy.parameters.shape:
        raise UserError(
            f"the module's actor has {flat.size} parameters, an MLP of sizes {policy.sizes} "
            f"has {policy.parameters.size}"
        )
    policy.parameters = flat
    return policy
