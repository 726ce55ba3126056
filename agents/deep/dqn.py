"""DQN (Mnih et al. 2015) on a torso of `agents.deep.encoders`, shaped like SB3's ``dqn.py``.

The loop, one call each: `DQN.act` (epsilon-greedy), `DQN.update` (store the transition;
every ``train_freq`` steps after ``learning_starts``, ``gradient_steps`` minibatch updates;
every ``target_update_interval`` steps, sync the target). One TD update on a minibatch::

    y    = r / sd_r + gamma * (1 - terminated) * Q_target(s', a*)
           a* = argmax_a' Q_target(s', a')    (DQN)  or  argmax_a' Q(s', a')  (``double``)
    loss = mean (Q(s, a) - y)^2 / 2     (`DQN.loss`)
    theta <- Adam(theta, grad loss clipped to norm max_grad_norm)

with ``sd_r`` the running standard deviation of the stored rewards (``normalize_rewards``,
else 1) and the network's input the observation standardised by running moments
(``normalize_observations``; `agents.deep.normalization`). The loss is the squared error,
not SB3's Huber: with normalised rewards ordinary residuals reach Huber's linear zone, where
its minimiser drifts from the mean towards a median and a risk-neutral learner turns
risk-averse (a safe arm of 0.9 preferred to a risky one of mean 1.0); the gradient clipping
keeps a rare large residual in bounds. ``dueling`` splits the head into a
state value and action advantages (Wang et al. 2016), ``double`` is van Hasselt et al.'s
Double DQN (2016).

`DQN` is also the base of the other deep learners, which declare what they change: ``heads``
(`Heads`: k heads, output (B, k, A), the greedy policy maximising `risk_values` over them, and
bootstrap masks), ``target`` (what bootstraps: a `FrozenCopy` of the online network by
default), and the hooks `_regression_target` (what Q(s, a) is regressed on) and `_acting_q`.
Plumbing (devices, state as arrays, checks) lives in `agents.deep.plumbing`.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from tradearena.agents.deep.buffers import ReplayBuffer, ReplaySamples
from tradearena.agents.deep.configured import ConfiguredAgent
from tradearena.agents.deep.encoders import make_torso
from tradearena.agents.deep.normalization import InputNormalizer, RunningMoments
from tradearena.agents.deep.plumbing import (
    COUNT,
    FLAG,
    NON_NEGATIVE,
    POSITIVE,
    TAU,
    UNIT,
    adam_state,
    check_seed,
    check_settings,
    load_adam_state,
    load_module_state,
    module_state,
    network_shapes,
    resolve_device,
    setting,
)
from tradearena.agents.deep.risk import risk_values
from tradearena.agents.ensembles import poisson_masks
from tradearena.agents.schedules import linear_schedule

__all__ = ["DQN", "DQNSettings", "FrozenCopy", "Heads", "QNetwork", "Target"]


@dataclass(frozen=True)
class DQNSettings:
    """The hyper-parameters of `DQN` (its keywords but for shapes and seed), checked when
    built: ValueError naming the first that is out of range.

    Defaults follow SB3's ``DQN`` scaled down to short runs (SB3: buffer 1e6, learning_starts
    100, target_update_interval 1e4, batch 32, lr 1e-4). The four switches below were chosen
    on the making task's quickstart market (inventory penalty 2e-5, 600 episodes in 8
    sessions) over tuning seeds (``root_seed = 1000``, 4 seeds, apart from every shipped
    config's), test Sharpe ratio with 95% intervals over seeds, with the squared-error loss:
    the defaults (both normalisations, plain head, ``double`` off), 4.37 [4.04, 4.68]; raw
    rewards, 2.28 [1.56, 2.99] (reward normalisation is what matters); raw inputs, 4.03
    [3.39, 4.67]; ``double`` on, 4.25 [3.70, 4.80]; ``dueling`` on, 4.16 [3.81, 4.61]; the
    calibrated reference, 3.07 [2.45, 3.73] (`tradearena run configs/dqn_tuning.toml`). The
    defaults, raw inputs, ``double`` and ``dueling`` are within each other's intervals: the
    defaults keep SB3's plain head and bootstrap (the best estimate), with both
    normalisations.
    """

    learning_rate: float = setting(1e-3, POSITIVE)
    """Adam step size."""
    buffer_size: int = setting(50_000, COUNT)
    """Replay capacity, transitions."""
    learning_starts: int = setting(500, NON_NEGATIVE)
    """Environment steps stored before the first gradient step."""
    batch_size: int = setting(64, COUNT)
    """Minibatch size, transitions."""
    tau: float = setting(1.0, TAU)
    """Target update coefficient: 1 = hard copy, < 1 Polyak
    ``theta' <- tau theta + (1 - tau) theta'``."""
    gamma: float = setting(0.99, UNIT)
    """Discount per step."""
    train_freq: int = setting(4, COUNT)
    """Environment steps between training phases."""
    gradient_steps: int = setting(1, NON_NEGATIVE)
    """Minibatch updates per training phase."""
    target_update_interval: int = setting(500, COUNT)
    """Environment steps between target updates."""
    exploration_fraction: float = setting(0.1, UNIT)
    """Fraction of ``total_timesteps`` over which epsilon decays linearly from
    ``exploration_initial_eps`` to ``exploration_final_eps``."""
    exploration_initial_eps: float = setting(1.0, UNIT)
    exploration_final_eps: float = setting(0.05, UNIT)
    total_timesteps: int = setting(20_000, COUNT)
    """Planned training length in environment steps: the scale of the epsilon schedule."""
    max_grad_norm: float = setting(10.0, POSITIVE)
    """Gradient-norm clip."""
    reward_scale: float = setting(1.0, POSITIVE)
    """Rewards are multiplied by it before they are stored."""
    normalize_observations: bool = setting(True, FLAG)
    """Standardise the network's input by running moments of the stored observations (per
    feature, clipped to +-10), so that features in basis points, ticks and fractions weigh
    alike."""
    normalize_rewards: bool = setting(True, FLAG)
    """Divide sampled rewards by the running standard deviation of the stored rewards, so
    that learning does not depend on the unit the market pays rewards in."""
    double: bool = setting(False, FLAG)
    """Double DQN: the online network picks the bootstrap action, the target values it."""
    dueling: bool = setting(False, FLAG)
    """Dueling head: Q = V + A - mean A."""
    torso: str = setting("mlp")
    """`agents.deep.encoders.make_torso` name."""
    hidden: int = setting(64, COUNT)
    """Torso width."""
    torso_options: Mapping[str, Any] | None = setting(None)
    """Further `make_torso` keywords (e.g. ``{"layers": 2}``); stored as a dict."""
    device: str = setting("auto")
    """Where to compute: "auto" (cuda if available, else cpu), "cpu", "cuda", ..."""

    def __post_init__(self) -> None:
        check_settings(self)
        object.__setattr__(self, "torso_options", dict(self.torso_options or {}))


@dataclass(frozen=True)
class Heads:
    """The Q-network's heads and what acting makes of them: ``k`` heads, a policy greedy on
    Qbar - lam var over the heads (Qbar + lam var when ``seeking``), and Poisson(1) bootstrap
    masks stored with every transition when ``masks``. One head: plain DQN."""

    k: int = 1
    lam: float = 0.0
    masks: bool = False
    seeking: bool = False


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


class Target(Protocol):
    """What the TD target bootstraps from: its Q-values, its sync with the online network
    every ``target_update_interval`` steps, and its state as named arrays."""

    def q(self, obs: torch.Tensor) -> torch.Tensor:
        """Q-values at ``obs``, (B, k, A)."""
        ...

    def sync(self, online: nn.Module) -> None: ...

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: Mapping[str, Any]) -> None: ...


class FrozenCopy:
    """DQN's target: a frozen copy ``net`` of the online network, synced by hard copy
    (``tau`` = 1) or Polyak averaging ``theta' <- tau theta + (1 - tau) theta'``."""

    def __init__(self, online: nn.Module, settings: DQNSettings) -> None:
        self.net = copy.deepcopy(online).requires_grad_(False)
        self.tau = settings.tau

    def q(self, obs: torch.Tensor) -> torch.Tensor:
        return self.net(obs)

    def sync(self, online: nn.Module) -> None:
        if self.tau == 1.0:
            self.net.load_state_dict(online.state_dict())
            return
        with torch.no_grad():
            for target, current in zip(self.net.parameters(), online.parameters()):
                target.lerp_(current, self.tau)
            for target, current in zip(self.net.buffers(), online.buffers()):
                target.copy_(current)

    def state_dict(self) -> dict[str, Any]:
        return module_state("q_target.", self.net)

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        load_module_state(self.net, state, "q_target.")


class DQN(ConfiguredAgent):
    """Deep Q-learning with a replay buffer, a target network, squared loss and Adam.

    :param observation_space: a Box (default: the market features, (7,)); or ``obs_shape``.
    :param action_space: Discrete(n) (default 3 actions); or ``n_actions``.
    :param total_timesteps: the planned training length (environment steps), which sizes the
        exploration schedule (`DQNSettings.total_timesteps`); experiments pass
        episodes x steps per episode.
    :param seed: seeds the agent's numpy Generator ``rng`` (exploration, replay sampling, masks)
        and, through a spawned child, the network initialisation (under
        `torch.random.fork_rng`: the global torch state is left as it was).
    :param heads: the heads (`Heads`), declared by the ensemble variants; one head by default.
    :param target: builds the `Target` from the online network and the settings (the
        variants' declaration; `FrozenCopy` by default).
    :param settings: the hyper-parameters, keywords of `DQNSettings` (``learning_rate``,
        ``buffer_size``, ``gamma``, ``torso``, ...), kept as ``settings``.

    Epsilon is a function of the number of stored transitions. Greedy ties go to the lowest
    action index (``argmax``). `state_dict` holds ``config``; `from_state` rebuilds from it.
    """

    name = "dqn"
    description = "DQN: replay buffer, target network, squared loss, Adam (Mnih et al. 2015)"
    stochastic = True
    learning = True
    observation = "features"

    def __init__(
        self,
        *,
        observation_space: gym.Space | None = None,
        action_space: gym.Space | None = None,
        obs_shape: tuple[int, ...] | None = None,
        n_actions: int | None = None,
        seed: int | None = None,
        total_timesteps: int | None = None,
        heads: Heads = Heads(),
        target: Callable[[nn.Module, DQNSettings], Target] = FrozenCopy,
        **settings: Any,
    ) -> None:
        self.obs_shape, self.n_actions = network_shapes(
            obs_shape, n_actions, observation_space, action_space
        )
        if total_timesteps is not None:
            settings["total_timesteps"] = total_timesteps
        self.settings = DQNSettings(**settings)
        self.seed = check_seed(seed)
        self.heads = heads
        self.n_heads, self.lam, self.masks, self.seeking = (
            heads.k,
            heads.lam,
            heads.masks,
            heads.seeking,
        )
        self._device = resolve_device(self.settings.device)
        # seeding: numpy Generator for every draw; a child seed for the network initialisation
        rng_seed, torch_seed = np.random.SeedSequence(self.seed).spawn(2)
        self.rng = np.random.default_rng(rng_seed)
        self.q_net = self._build_q_net(torch_seed)
        self.weights = list(self.q_net.parameters())
        """The online network's parameters, listed once (a step zeroes and clips them)."""
        self.target = target(self.q_net, self.settings)
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
        to be tested never needs. torch's fused kernel: one vectorised pass whose square
        roots are exact, where the default's come from MKL's vector library, which starts
        from the processor's estimate and so differs between Intel's and AMD's processors
        (`tradearena.envs.cpu`); a third of the default's time, too."""
        return torch.optim.Adam(self.weights, lr=self.settings.learning_rate, fused=True)

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

    @property
    def q_target(self) -> nn.Module:
        """The frozen target network of the default `FrozenCopy` target."""
        return self.target.net

    # ---- act -----------------------------------------------------------------------------
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

    def _acting_q(self, obs: torch.Tensor) -> torch.Tensor:
        """Q-values the policy acts on, (B, k, A): the online network's (a variant's hook)."""
        return self.q_net(obs)

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
        of the network. A variant that changes `act` changes this too."""
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

    # ---- store and learn -----------------------------------------------------------------
    def update(
        self,
        obs: Any,
        action: int,
        reward: float,
        next_obs: Any,
        terminated: bool,
        truncated: bool,
    ) -> None:
        """Store the transition (truncation still bootstraps), then learn / sync on schedule."""
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

    def _draw_masks(self) -> np.ndarray | None:
        """The Poisson(1) bootstrap masks (k,) of a stored transition, when `Heads` keeps them."""
        return poisson_masks(self.rng, self.n_heads) if self.masks else None

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

        loss = sum_{b,i} m_bi (Q_i(s_b, a_b) - target_bi)^2 / (2 B k), m = 1 without masks.
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
        loss = self.loss(q_sa, self._regression_target(q_sa, y), batch.masks)
        for weight in self.weights:  # the optimizer's zero_grad, without its hooks
            weight.grad = None
        loss.backward()
        nn.utils.clip_grad_norm_(self.weights, self.settings.max_grad_norm)
        self.optimizer.step()
        self.n_updates += 1
        return loss.item()

    def loss(
        self, q_sa: torch.Tensor, target: torch.Tensor, masks: torch.Tensor | None
    ) -> torch.Tensor:
        """The TD loss of Q(s, a) ``q_sa`` against ``target`` (both (B, k)): half the mean
        squared error, each term weighed by its bootstrap mask m (B, k) when masks are kept.
        Its gradient is the residual itself (Huber's inside its quadratic zone) and its
        minimiser the mean of the targets, not a median."""
        squared = 0.5 * (q_sa - target) ** 2
        return squared.mean() if masks is None else (squared * masks).mean()

    def _bootstrap(self, next_obs: torch.Tensor) -> torch.Tensor:
        """Q_target(s', a*) per head, (B, k): a* maximises the target's values, or the online
        network's with ``double``."""
        target = self.target.q(next_obs)
        if not self.settings.double:
            return target.amax(dim=2)
        best = self.q_net(next_obs).argmax(dim=2, keepdim=True)
        return target.gather(2, best).squeeze(2)

    def _regression_target(self, q_sa: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """What Q(s, a) (B, k) is regressed on, given the TD target y (B, k): y itself."""
        return y

    def target_values(self, obs: Any) -> np.ndarray:
        """The bootstrap term max_a' Q_target(s', a') at states ``obs`` (B, *obs_shape), (B, k)."""
        x = torch.as_tensor(np.asarray(obs, dtype=np.float32), device=self._device)
        with torch.no_grad():
            return self._bootstrap(x).cpu().numpy()

    # ---- sync ----------------------------------------------------------------------------
    def _sync_target(self) -> None:
        """Bring the target up to the online network (`Target.sync`)."""
        self.target.sync(self.q_net)

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
            **self.target.state_dict(),
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
        self.target.load_state_dict(state)
        load_adam_state(self.optimizer, state)
        self.buffer.load_state_dict(state)
