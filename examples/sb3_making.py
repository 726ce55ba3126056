"""Stable-Baselines3's PPO or DQN on the making task (``tradearena/MarketMaking-v0``), made with
SB3's own ``make_vec_env``, then scored against random quoting and holding.

Needs stable-baselines3 (in the ``test`` extra). The recipe, explained in docs/sb3.md:
rewards in dollars (``reward_scale=1.0``: the registered id pays dollars x 0.01, too small a
signal for SB3's defaults), 8 sessions in parallel, and for PPO short rollouts
(``n_steps=128``), large minibatches (``batch_size=256``), a larger step size
(``learning_rate=1e-3``) and a short horizon (``gamma=0.9``); for DQN a target network
updated every 1,000 steps (SB3's default, 10,000, updates it three times in a run this
short) and a larger step size (``learning_rate=5e-4``)::

    python examples/sb3_making.py                       # PPO, 30,000 steps
    python examples/sb3_making.py --algorithm DQN
    python examples/sb3_making.py --steps 50000 --test-sessions 64

Prints one line per policy: its mean PnL ($ per session) over the same test sessions (seeded
1000, 1001, ...), with the standard error.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import gymnasium as gym
import numpy as np
import torch
from stable_baselines3 import DQN, PPO
from stable_baselines3.common.env_util import make_vec_env

import tradearena.envs  # noqa: F401  (registers the tradearena/... ids)

ID = "tradearena/MarketMaking-v0"
HOLD = 1
"""The making task's action that quotes nothing (`envs.simulator.actions.MakeActions`)."""
SETTINGS: dict[str, dict] = {
    "PPO": {"n_steps": 128, "batch_size": 256, "learning_rate": 1e-3, "gamma": 0.9},
    "DQN": {
        "learning_starts": 1000,
        "train_freq": 4,
        "target_update_interval": 1000,
        "learning_rate": 5e-4,
    },
}
"""What each algorithm needs beyond SB3's defaults."""
EXACT_ADAM = {
    "PPO": {"optimizer_kwargs": {"eps": 1e-5, "fused": True}},
    "DQN": {"optimizer_kwargs": {"fused": True}},
}
"""Each algorithm's Adam (SB3's, its epsilon kept) as torch's fused kernel, whose square roots
are exact: the default's come from the processor's estimate, whose bits differ between Intel's
and AMD's processors (`tradearena.envs.cpu`), and the trained policy with them."""


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--algorithm", choices=sorted(SETTINGS), default="PPO")
    parser.add_argument("--steps", type=int, default=30_000, help="training steps, all sessions")
    parser.add_argument("--sessions", type=int, default=8, help="sessions trained in parallel")
    parser.add_argument("--test-sessions", type=int, default=32, help="sessions scored")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--defaults",
        action="store_true",
        help="SB3's defaults instead: the id as registered (rewards x 0.01), one session",
    )
    return parser.parse_args(argv)


def train(algorithm: str, steps: int, sessions: int, seed: int, defaults: bool) -> PPO | DQN:
    """``algorithm`` trained ``steps`` steps on ``sessions`` sessions of the making task,
    rewards in dollars, with `SETTINGS`; or (``defaults``) as SB3 makes it from the id alone;
    its Adam fused either way (`EXACT_ADAM`)."""
    cls, exact = {"PPO": PPO, "DQN": DQN}[algorithm], {"policy_kwargs": EXACT_ADAM[algorithm]}
    if defaults:
        return cls("MlpPolicy", ID, seed=seed, **exact).learn(steps)
    venv = make_vec_env(ID, n_envs=sessions, seed=seed, env_kwargs={"reward_scale": 1.0})
    return cls("MlpPolicy", venv, seed=seed, **SETTINGS[algorithm], **exact).learn(steps)


def score(policy: Callable[[np.ndarray], int], sessions: int) -> tuple[float, float]:
    """Mean and standard error of ``policy``'s PnL ($ per session) over ``sessions`` test
    sessions of the registered id, seeded 1000, 1001, ..."""
    env = gym.make(ID)
    pnl = []
    for seed in range(1000, 1000 + sessions):
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            obs, _, done, _, info = env.step(policy(obs))
        pnl.append(info["score"])
    return float(np.mean(pnl)), float(np.std(pnl, ddof=1) / np.sqrt(sessions))


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    torch.set_num_threads(1)  # small networks: one thread is as fast, and the same on any CPU
    start = time.perf_counter()
    model = train(args.algorithm, args.steps, args.sessions, args.seed, args.defaults)
    trained = time.perf_counter() - start
    rng = np.random.default_rng(0)  # the same random quotes whatever the training seed
    policies: dict[str, Callable[[np.ndarray], int]] = {
        args.algorithm: lambda obs: int(model.predict(obs, deterministic=True)[0]),
        "random": lambda obs: int(rng.integers(17)),
        "hold": lambda obs: HOLD,
    }
    how = "SB3's defaults, 1 session" if args.defaults else f"{args.sessions} sessions"
    print(f"{args.algorithm}: {args.steps:,} steps ({how}) in {trained:.0f} s")
    for name, policy in policies.items():
        mean, error = score(policy, args.test_sessions)
        print(f"{name:>8}: ${mean:6.2f} +- {error:.2f} per session ({args.test_sessions} sessions)")


if __name__ == "__main__":
    main()
