"""DQN (Mnih et al. 2015) on a torso of `agents.deep.encoders`, shaped like SB3's ``dqn.py``.

The loop, one call each: `DQN.act` (epsilon-greedy), `DQN.update` (store the transition;
every ``train_freq`` steps after ``learning_starts``, ``gradient_steps`` minibatch updates;
every ``target_update_interval`` steps, sync the target). One TD update on a minibatch::

    y    = r / sd_r + gamma * (1 - terminated) * Q_target(s', a*)
           a* = argmax_a' Q_target(s', a')    (DQN)  or  argmax_a' Q(s', a')  (``double``)
    loss = mean Huber(Q(s, a) - y)                        (delta 1, SB3's smooth_l1_loss)
    theta <- Adam(theta, grad loss clipped to norm max_grad_norm)

with ``sd_r`` the running standard deviation of the stored rewards (``normalize_rewards``,
else 1) and the network's input the observation standardised by running moments
(``normalize_observations``; `agents.deep.normalization`). ``dueling`` splits the head into a
state value and action advantages (Wang et al. 2016), ``double`` is van Hasselt et al.'s
Double DQN (2016).

`DQN` is also the base of the other deep learners: the Q-network has ``n_heads`` heads
(output (B, k, A)), the greedy policy maximises `risk_values` over the heads, and subclasses
change `_bootstrap` (the max_a' term), `_regression_target` (what Q(s, a) is regressed on) and
`_sync_target`; `_target_q` gives the target's Q-values, which `_bootstrap` reduces.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from tradearena.agents.deep.buffers import ReplayBuffer, ReplaySamples
from tradearena.agents.deep.configured import ConfiguredAgent
from tradearena.agents.deep.encoders import make_torso
from tradearena.agents.deep.normalization import InputNormalizer, RunningMoments
from tradearena.agents.deep.risk import risk_values
from tradearena.agents.schedules import linear_schedule
from tradearena.envs.simulator.features import feature_space

__all__ = [
    "DQN",
    "DQNSettings",
    "QNetwork",
    "load_module_state",
    "module_state",
    "resolve_device",
]


class QNetwork(nn.Module):
    """[normalizer +] torso + Linear(out_features, n_heads * n_actions): (B, *obs_shape) ->
    (B, n_heads, A). ``dueling``: a second Linear(out_features, n_heads) gives each head's
    state value V and ``head`` the advantages, Q = V + A - mean_a A (Wang et al. 2016)."""

    def __init__(
        self,
        torso: nn.Module,
        n_actions: int,
        n_heads: int = 1,
        *,
        dueling: bool = False,
        normalizer: InputNormalizer | None = None,
    ) -> None:
        super().__init__()
        self.normalizer = normalizer
        self.torso = torso
        self.head = nn.Linear(torso.out_features, n_heads * n_actions)
        self.value = nn.Linear(torso.out_features, n_heads) if dueling else None
        self.n_heads, self.n_actions = n_heads, n_actions

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.normalizer is not None:
            x = self.normalizer(x)
        h = self.torso(x)
        q = self.head(h).view(-1, self.n_heads, self.n_actions)
        if self.value is None:
            return q
        return self.value(h).unsqueeze(2) + q - q.mean(dim=2, keepdim=True)


def resolve_device(device: str | torch.device) -> torch.device:
    """``"auto"``: cuda if available, else cpu; anything else as `torch.device`."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def module_state(prefix: str, module: nn.Module) -> dict[str, np.ndarray]:
    """``{prefix + name: array}`` for the module's parameters and buffers (copies, on cpu)."""
    return {prefix + k: v.detach().cpu().numpy().copy() for k, v in module.state_dict().items()}


def load_module_state(module: nn.Module, state: Mapping[str, Any], prefix: str) -> None:
    """Load `module_state` arrays into ``module``; ValueError naming a key of the wrong shape."""
    tensors = {}
    for name, current in module.state_dict().items():
        value = torch.as_tensor(np.asarray(state[prefix + name]))
        if value.shape != current.shape:
            raise ValueError(
                f"state_dict[{prefix + name!r}] has shape {tuple(value.shape)}, "
                f"expected {tuple(current.shape)}"
            )
        tensors[name] = value
    module.load_state_dict(tensors)


def adam_state(optimizer: torch.optim.Adam, prefix: str = "optimizer.") -> dict[str, np.ndarray]:
    """Adam's moments flattened over all parameters (P,) and its step count per tensor (T,);
    empty arrays before the first step."""
    params = [p for group in optimizer.param_groups for p in group["params"]]
    states = [optimizer.state.get(p, {}) for p in params]
    if not all(states):
        empty = np.zeros(0, dtype=np.float32)
        return {prefix + k: empty.copy() for k in ("exp_avg", "exp_avg_sq", "step")}
    flat = {
        k: torch.cat([s[k].detach().reshape(-1).cpu() for s in states]).numpy()
        for k in ("exp_avg", "exp_avg_sq")
    }
    step = np.array([float(s["step"]) for s in states], dtype=np.float32)
    return {
        prefix + "exp_avg": flat["exp_avg"],
        prefix + "exp_avg_sq": flat["exp_avg_sq"],
        prefix + "step": step,
    }


def load_adam_state(
    optimizer: torch.optim.Adam, state: Mapping[str, Any], prefix: str = "optimizer."
) -> None:
    """Restore `adam_state` arrays; ValueError if their sizes do not fit the parameters."""
    params = [p for group in optimizer.param_groups for p in group["params"]]
    exp_avg, exp_avg_sq, step = (
        np.asarray(state[prefix + k], dtype=np.float32) for k in ("exp_avg", "exp_avg_sq", "step")
    )
    optimizer.state.clear()
    if step.size == 0:
        return
    total = sum(p.numel() for p in params)
    if exp_avg.shape != (total,) or exp_avg_sq.shape != (total,) or step.shape != (len(params),):
        raise ValueError(
            f"state_dict[{prefix!r}*]: Adam state of sizes {exp_avg.shape}, {exp_avg_sq.shape}, "
            f"{step.shape} does not fit {len(params)} tensors of {total} parameters"
        )
    offset = 0
    for p, n_steps in zip(params, step):
        n = p.numel()
        optimizer.state[p] = {
            "step": torch.tensor(float(n_steps), dtype=torch.float32),
            "exp_avg": torch.from_numpy(exp_avg[offset : offset + n].copy()).view_as(p).to(p),
            "exp_avg_sq": torch.from_numpy(exp_avg_sq[offset : offset + n].copy()).view_as(p).to(p),
        }
        offset += n


def _shapes(
    obs_shape: tuple[int, ...] | None,
    n_actions: int | None,
    observation_space: gym.Space | None,
    action_space: gym.Space | None,
) -> tuple[tuple[int, ...], int]:
    """(obs_shape, n_actions) from explicit sizes, spaces, or the default market features."""
    if obs_shape is None:
        space = observation_space if observation_space is not None else feature_space()
        if not isinstance(space, gym.spaces.Box):
            raise ValueError(f"observation_space must be a Box (features), got {space}")
        obs_shape = space.shape
    if n_actions is None:
        if action_space is None:
            n_actions = 3
        elif isinstance(action_space, gym.spaces.Discrete) and int(action_space.start) == 0:
            n_actions = int(action_space.n)
        else:
            raise ValueError(f"action_space must be Discrete(n) from 0, got {action_space}")
    obs_shape = tuple(int(n) for n in obs_shape)
    if not obs_shape or min(obs_shape) < 1 or int(n_actions) < 1:
        raise ValueError(
            f"need a non-empty obs_shape and n_actions >= 1, got {obs_shape}, {n_actions}"
        )
    return obs_shape, int(n_actions)


class _Rule(NamedTuple):
    """What a hyper-parameter must be: ``test(value)``, said as ``expected``; kept as ``cast``."""

    test: Callable[[Any], bool]
    expected: str
    cast: type

    def holds(self, value: Any) -> bool:
        try:
            return bool(self.test(value))
        except TypeError:  # not a number at all
            return False


def _is_count(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | np.integer) and value >= 1


_POSITIVE = _Rule(lambda v: np.isfinite(v) and v > 0, "a positive finite float", float)
_COUNT = _Rule(_is_count, "a positive int", int)
_NON_NEGATIVE = _Rule(lambda v: v >= 0, ">= 0", int)
_UNIT = _Rule(lambda v: 0.0 <= v <= 1.0, "in [0, 1]", float)
_TAU = _Rule(lambda v: 0.0 < v <= 1.0, "in (0, 1]", float)
_FLAG = _Rule(lambda v: isinstance(v, bool | np.bool_), "True or False", bool)


def _setting(default: Any, rule: _Rule | None = None) -> Any:
    return dataclasses.field(default=default, metadata={"rule": rule})


@dataclass(frozen=True)
class DQNSettings:
    """The hyper-parameters of `DQN` (its keywords but for shapes and seed), checked when
    built: ValueError naming the first that is out of range.

    Defaults follow SB3's ``DQN`` scaled down to short runs (SB3: buffer 1e6, learning_starts
    100, target_update_interval 1e4, batch 32, lr 1e-4). The four switches below were chosen
    on the making task's quickstart market (inventory penalty 2e-5, 600 episodes in 8
    sessions) over tuning seeds (``root_seed = 1000``, 4 seeds, apart from every shipped
    config's), test Sharpe ratio with 95% intervals over seeds: normalised inputs and rewards
    with ``double`` on, 4.15 [3.25, 5.40]; the same with raw rewards, 2.75 [2.50, 2.95] (reward
    normalisation is what matters); raw inputs, 4.31 [3.53, 5.06]; ``double`` off, 4.43 [4.04,
    4.88]; ``dueling`` on, 4.25 [3.75, 4.77]. The last four are within each other's intervals:
    the defaults keep SB3's plain head and bootstrap (``double`` off had the best estimate),
    with both normalisations.
    """

    learning_rate: float = _setting(1e-3, _POSITIVE)
    """Adam step size."""
    buffer_size: int = _setting(50_000, _COUNT)
    """Replay capacity, transitions."""
    learning_starts: int = _setting(500, _NON_NEGATIVE)
    """Environment steps stored before the first gradient step."""
    batch_size: int = _setting(64, _COUNT)
    """Minibatch size, transitions."""
    tau: float = _setting(1.0, _TAU)
    """Target update coefficient: 1 = hard copy, < 1 Polyak
    ``theta' <- tau theta + (1 - tau) theta'``."""
    gamma: float = _setting(0.99, _UNIT)
    """Discount per step."""
    train_freq: int = _setting(4, _COUNT)
    """Environment steps between training phases."""
    gradient_steps: int = _setting(1, _NON_NEGATIVE)
    """Minibatch updates per training phase."""
    target_update_interval: int = _setting(500, _COUNT)
    """Environment steps between target updates."""
    exploration_fraction: float = _setting(0.1, _UNIT)
    """Fraction of ``total_timesteps`` over which epsilon decays linearly from
    ``exploration_initial_eps`` to ``exploration_final_eps``."""
    exploration_initial_eps: float = _setting(1.0, _UNIT)
    exploration_final_eps: float = _setting(0.05, _UNIT)
    total_timesteps: int = _setting(20_000, _COUNT)
    """Planned training length in environment steps: the scale of the epsilon schedule."""
    max_grad_norm: float = _setting(10.0, _POSITIVE)
    """Gradient-norm clip."""
    reward_scale: float = _setting(1.0, _POSITIVE)
    """Rewards are multiplied by it before they are stored."""
    normalize_observations: bool = _setting(True, _FLAG)
    """Standardise the network's input by running moments of the stored observations (per
    feature, clipped to +-10), so that features in basis points, ticks and fractions weigh
    alike."""
    normalize_rewards: bool = _setting(True, _FLAG)
    """Divide sampled rewards by the running standard deviation of the stored rewards, so
    that learning does not depend on the unit the market pays rewards in."""
    double: bool = _setting(False, _FLAG)
    """Double DQN: the online network picks the bootstrap action, the target values it."""
    dueling: bool = _setting(False, _FLAG)
    """Dueling head: Q = V + A - mean A."""
    torso: str = _setting("mlp")
    """`agents.deep.encoders.make_torso` name."""
    hidden: int = _setting(64, _COUNT)
    """Torso width."""
    torso_options: Mapping[str, Any] | None = _setting(None)
    """Further `make_torso` keywords (e.g. ``{"layers": 2}``); stored as a dict."""
    device: str = _setting("auto")
    """Where to compute: "auto" (cuda if available, else cpu), "cpu", "cuda", ..."""

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            rule, value = field.metadata["rule"], getattr(self, field.name)
            if rule is None:
                continue
            if not rule.holds(value):
                raise ValueError(f"{field.name} must be {rule.expected}, got {value!r}")
            object.__setattr__(self, field.name, rule.cast(value))
        object.__setattr__(self, "torso_options", dict(self.torso_options or {}))


def _seed(seed: Any) -> int | None:
    """``seed`` as an int, or None; ValueError unless a non-negative int or None."""
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative int or None, got {seed!r}")
    return int(seed)


class DQN(ConfiguredAgent):
    """Deep Q-learning with a replay buffer, a target network, Huber loss and Adam.

    :param observation_space: a Box (default: the market features, (7,)); or ``obs_shape``.
    :param action_space: Discrete(n) (default 3 actions); or ``n_actions``.
    :param total_timesteps: the planned training length (environment steps), which sizes the
        exploration schedule (`DQNSettings.total_timesteps`); experiments pass
        episodes x steps per episode.
    :param seed: seeds the agent's numpy Generator ``rng`` (exploration, replay sampling, masks)
        and, through a spawned child, the network initialisation (under
        `torch.random.fork_rng`: the global torch state is left as it was).
    :param settings: the hyper-parameters, keywords of `DQNSettings` (``learning_rate``,
        ``buffer_size``, ``gamma``, ``torso``, ...), kept as ``settings``.

    Epsilon is a function of the number of stored transitions. Greedy ties go to the lowest
    action index (``argmax``). `state_dict` holds ``config``; `from_state` rebuilds from it.
    """

    name = "dqn"
    description = "DQN: replay buffer, target network, Huber loss, Adam (Mnih et al. 2015)"
    stochastic = True
    learning = True
    observation = "features"
    n_heads: int = 1
    lam: float = 0.0
    seeking: bool = False
    masks: bool = False

    def __init__(
        self,
        *,
        observation_space: gym.Space | None = None,
        action_space: gym.Space | None = None,
        obs_shape: tuple[int, ...] | None = None,
        n_actions: int | None = None,
        seed: int | None = None,
        total_timesteps: int | None = None,
        **settings: Any,
    ) -> None:
        self.obs_shape, self.n_actions = _shapes(
            obs_shape, n_actions, observation_space, action_space
        )
        if total_timesteps is not None:
            settings["total_timesteps"] = total_timesteps
        self.settings = DQNSettings(**settings)
        self.seed = _seed(seed)
        self._device = resolve_device(self.settings.device)
        # seeding: numpy Generator for every draw; a child seed for the network initialisation
        rng_seed, torch_seed = np.random.SeedSequence(self.seed).spawn(2)
        self.rng = np.random.default_rng(rng_seed)
        self.q_net = self._build_q_net(torch_seed)
        self._build_targets()
        n_masks = self.n_heads if self.masks else 0
        self.buffer = ReplayBuffer(self.settings.buffer_size, self.obs_shape, n_masks, self._device)
        self.num_timesteps = 0
        """Transitions stored (`update` calls): the clock of epsilon, training and target."""
        self.obs_moments = RunningMoments((self.obs_shape[-1],))
        """Running moments of the stored observations' features (float64, (F,))."""
        self.reward_moments = RunningMoments()
        """Running moments of the stored rewards."""
        self.folded = 0
        """Transitions folded into the moments so far."""
        self.n_updates = 0
        """Gradient steps taken."""
        # acting: one preallocated input (1, *obs_shape), shared with a numpy view on cpu
        self._obs = torch.zeros((1, *self.obs_shape), dtype=torch.float32)
        self._obs_np = self._obs.numpy()

    @functools.cached_property
    def optimizer(self) -> torch.optim.Adam:
        """Adam over the online network's parameters, made when first used: making one
        imports torch's compiler (seconds), which an agent built only to check a config or
        to be tested never needs."""
        return torch.optim.Adam(self.q_net.parameters(), lr=self.settings.learning_rate)

    def _build_q_net(self, seed: np.random.SeedSequence) -> QNetwork:
        """The online network, initialised from ``seed`` without touching torch's global state."""
        settings = self.settings
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(seed.generate_state(1, np.uint64)[0] >> 1))
            body = make_torso(
                settings.torso, self.obs_shape, hidden=settings.hidden, **settings.torso_options
            )
            normalizer = (
                InputNormalizer(self.obs_shape[-1]) if settings.normalize_observations else None
            )
            net = QNetwork(
                body, self.n_actions, self.n_heads, dueling=settings.dueling, normalizer=normalizer
            )
            return net.to(self._device)

    # ---- hooks of the variants -----------------------------------------------------------
    def _build_targets(self) -> None:
        """The target network: a frozen copy of ``q_net``."""
        self.q_target = copy.deepcopy(self.q_net).requires_grad_(False)

    def _acting_q(self, obs: torch.Tensor) -> torch.Tensor:
        """Q-values the policy acts on, (B, k, A)."""
        return self.q_net(obs)

    def _target_q(self, obs: torch.Tensor) -> torch.Tensor:
        """The target's Q-values, (B, k, A)."""
        return self.q_target(obs)

    def _bootstrap(self, next_obs: torch.Tensor) -> torch.Tensor:
        """Q_target(s', a*) per head, (B, k): a* maximises the target's values, or the online
        network's with ``double``."""
        target = self._target_q(next_obs)
        if not self.settings.double:
            return target.amax(dim=2)
        best = self.q_net(next_obs).argmax(dim=2, keepdim=True)
        return target.gather(2, best).squeeze(2)

    def _regression_target(self, q_sa: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """What Q(s, a) (B, k) is regressed on, given the TD target y (B, k): y itself."""
        return y

    def _sync_target(self) -> None:
        """Hard copy (tau = 1) or Polyak average into ``q_target``."""
        tau = self.settings.tau
        if tau == 1.0:
            self.q_target.load_state_dict(self.q_net.state_dict())
            return
        with torch.no_grad():
            for target, online in zip(self.q_target.parameters(), self.q_net.parameters()):
                target.lerp_(online, tau)
            for target, online in zip(self.q_target.buffers(), self.q_net.buffers()):
                target.copy_(online)

    # ---- acting --------------------------------------------------------------------------
    @property
    def epsilon(self) -> float:
        """The exploration rate at ``num_timesteps`` (linear schedule)."""
        settings = self.settings
        duration = int(settings.exploration_fraction * settings.total_timesteps)
        if duration < 1:
            return settings.exploration_final_eps
        return linear_schedule(
            settings.exploration_initial_eps,
            settings.exploration_final_eps,
            duration,
            self.num_timesteps,
        )

    def values(self, obs: Any) -> np.ndarray:
        """What the greedy policy maximises at ``obs`` (*obs_shape), shape (n_actions,), in
        the units of the stored rewards (the network's values times the rewards' running
        standard deviation with ``normalize_rewards``)."""
        self._obs_np[0] = obs
        with torch.no_grad():
            q = self._acting_q(self._obs.to(self._device))
            values = risk_values(q, self.lam, self.seeking)[0].cpu().numpy()
        return (
            values * float(self.reward_moments.std) if self.settings.normalize_rewards else values
        )

    def act(self, obs: Any, explore: bool = True) -> int:
        """Epsilon-greedy (one ``rng.random()`` draw, a second for a random action) or greedy."""
        if explore:
            eps = self.epsilon
            if eps > 0.0 and self.rng.random() < eps:
                return int(self.rng.integers(self.n_actions))
        self._obs_np[0] = obs
        with torch.no_grad():
            q = self._acting_q(self._obs.to(self._device))
            if self.n_heads > 1:  # k = 1: Qhat = Q (no variance term), skip the reduction
                q = risk_values(q, self.lam, self.seeking)
            return int(q.argmax())

    def act_batch(self, obs: Any, explore: bool = True) -> np.ndarray:
        """`act` for N observations (N, ...) with one forward pass: the exploration coins are
        drawn session by session as `act` draws them, the greedy actions come from one batch
        of the network. A subclass that changes `act` keeps the one-by-one default."""
        if type(self).act is not DQN.act:
            return super().act_batch(obs, explore)
        n = len(obs)
        actions = np.zeros(n, dtype=np.int64)
        greedy = np.ones(n, dtype=bool)
        eps = self.epsilon if explore else 0.0
        if eps > 0.0:
            for i in range(n):
                if self.rng.random() < eps:
                    actions[i], greedy[i] = self.rng.integers(self.n_actions), False
        if greedy.any():
            batch = torch.as_tensor(np.asarray(obs, dtype=np.float32)[greedy])
            with torch.no_grad():
                q = self._acting_q(batch.to(self._device))
                q = risk_values(q, self.lam, self.seeking) if self.n_heads > 1 else q[:, 0]
                actions[greedy] = q.argmax(dim=1).cpu().numpy()
        return actions

    # ---- learning ------------------------------------------------------------------------
    def _draw_masks(self) -> np.ndarray | None:
        return None

    def update(
        self,
        obs: Any,
        action: int,
        reward: float,
        next_obs: Any,
        terminated: bool,
        truncated: bool,
    ) -> None:
        """Store the transition (truncation still bootstraps), then train / sync on schedule."""
        settings = self.settings
        self.buffer.add(
            obs, next_obs, action, reward * settings.reward_scale, terminated, self._draw_masks()
        )
        self.num_timesteps += 1
        t = self.num_timesteps
        if t > settings.learning_starts and t % settings.train_freq == 0:
            self._fold()
            for _ in range(settings.gradient_steps):
                self.train_step(self.buffer.sample(settings.batch_size, self.rng))
        if t % settings.target_update_interval == 0:
            self._sync_target()

    def _fold(self) -> None:
        """Fold the transitions stored since the last call into the running moments and give
        the network the new input statistics."""
        new = min(self.num_timesteps - self.folded, self.buffer.size)
        rows = (self.buffer.pos - new + np.arange(new)) % self.buffer.buffer_size
        observations = self.buffer.observations[rows]
        self.obs_moments.update(observations.reshape(-1, self.obs_shape[-1]))
        self.reward_moments.update(self.buffer.rewards[rows])
        self.folded = self.num_timesteps
        if self.q_net.normalizer is not None:
            self.q_net.normalizer.set(self.obs_moments)

    def train_step(self, batch: ReplaySamples) -> float:
        """One Adam step on ``batch``; returns the loss.

        loss = sum_{b,i} m_bi Huber(Q_i(s_b, a_b) - target_bi) / (B k), m = 1 without masks.
        """
        with torch.no_grad():
            live = (1.0 - batch.terminated).unsqueeze(1)
            rewards = batch.rewards
            if self.settings.normalize_rewards:
                rewards = rewards / float(self.reward_moments.std)
            y = rewards.unsqueeze(1) + self.settings.gamma * live * self._bootstrap(
                batch.next_observations
            )
        q = self.q_net(batch.observations)
        index = batch.actions.view(-1, 1, 1).expand(-1, q.shape[1], 1)
        q_sa = q.gather(2, index).squeeze(2)
        target = self._regression_target(q_sa, y)
        if batch.masks is None:
            loss = F.smooth_l1_loss(q_sa, target)
        else:
            loss = (F.smooth_l1_loss(q_sa, target, reduction="none") * batch.masks).mean()
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(self.q_net.parameters(), self.settings.max_grad_norm)
        self.optimizer.step()
        self.n_updates += 1
        return loss.item()

    def target_values(self, obs: Any) -> np.ndarray:
        """The bootstrap term max_a' Q_target(s', a') at states ``obs`` (B, *obs_shape), (B, k)."""
        x = torch.as_tensor(np.asarray(obs, dtype=np.float32), device=self._device)
        with torch.no_grad():
            return self._bootstrap(x).cpu().numpy()

    # ---- state ---------------------------------------------------------------------------
    @property
    def config(self) -> dict[str, Any]:
        """The keyword arguments that rebuild this agent: shapes, settings and seed."""
        return {
            "obs_shape": self.obs_shape,
            "n_actions": self.n_actions,
            **dataclasses.asdict(self.settings),
            "seed": self.seed,
        }

    def _target_state(self) -> dict[str, Any]:
        return module_state("q_target.", self.q_target)

    def _load_target_state(self, state: Mapping[str, Any]) -> None:
        load_module_state(self.q_target, state, "q_target.")

    def state_dict(self) -> dict[str, Any]:
        """Named arrays and plain values: ``config``, counters, ``rng`` (bit-generator state),
        ``q_net.*`` and target parameters, ``optimizer.*`` (Adam moments, flattened),
        ``buffer.*`` (stored rows)."""
        return {
            "config": self.config,
            "num_timesteps": self.num_timesteps,
            "n_updates": self.n_updates,
            "folded": self.folded,
            **self.obs_moments.state_dict("obs_moments."),
            **self.reward_moments.state_dict("reward_moments."),
            "rng": copy.deepcopy(self.rng.bit_generator.state),
            **module_state("q_net.", self.q_net),
            **self._target_state(),
            **adam_state(self.optimizer),
            **self.buffer.state_dict(),
        }

    def _restore(self, state: Mapping[str, Any]) -> None:
        self.num_timesteps, self.n_updates = int(state["num_timesteps"]), int(state["n_updates"])
        self.folded = int(state["folded"])
        self.obs_moments.load_state_dict(state, "obs_moments.")
        self.reward_moments.load_state_dict(state, "reward_moments.")
        self.rng.bit_generator.state = copy.deepcopy(state["rng"])
        load_module_state(self.q_net, state, "q_net.")
        self._load_target_state(state)
        load_adam_state(self.optimizer, state)
        self.buffer.load_state_dict(state)
