"""Stable-Baselines3 on a batched market: `envs.sb3.MarketVecEnv` gives SB3 the sessions of
`MarketVectorEnv` with SB3's conventions, and SB3's DQN and PPO learn on it."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
import torch

import tradearena.envs  # noqa: F401  (registers the tradearena/... ids)

sb3 = pytest.importorskip("stable_baselines3")

from stable_baselines3.common.env_util import make_vec_env  # noqa: E402
from stable_baselines3.common.logger import KVWriter, Logger  # noqa: E402
from stable_baselines3.common.vec_env import VecMonitor  # noqa: E402

from tradearena.envs.sb3 import MarketVecEnv  # noqa: E402
from tradearena.envs.trading_env import TradingEnv  # noqa: E402

MAKING = {
    "task": "making",
    "population": "light",
    "n_steps": 30,
    "reward_scale": 1.0,
    "position_limit": 1000,
}


def test_steps_terminal_observations_and_seeds_follow_the_single_env():
    venv = MarketVecEnv(2, **{**MAKING, "n_steps": 4})
    venv.seed(3)
    single = TradingEnv(**{**MAKING, "n_steps": 4})
    obs = venv.reset()
    assert np.array_equal(obs[1], single.reset(seed=4)[0])
    for _ in range(4):
        obs, rewards, dones, infos = venv.step(np.array([5, 5]))
        expected, reward, ended, _, _ = single.step(5)
        assert rewards[1] == np.float32(reward) and dones[1] == ended
    assert dones.all() and infos[1]["terminal_observation"].tolist() == expected.tolist()
    assert infos[1]["TimeLimit.truncated"] is False
    assert np.array_equal(obs[1], single.reset()[0])  # restarted in the same step
    assert venv.get_attr("num_envs") == [2, 2] and venv.env_is_wrapped(object) == [False] * 2


def test_an_ended_session_reports_its_episode_as_vec_monitor_does():
    """infos[i]["episode"] at a session's end: its summed rewards and its steps, what SB3's
    VecMonitor reports around it (over two episodes of 3 sessions, restarts included)."""
    venv = MarketVecEnv(3, **{**MAKING, "n_steps": 5})
    monitored = VecMonitor(MarketVecEnv(3, **{**MAKING, "n_steps": 5}))
    venv.seed(1)
    monitored.seed(1)
    venv.reset()
    monitored.reset()
    sums, seen = np.zeros(3), []
    for t in range(10):
        actions = np.array([t % 17, 5, 16])
        _, rewards, dones, infos = venv.step(actions)
        _, _, _, watched = monitored.step(actions)
        sums += rewards
        for i in np.flatnonzero(dones):
            episode = infos[i]["episode"]
            assert episode["r"] == pytest.approx(sums[i], rel=1e-6) and episode["l"] == 5
            assert (episode["r"], episode["l"]) == (watched[i]["episode"]["r"], 5)
            seen.append(i)
            sums[i] = 0.0
        assert all("episode" not in infos[i] for i in np.flatnonzero(~dones))
    assert sorted(seen) == [0, 0, 1, 1, 2, 2]


class Recorded(KVWriter):
    """An SB3 logger output that keeps every value written."""

    def __init__(self) -> None:
        self.values: list[dict] = []

    def write(self, key_values, key_excluded, step=0) -> None:
        self.values.append(dict(key_values))


def test_sb3_logs_episode_returns_without_a_wrapper():
    """PPO on MarketVecEnv as it is: SB3's logger writes rollout/ep_rew_mean, the mean of the
    episodes' summed rewards, and rollout/ep_len_mean, the session's steps."""
    venv = MarketVecEnv(2, **{**MAKING, "n_steps": 4})
    venv.seed(0)
    model = sb3.PPO("MlpPolicy", venv, n_steps=8, batch_size=16, n_epochs=1, seed=0)
    recorded = Recorded()
    model.set_logger(Logger(folder=None, output_formats=[recorded]))
    model.learn(16)
    rollout = [v for v in recorded.values if "rollout/ep_rew_mean" in v]
    assert rollout and rollout[-1]["rollout/ep_len_mean"] == 4
    returns = [episode["r"] for episode in model.ep_info_buffer]
    assert len(returns) == 4  # 16 steps in all: 2 sessions x 8 steps / 4 steps an episode
    assert rollout[-1]["rollout/ep_rew_mean"] == pytest.approx(np.mean(returns))


def greedy_pnl(model, sessions: int = 16) -> float:
    """Mean test PnL ($) of ``model``'s greedy policy (or uniformly random actions for None)
    over fixed sessions."""
    env = TradingEnv(**MAKING)
    rng = np.random.default_rng(0)
    scores = []
    for seed in range(1000, 1000 + sessions):
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            action = (
                rng.integers(17) if model is None else model.predict(obs, deterministic=True)[0]
            )
            obs, _, done, _, info = env.step(int(action))
        scores.append(info["score"])
    return float(np.mean(scores))


@pytest.mark.parametrize(
    ("algorithm", "settings"),
    [
        ("DQN", {"learning_starts": 500, "train_freq": 4}),
        ("PPO", {"n_steps": 64, "batch_size": 128}),
    ],
)
def test_sb3_learns_to_make_a_market_on_batched_sessions(algorithm, settings):
    """12,000 steps over 8 sessions: the greedy policy makes about twice what random quoting
    makes on the same 16 test sessions ($19.6 against $8.4 per 30-minute session)."""
    venv = MarketVecEnv(8, **MAKING)
    venv.seed(0)
    model = getattr(sb3, algorithm)("MlpPolicy", venv, seed=0, **settings)
    model.learn(12_000)
    assert greedy_pnl(model) > greedy_pnl(None) + 5.0


IDS = sorted(i for i in gymnasium.registry if i.startswith("tradearena/"))


@pytest.mark.parametrize("env_id", IDS)
def test_sb3_makes_and_trains_every_registered_id_as_its_users_call_it(env_id):
    """SB3's ``make_vec_env(id)`` and ``PPO("MlpPolicy", id)`` make the env with
    ``render_mode="rgb_array"`` (retrying without it on a TypeError only): every id takes it,
    and its frames are (120, 200, 3) uint8 images."""
    venv = make_vec_env(env_id, n_envs=2, seed=0)
    venv.reset()
    venv.step(np.array([venv.action_space.sample() for _ in range(2)]))
    assert venv.get_attr("render_mode") == ["rgb_array"] * 2
    frames = venv.get_images()
    assert all(f.shape == (120, 200, 3) and f.dtype == np.uint8 for f in frames)
    for algorithm in (sb3.PPO, sb3.DQN):
        settings = {"n_steps": 8, "batch_size": 8, "n_epochs": 1} if algorithm is sb3.PPO else {}
        model = algorithm("MlpPolicy", env_id, seed=0, **settings)
        assert model.env.get_attr("render_mode") == ["rgb_array"]
        model.learn(8)


@pytest.mark.parametrize("defaults", [False, True], ids=["recipe", "defaults"])
@pytest.mark.parametrize("algorithm", ["PPO", "DQN"])
def test_the_sb3_examples_adam_is_fused(algorithm, defaults, monkeypatch):
    """`examples/sb3_making.py` builds each algorithm with torch's fused Adam (exact square
    roots, the same on Intel's and AMD's processors), SB3's epsilon kept (PPO's 1e-5)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "examples" / "sb3_making.py"
    spec = importlib.util.spec_from_file_location("sb3_making", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    for cls in (sb3.PPO, sb3.DQN):
        monkeypatch.setattr(cls, "learn", lambda self, steps: self)  # built, not trained
    model = example.train(algorithm, 0, sessions=2, seed=0, defaults=defaults)
    adam = model.policy.optimizer
    assert isinstance(adam, torch.optim.Adam) and adam.defaults["fused"] is True
    assert adam.defaults["eps"] == (1e-5 if algorithm == "PPO" else 1e-8)
