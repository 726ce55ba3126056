"""`Agent`: the interface every tradearena agent implements (rule-based or learning).

The user side is as small as Axelrod's ``Player``: `Agent.act` and, for learners,
`Agent.update`; metadata are class attributes (``name``, ``stochastic``, ``description``).
State is exchanged as a dict of named numpy arrays and plain values (`Agent.state_dict`);
`Agent.save` writes it, with what rebuilds the agent, to a directory that `agents.load` reads.

The learner's contract (docs/learner.md has it with an example):

- It is built with keywords only: its own parameters and, of `STANDARD_KEYWORDS`, those its
  constructor names; its sizes come from ``observation_space`` (``Discrete(n)`` states for
  ``observation = "tabular"``, a ``Box`` of features for ``"features"``) and
  ``action_space`` (``Discrete(n)``), not from keywords of its own.
- It sets ``learning = True``: the batched markets (several sessions) call `Agent.update_batch`,
  which calls `Agent.update` for learners only; without it, it would train with one session and
  silently not at all with several.
- `Agent.update` learns from one transition (reward in the market's units); `Agent.update_batch`
  from N at once, by default `update` on each in order. A tabular learner that declares
  ``batched_update`` does them in one call (``apply_batch``), so a subclass that changes
  `update` (or a tabular learner's TD rule, ``learn``) declares it False.

``tradearena agents --check`` (`agents.check_agent`) holds an agent to it.
"""

from __future__ import annotations

import copy
import inspect
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

__all__ = [
    "MAX_ARRAY_BYTES",
    "STANDARD_KEYWORDS",
    "Agent",
    "check_keys",
    "check_memory",
    "make_rng",
]

STANDARD_KEYWORDS = frozenset(
    {"observation_space", "action_space", "seed", "market_spec", "total_timesteps"}
)
"""Keywords every caller of `agents.make` may pass; an agent gets those it `Agent.takes`
(``market_spec``: the seat's `envs.spec.MarketSpec`, for policies that need its rules;
``total_timesteps``: the environment steps the caller plans to train it for, for learners
whose schedules are sized to the run)."""


MAX_ARRAY_BYTES = 16 * 2**30
"""The most memory one of an agent's arrays (a table ensemble, a replay memory, a layer's
weights) may take, bytes: 16 GiB, hundreds of times what the shipped agents hold. Every job
builds its agents anew (and a config's check builds each once), so a larger one would exhaust
a worker's memory or fail to allocate."""


def check_memory(parameter: str, value: object, n_bytes: int, what: str) -> None:
    """ValueError naming ``parameter`` (given ``value``) when ``what``, sized by it, would take
    ``n_bytes`` bytes, more than `MAX_ARRAY_BYTES`; checked before allocating."""
    if n_bytes > MAX_ARRAY_BYTES:
        raise ValueError(
            f"{parameter} = {value!r}: {what} would take {n_bytes / 2**30:,.1f} GiB, more than "
            f"the {MAX_ARRAY_BYTES // 2**30} GiB one array of an agent may"
        )


def make_rng(seed: int | np.random.SeedSequence | None) -> np.random.Generator:
    """A PCG64 `Generator` from ``seed`` (non-negative int, `SeedSequence` or None)."""
    if isinstance(seed, bool) or not (
        seed is None or isinstance(seed, np.random.SeedSequence | int | np.integer)
    ):
        raise ValueError(f"seed must be a non-negative int, a SeedSequence or None, got {seed!r}")
    if isinstance(seed, int | np.integer) and seed < 0:
        raise ValueError(f"seed must be non-negative, got {seed}")
    return np.random.default_rng(seed)


def check_keys(given: Iterable[str], expected: Iterable[str], what: str = "state_dict") -> None:
    """Raise ValueError naming the unknown and missing keys of ``given`` against ``expected``."""
    given, expected = set(given), set(expected)
    unknown, missing = sorted(given - expected), sorted(expected - given)
    if unknown or missing:
        raise ValueError(
            f"{what}: unknown keys {unknown}, missing keys {missing}; expected {sorted(expected)}"
        )


def _standard_keywords(cls: type) -> frozenset[str]:
    """The `STANDARD_KEYWORDS` named in the signature of ``cls(...)``; a constructor that takes
    ``**params`` forwards them to its base, so it also takes those its bases take."""
    parameters = inspect.signature(cls).parameters.values()
    named = {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        named = named.union(*(getattr(base, "takes", ()) for base in cls.__bases__))
    return frozenset(named) & STANDARD_KEYWORDS


def _get(obj: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


class Agent(ABC):
    """An agent acting on one seat: ``act(obs) -> action`` and, if it learns, ``update``.

    Subclasses set the class attributes below and list in ``_state`` the attribute names that
    make up their learnable / mutable state (dotted for parts: ``"tables.q"``); `state_dict`
    copies those attributes (arrays copied) plus the bit-generator state of ``self.rng`` if the
    agent owns one, so a round trip through `load_state_dict` continues identically (same
    actions, same training).
    """

    name: ClassVar[str] = "agent"
    """Registry id."""
    stochastic: ClassVar[bool] = False
    """Whether `act` draws random numbers (with ``explore=False`` included)."""
    learning: ClassVar[bool] = False
    """Whether `update` changes the agent (`update_batch` skips agents that do not learn)."""
    description: ClassVar[str] = ""
    """One line for `agents.describe()`."""
    task: ClassVar[str] = "taker"
    """The task (`envs.tasks.TASKS`) it is made for: where ``tradearena agents --check`` seats
    it (a reference policy's own task; the taker task by default)."""
    trains_adversary: ClassVar[bool] = False
    """Whether it trains an adversary of its own (RA3-Q): `adversary_policy` gives it as a
    policy, `trader_adversary` as a seat to train against."""
    observation: ClassVar[str] = "features"
    """The observation it reads from the market: "features" (the Box of `envs.simulator.features`)
    or
    "tabular" (one Discrete state)."""
    takes: ClassVar[frozenset[str]] = frozenset()
    """The `STANDARD_KEYWORDS` its constructor accepts: `agents.make` passes it those only.
    By default, computed once per class: those the signature of ``cls(...)`` names, plus, if
    it takes ``**params`` (forwarded to the base), those its bases take. Set it in the class
    body where the signature does not tell (``**params`` forwarded elsewhere than to the base;
    a dataclass, whose ``__init__`` is made after the class)."""
    _state: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "takes" not in cls.__dict__:
            cls.takes = _standard_keywords(cls)

    @abstractmethod
    def act(self, obs: Any, explore: bool = True) -> int:
        """The action at observation ``obs``; ``explore=False`` asks for the greedy policy."""

    def update(  # noqa: B027 (a deliberate no-op default for rule-based agents)
        self,
        obs: Any,
        action: int,
        reward: float,
        next_obs: Any,
        terminated: bool,
        truncated: bool,
    ) -> None:
        """Learn from one transition (reward in environment units). No-op by default."""

    def act_batch(self, obs: Sequence[Any], explore: bool = True) -> np.ndarray:
        """The actions at observations ``obs`` (one per session of a batched market, shape
        (N, ...)), int64 (N,): `act` on each in order, unless a subclass does it at once. The
        actions are returned as chosen (not cast), so that the market can refuse one that is
        not in its action space."""
        actions = [self.act(o, explore) for o in obs]
        return np.array(actions) if actions else np.zeros(0, dtype=np.int64)

    def update_batch(
        self,
        obs: Sequence[Any],
        actions: np.ndarray,
        rewards: np.ndarray,
        next_obs: Sequence[Any],
        terminated: np.ndarray,
        truncated: np.ndarray,
    ) -> None:
        """Learn from N transitions (arrays of length N), in order: `update` on each (none when
        the agent does not declare `learning`), unless a subclass does it at once with the same
        result."""
        if not self.learning:
            return
        columns = (actions.tolist(), rewards.tolist(), terminated.tolist(), truncated.tolist())
        for o, (a, r, term, trunc), o2 in zip(obs, zip(*columns), next_obs):
            self.update(o, a, r, o2, term, trunc)

    def adversary_policy(self, seed: int | None = None) -> Agent:
        """The adversary it trains, as an agent of its own (a take-over policy or a seat; its
        draws seeded by ``seed``); only where `trains_adversary`, else TypeError."""
        raise TypeError(f"{type(self).__name__} trains no adversary")

    def trader_adversary(self, seed: int | None = None) -> Agent | None:
        """The adversary to seat opposite it in training, learning as it trades (its draws
        seeded by ``seed``), or None: it trains alone (the default)."""
        return None

    def end_episode(self) -> None:  # noqa: B027 (deliberate no-op default)
        """Called after the last transition of an episode. No-op by default."""

    def state_dict(self) -> dict[str, Any]:
        """Named numpy arrays and plain values; ``"rng"`` holds the bit-generator state."""
        state = {key: copy.deepcopy(_get(self, key)) for key in self._state}
        rng = getattr(self, "rng", None)
        if isinstance(rng, np.random.Generator):
            state["rng"] = copy.deepcopy(rng.bit_generator.state)
        return state

    def save(
        self, path: str | Path, *, buffer: bool = True, notes: Mapping[str, Any] | None = None
    ) -> Path:
        """Write this agent to the directory ``path`` (see `agents.saving.save`; it must have
        been built by `agents.make` or `agents.load`); `agents.load` reads it back. The saving
        code (and the market it records) is imported here, so that the contract stays light."""
        from tradearena.agents.saving import save

        return save(self, path, buffer=buffer, notes=notes)

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore a `state_dict`; ValueError naming unknown or missing keys or bad shapes."""
        check_keys(state, self.state_dict())
        for key in self._state:
            current, value = _get(self, key), state[key]
            if isinstance(current, np.ndarray):
                value = np.asarray(value)
                if value.shape != current.shape:
                    raise ValueError(
                        f"state_dict[{key!r}] has shape {value.shape}, expected {current.shape}"
                    )
                value = value.astype(current.dtype, copy=True)
            owner, _, attr = key.rpartition(".")
            setattr(_get(self, owner) if owner else self, attr, copy.deepcopy(value))
        if "rng" in state:
            self.rng.bit_generator.state = copy.deepcopy(state["rng"])
