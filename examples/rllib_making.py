"""RLlib's PPO on the making task: two making seats trained against each other, then a seat
against the take-over adversary; prints each agent's mean episode return per iteration.

Needs the ``rllib`` extra (``pip install -e ".[rllib]"``). Short by default (3 iterations of
1,000 env steps each); for a real run::

    python examples/rllib_making.py --iterations 20 --batch 2000
    python examples/rllib_making.py --seats 2 --sessions 16 --batched   # one compiled step
    python examples/rllib_making.py --save runs/rllib                   # tradearena agents

``--save DIR`` writes each trained seat as a tradearena agent (``rllib_policy``) in
``DIR/<seats>/<agent>``, ready for an experiment's ``from =``.
"""

from __future__ import annotations

import argparse
import logging
import os
import time
from pathlib import Path

NOTICES = {
    "ray.rllib.algorithms.algorithm_config": "on the new API stack",
    "ray._common.deprecation": "RLModule(config=",
    "ray.tune.utils.util": "Install gputil",
}
"""Notices RLlib logs about its own defaults, none about this run (logger -> what the message
says): that the new API stack is its default, that its own default PPO module builds itself
through a deprecated path, that GPU monitoring needs gputil."""


def quiet_notices() -> None:
    """Drop `NOTICES` from their loggers (every other record passes), and state Ray's default
    token authentication for a local cluster (``RAY_AUTH_MODE=token``, a user's own setting
    kept) so that Ray does not warn of it; Ray reads it when imported, so this comes first."""
    os.environ.setdefault("RAY_AUTH_MODE", "token")
    for name, phrase in NOTICES.items():
        logging.getLogger(name).addFilter(lambda record, p=phrase: p not in record.getMessage())


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seats", choices=["2", "takeover", "both"], default="both")
    parser.add_argument("--iterations", type=int, default=3, help="PPO iterations per run")
    parser.add_argument("--batch", type=int, default=1000, help="env steps per iteration")
    parser.add_argument("--minibatch", type=int, default=250, help="env steps per SGD step")
    parser.add_argument("--epochs", type=int, default=8, help="passes over each batch")
    parser.add_argument("--lr", type=float, default=3e-4, help="Adam's learning rate")
    parser.add_argument("--n-steps", type=int, default=60, help="decisions per session")
    parser.add_argument(
        "--inventory-penalty", type=float, help="$/share^2/step (default: the task's)"
    )
    parser.add_argument("--hidden", type=int, nargs="+", default=[64, 64], help="MLP units")
    parser.add_argument("--sessions", type=int, default=1, help="sessions per env runner")
    parser.add_argument(
        "--batched", action="store_true", help="step the sessions together (--seats 2 only)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save", type=Path, help="save each trained seat under this folder")
    return parser.parse_args(argv)


def train(seats: str, args: argparse.Namespace) -> None:
    """Train PPO on ``tradearena-making-SEATS``, printing each iteration's mean episode
    return per agent; save the policies when asked."""
    from tradearena.agents.rllib import from_rllib
    from tradearena.envs.rllib import AGENTS, ppo_config
    from tradearena.envs.spec import MarketSpec

    market = {"n_steps": args.n_steps}
    if args.inventory_penalty is not None:
        market["inventory_penalty"] = args.inventory_penalty
    config = ppo_config(
        "making",
        seats,
        market=market,
        batch=args.batch,
        minibatch=args.minibatch,
        epochs=args.epochs,
        lr=args.lr,
        hidden=args.hidden,
        sessions=args.sessions,
        batched=args.batched,
        seed=args.seed,
    )
    algo = config.build_algo()
    print(f"tradearena-making-{seats}: agents {', '.join(AGENTS[seats])}")
    start = time.perf_counter()
    for iteration in range(1, args.iterations + 1):
        runners = algo.train()["env_runners"]
        returns = runners.get("agent_episode_returns_mean", {})
        shown = ", ".join(f"{agent} {float(returns[agent]):+.3f}" for agent in sorted(returns))
        elapsed = time.perf_counter() - start
        print(f"iteration {iteration}: mean episode return {shown} ({elapsed:.0f} s)")
    if args.save:
        spec = MarketSpec(task="making", **market)
        for agent in AGENTS[seats]:
            policy = from_rllib(algo.get_module(agent), spec, seed=args.seed)
            print("saved", policy.save(args.save / seats / agent))
    algo.stop()


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    quiet_notices()
    import ray  # after quiet_notices: Ray reads RAY_AUTH_MODE on import

    ray.init(
        address="local",
        num_cpus=1,
        include_dashboard=False,
        log_to_driver=False,
        logging_level="WARNING",
    )
    for seats in ("2", "takeover") if args.seats == "both" else (args.seats,):
        train(seats, args)
    ray.shutdown()


if __name__ == "__main__":
    main()
