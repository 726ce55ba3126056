"""The commands of experiments: ``run``, ``evaluate``, ``reproduce``, ``plot``, ``agents``,
``tasks`` and ``calibrate``, and the executor the ones that run jobs ask for."""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tradearena.evaluation.cli.text import aligned, format_game, format_summary


@contextmanager
def executor_from(args: argparse.Namespace, **job: Any) -> Iterator:
    """The executor the arguments ask for (``job=``: the function that runs a job, default
    its kind's), closed (Ray shut down if it started it) after; a Ray cluster is connected to
    first, so that one that does not answer is refused before anything is written."""
    from tradearena.evaluation.experiment.parallel import RayExecutor, make_executor

    executor = make_executor(
        args.executor,
        workers=args.workers,
        address=args.address,
        progress=not args.no_progress,
        **job,
    )
    try:
        if isinstance(executor, RayExecutor) and executor.address:
            executor.connect()
        yield executor
    finally:
        executor.close()


def run_command(args: argparse.Namespace) -> int:
    from tradearena import agents
    from tradearena.evaluation.experiment.config import load_config, merge
    from tradearena.evaluation.experiment.runner import plan, run_experiment

    agents.add_folders(*args.agents_from)
    overrides = functools.reduce(merge, args.set, {})
    if args.dry_run:
        from tradearena.agents.calibration import untuned
        from tradearena.evaluation.experiment.kinds import KINDS, Driven

        with untuned() as left:  # the references' markets calibrated, their tuning left
            config = load_config(args.config, overrides)
        jobs = plan(config)
        later = isinstance(KINDS[config.kind], Driven)  # the later rounds follow its results
        first = " in its first round (the next are planned from its results)" if later else ""
        print(f"{args.config}: {config.kind} experiment, {len(jobs)} jobs{first}, valid")
        for job in jobs:
            print(f"  {job.id}")
        if left:
            print(f"tuned when it runs, before its jobs: {'; '.join(left)}")
        return 0
    with executor_from(args) as executor:
        outcome = run_experiment(
            args.config, executor, out=args.out, resume=args.resume, overrides=overrides
        )
    return report(outcome)


def evaluate_command(args: argparse.Namespace) -> int:
    from tradearena import agents
    from tradearena.evaluation.experiment.evaluate import evaluate_run

    agents.add_folders(*args.agents_from)
    with executor_from(args) as executor:
        outcome = evaluate_run(
            args.run_dir,
            executor,
            file=args.config,
            episodes=args.episodes,
            out=args.out,
            resume=args.resume,
        )
    return report(outcome)


def report(outcome) -> int:
    """Print what a run did (its payoff or summary table, its directory, its failed jobs);
    the exit status: 1 if a job failed."""
    if outcome.skipped:
        print(f"resumed: {outcome.skipped} finished jobs skipped")
    roles = bool(outcome.config.tournament.roles)
    print(format_game(outcome.directory, roles) or format_summary(outcome.summary))
    equilibria = outcome.directory / "equilibria.csv"
    if equilibria.exists():
        from tradearena.evaluation.analysis.games import format_equilibria

        print("\n" + format_equilibria(equilibria))
    print(f"\nrun directory: {outcome.directory}")
    if outcome.failed:
        print(f"{len(outcome.failed)} job(s) failed:", file=sys.stderr)
        for job_id, error in outcome.failed.items():
            print(f"  {job_id}: {error.strip().splitlines()[-1]}", file=sys.stderr)
        return 1
    return 0


def reproduce_command(args: argparse.Namespace) -> int:
    from tradearena.evaluation.reports.reproduce import reproduce

    with executor_from(args) as executor:
        report = reproduce(executor, runs=Path(args.runs), docs=Path(args.docs), scale=args.scale)
    print(f"report: {report}")
    return 0


def plot_command(args: argparse.Namespace) -> int:
    from tradearena.evaluation.experiment.runner import write_run_figures

    for path in write_run_figures(args.run_dir):
        print(path)
    return 0


def agents_command(args: argparse.Namespace) -> int:
    from tradearena import agents
    from tradearena.envs.tasks import TASKS
    from tradearena.envs.trading_env import TradingEnv

    if args.check:
        agents.add_folders(os.getcwd(), *args.agents_from)
        cls = agents.resolve(args.check)
        env = TradingEnv(observation=cls.observation, **TASKS[cls.task].gym_keywords())
        standard = {"observation_space": env.observation_space, "action_space": env.action_space}
        standard |= {"seed": 0, "market_spec": env.market_spec}
        report = agents.check_agent(
            cls, env, **{k: v for k, v in standard.items() if k in cls.takes}
        )
        print(report)
        return 0
    print(aligned(list(agents.describe().items())))
    return 0


def tasks_command(args: argparse.Namespace) -> int:
    from tradearena.envs.spec import MarketSpec
    from tradearena.envs.tasks import TASKS

    rows = [("task", "Gymnasium id", "actions", "market", "reference")]
    for task in TASKS.values():
        spec = MarketSpec(task=task.name)
        market = (
            f"{spec.population}, {spec.n_steps} steps, limit {spec.position_limit:,}, "
            f"reward x {spec.reward_scale:g}"
            + (f", buys {spec.parent_order:,}" if spec.parent_order else "")
        )
        rows.append((task.name, task.gym_id, spec.action_set, market, task.reference or "-"))
    print(aligned(rows))
    print()
    width = max(map(len, TASKS))
    for task in TASKS.values():
        print(f"{task.name:<{width}}  {task.summary}")
    return 0


def calibrate_command(args: argparse.Namespace) -> int:
    from tradearena.envs.tasks import TASKS
    from tradearena.evaluation.experiment.config import AgentEntry, load_config
    from tradearena.evaluation.experiment.rollout import build_agent

    config = load_config(args.config)
    market = config.market
    reference = TASKS[market.task].reference
    if not reference:
        print(f"task {market.task!r} has no reference policy to calibrate")
        return 0
    specs = [s for s in config.agents if s.id == reference] or [AgentEntry(reference, reference)]
    for spec in specs:
        calibration = build_agent(spec, market, seed=0).calibration
        estimate = calibration.pop("market", None)
        if estimate is not None:
            print(
                f"market ({estimate['sessions']} calibration sessions, {estimate['steps']} "
                f"steps): sigma {estimate['sigma']:.3f} ticks/step; fills "
                f"{estimate['A']:.3f} exp(-{estimate['kappa']:.3f} delta) per step, delta "
                f"{min(estimate['distances'])}-{max(estimate['distances'])} ticks from the mid"
            )
        tuned = {k: v for k, v in calibration.items() if k.endswith("_sharpes")}
        values = ", ".join(f"{k} {v:.4g}" for k, v in calibration.items() if k not in tuned)
        print(f"{spec.label}: {values}")
        for key, sharpes in tuned.items():
            grid = ", ".join(f"{g:g}: {s:.2f}" for g, s in sharpes.items())
            print(f"  tuning Sharpe by {key.removesuffix('_sharpes')}: {grid}")
    return 0
