"""`MarketParallelEnv`: several learner seats in one market, as a PettingZoo Parallel env."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from tradearena.envs.errors import did_you_mean
from tradearena.envs.seats import SeatedMarket, in_space
from tradearena.envs.simulator.market import Market
from tradearena.envs.spec import MarketSpec, observation_kinds

__all__ = ["MarketParallelEnv", "opposing_seats", "seat_index", "seat_names"]


def seat_names(n_seats: int) -> list[str]:
    """The agents' names of ``n_seats`` seats: seat_0 .. seat_{n-1}."""
    if n_seats < 1:
        raise ValueError(f"n_seats must be >= 1, got {n_seats}")
    return [f"seat_{i}" for i in range(n_seats)]


def opposing_seats(opposes: dict[str, str] | None, seats: Sequence[str]) -> dict[int, int]:
    """``opposes`` by seat name ({adversary: protagonist}) as seat indices."""
    return {
        seat_index(a, seats, "opposes"): seat_index(b, seats, "opposes")
        for a, b in (opposes or {}).items()
    }


def seat_index(name: str, seats: Sequence[str], role: str) -> int:
    """The seat named ``name``; ValueError saying which ``role`` named an unknown seat."""
    if name not in seats:
        hint = did_you_mean(name, seats)
        raise ValueError(f"{role} names unknown seat {name!r}{hint}; seats are {list(seats)}")
    return list(seats).index(name)


class MarketParallelEnv(ParallelEnv):
    """Learner seats ``seat_0 .. seat_{n-1}`` trading in one market (PettingZoo Parallel API).

    Every seat observes and acts as in `envs.trading_env.TradingEnv` (same observation and
    action spaces, same reward: change of marked-to-market value in dollars times
    ``reward_scale``; ``observation`` may name one kind per seat); their orders are executed
    in a random order each step. Adversaries:

    - ``opposes={"seat_1": "seat_0"}``: seat_1 is an adversarial trader, rewarded with minus
      seat_0's reward;
    - ``takeover=("seat_0", p)``: an extra agent ``adversary`` whose action replaces seat_0's
      with probability p each step; its reward is minus seat_0's and ``infos["seat_0"]
      ["taken_over"]`` says when it acted.

    ``MarketParallelEnv()`` is a synthetic market with two learner seats. ``market_spec``
    (a `envs.spec.MarketSpec`) and its fields as keywords define the market, as for
    `TradingEnv`; ``observation`` is one kind for every seat or a sequence, one per seat (the
    adversary observes the taken-over seat's kind).
    """

    metadata = {"name": "tradearena_market_v0", "render_modes": [], "render_fps": 1}

    def __init__(
        self,
        n_seats: int = 2,
        *,
        market_spec: MarketSpec | None = None,
        observation: str | Sequence[str] = "features",
        opposes: dict[str, str] | None = None,
        takeover: tuple[str, float] | None = None,
        **market: Any,
    ) -> None:
        seats = seat_names(n_seats)

        opposes = opposing_seats(opposes, seats)
        if takeover is not None:
            takeover_seat = (seat_index(takeover[0], seats, "takeover"), takeover[1])
        else:
            takeover_seat = None
        spec = MarketSpec.from_keywords("MarketParallelEnv", market_spec, **market)
        kinds = observation_kinds(observation, n_seats)
        self.core = SeatedMarket(
            spec,
            kinds,
            opposes=opposes,
            takeover=takeover_seat,
            adversary=None if takeover_seat is None else kinds[takeover_seat[0]],
        )
        self.possible_agents = seats + (["adversary"] if takeover is not None else [])
        self.agents: list[str] = []
        self._np_random: np.random.Generator | None = None

    @property
    def market(self) -> Market:
        """The underlying `envs.simulator.market.Market`."""
        return self.core.market

    @functools.cache  # noqa: B019 - one space object per agent, as PettingZoo asks
    def observation_space(self, agent: str) -> spaces.Space:
        seat = self.core.takeover[0] if agent == "adversary" else int(agent.split("_")[1])
        return self.core.observation_spaces[seat]

    @functools.cache  # noqa: B019
    def action_space(self, agent: str) -> spaces.Space:
        return self.core.action_space

    def reset(
        self, seed: int | None = None, options: dict | None = None
    ) -> tuple[dict[str, Any], dict[str, dict]]:
        if seed is not None or self._np_random is None:
            self._np_random = np.random.default_rng(seed)
        observations = self.core.reset(int(self._np_random.integers(2**63 - 1)))
        self.agents = list(self.possible_agents)
        return self._observe(observations), self._infos()

    def step(self, actions: dict[str, int]) -> tuple[dict, dict, dict, dict, dict]:
        if not self.agents:
            raise RuntimeError("the session is over: call reset()")
        missing = [a for a in self.agents if a not in actions]
        if missing:
            raise ValueError(f"no action for agents {missing}")
        space = self.core.action_space
        bad = {a: actions[a] for a in self.agents if not in_space(space, actions[a])}
        if bad:
            raise ValueError(f"actions {bad} are not in {space}")
        seats = [int(actions[f"seat_{i}"]) for i in range(self.core.n_seats)]
        adversary = actions.get("adversary")
        observations, rewards, done = self.core.step(
            seats, None if adversary is None else int(adversary)
        )
        reward = {f"seat_{i}": float(r) for i, r in enumerate(rewards)}
        if "adversary" in self.agents:
            reward["adversary"] = -reward[f"seat_{self.core.takeover[0]}"]
        obs, infos = self._observe(observations), self._infos()
        terminations = dict.fromkeys(self.agents, done)
        truncations = dict.fromkeys(self.agents, False)
        if done:
            self.agents = []
        return obs, reward, terminations, truncations, infos

    def _observe(self, observations: list) -> dict[str, Any]:
        obs = {f"seat_{i}": o for i, o in enumerate(observations)}
        if "adversary" in self.possible_agents:
            obs["adversary"] = observations[self.core.takeover[0]]
        return obs

    def _infos(self) -> dict[str, dict]:
        infos = {f"seat_{i}": self.core.info(i) for i in range(self.core.n_seats)}
        if "adversary" in self.possible_agents:
            infos["adversary"] = {"taken_over": self.core.taken_over}
        return infos
