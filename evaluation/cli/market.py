"""The commands of the market: a synthetic ``session``, the market judged (``realism``,
``response``, ``impact``, ``transfer``), fitted (``fit``) and learned (``learn``)."""

from __future__ import annotations

import argparse
import inspect
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from tradearena.envs.errors import UserError, into
from tradearena.evaluation.cli.experiments import executor_from

if TYPE_CHECKING:
    from tradearena.evaluation.experiment.parallel import Executor


def run_session(args: argparse.Namespace) -> int:
    from tradearena.envs.simulator.market import Market
    from tradearena.envs.simulator.traders import rmsc04

    market = Market(rmsc04(), n_seats=0, n_steps=args.steps)
    start = time.perf_counter()
    market.reset(args.seed)
    while not market.done:
        market.step()
    seconds = time.perf_counter() - start
    summary = market.summary()
    print(
        f"synthetic session, seed {args.seed}: {summary['steps']} one-minute steps "
        f"simulated in {seconds:.2f} s"
    )
    for key, value in summary.items():
        number = f"{value:,.2f}" if isinstance(value, float) else f"{value:,}"
        unit = SESSION_UNITS.get(key, "")
        if unit == "ticks":
            unit += f" (${value * market.tick_size:,.4f})"
        print(f"  {key:<12} {number} {unit}".rstrip())
    return 0


MAX_SESSION_STEPS = 390 * 256
"""The longest `tradearena session`, in one-minute steps: a year of trading days (the market
keeps arrays of a session's steps)."""


SESSION_UNITS = {
    "volume": "shares",
    "mean_spread": "ticks",
    "open_mid": "ticks",
    "close_mid": "ticks",
    "low_mid": "ticks",
    "high_mid": "ticks",
}
"""The unit of each `Market.summary` value `tradearena session` prints (counts have none);
prices in ticks are followed by their dollars."""


def fit_command(args: argparse.Namespace) -> int:
    """`tradearena fit`: refused when --budget is less than one CMA-ES generation per restart
    (what the fit evaluates at least) or a tape is too short to stand for a day."""
    from tradearena.envs.data.load import ThinTape
    from tradearena.evaluation.market.search import fit

    generation = inspect.signature(fit).parameters["popsize"].default
    if args.budget < generation * args.restarts:
        raise UserError(
            f"--budget {args.budget}: a fit evaluates at least one generation of {generation} "
            f"candidates per restart ({args.restarts} restarts: {generation * args.restarts}); "
            "give a larger --budget or fewer --restarts"
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error", ThinTape)
        return _fit(args)


def learn_command(args: argparse.Namespace) -> int:
    """`tradearena learn`: learn, write, print what was learned."""
    from tradearena.evaluation.market.learn import learn

    neural = args.model == "neural"
    if neural and len(args.tapes) != 1:
        raise UserError(f"--model neural learns from one tape, got {len(args.tapes)}")
    if args.minutes is not None and not neural:
        raise UserError("--minutes: only --model neural trains for a time; events fit to the end")
    began = time.perf_counter()
    out = Path(args.out)
    model = learn(
        args.tapes,
        out,
        start=args.start,
        end=args.end,
        neural=neural,
        minutes=10.0 if args.minutes is None else args.minutes,
        mixed=args.mixed,
    )
    if neural:
        held = model.meta["held_out_log_likelihood_per_event"]
        print(f"neural: {held:.4f} nats per event on the window's last tenth, held out")
        model = model.base
    meta = model.meta
    print(
        f"learned {meta['events']:,} events in {time.perf_counter() - began:.1f} s: "
        f"log-likelihood {meta['log_likelihood_per_event']:.4f} nats per event, decays "
        f"{', '.join(f'{d:g}' for d in model.decays)} per second, branching {model.branching:.3f} "
        f"(spectral radius {model.spectral_radius:.3f}: "
        f"{'stable' if model.spectral_radius < 1 else 'explosive, the flow runs away'})"
    )
    sparse = meta["pooled"]
    if sparse and not args.verbose:
        print(f"{len(sparse)} sparse states take a neighbour's rates (--verbose lists them)")
    for pooled in sparse if args.verbose else ():
        print(f"pooled: {pooled['state']} ({pooled['events']} events) with {pooled['pooled_with']}")
    print(f"wrote {out} (the flow's parameters: {out.stem}.flow.json and the files it names)")
    return 0


def _fit(args: argparse.Namespace) -> int:
    """``tradearena fit``: fit, write the market file, print the fit's report."""
    from tradearena.evaluation.experiment.parallel import make_executor
    from tradearena.evaluation.market.fit import check_out, day_job, fit_day, write_market

    out = Path(args.out)
    check_out(out, args.tapes)
    memory = out.with_suffix(".fit.jsonl")
    if memory.exists() and not args.resume:
        raise UserError(
            f"{memory} exists (an earlier fit's memory): --resume to go on, or remove it"
        )
    executor = make_executor(args.executor, workers=args.workers, progress=False, job=day_job)
    with into(out.parent):  # made for the fit: removed again when it is refused
        try:
            result, table, goal = fit_day(
                args.tapes,
                population=args.population,
                budget=args.budget,
                minutes=args.minutes,
                days=args.days,
                restarts=args.restarts,
                executor=executor,
                memory=memory,
                start=args.start,
                end=args.end,
            )
        finally:
            executor.close()
        write_market(out, table, result, args.tapes, (args.start, args.end))
    stopped = f" (--minutes stopped it before {args.budget}: the best so far)"
    print(
        f"distance {result.distance:.4g} after {result.evaluations} candidates in "
        f"{result.seconds:.0f} s" + (stopped if result.stopped_early else "")
    )
    print(f"{'parameter':32} {'fitted':>12} {'restarts mean':>14} {'sd':>10}")
    for name, (mean, sd) in result.spread().items():
        shown = f"{sd:10.3g}" if len(result.restarts) > 1 else f"{'-':>10}"
        print(f"{name:32} {result.parameters[name]:12.5g} {mean:14.5g} {shown}")
    if len(result.restarts) == 1:
        print("(one restart: no sd over restarts to show what the day does not identify)")
    print(f"wrote {out} (memory of the candidates: {memory})")
    return 0


def transfer_command(args: argparse.Namespace) -> int:
    from tradearena.evaluation.market.transfer import transfer_job

    with executor_from(args, job=transfer_job) as executor:
        return _transfer(args, executor)


def _transfer(args: argparse.Namespace, executor: Executor) -> int:
    """``tradearena transfer``: test the zoo on ``executor``, print the verdicts, write the
    files."""
    from tradearena.evaluation.market.transfer import format_transfer, transfer, write_transfer

    result = transfer(
        args.market,
        args.against,
        executor=executor,
        task=args.task,
        window=args.window,
        start=args.start,
        agents=args.agents,
        seeds=args.seeds,
        sessions=args.sessions,
        baseline=args.baseline,
    )
    print(format_transfer(result, verbose=args.verbose))
    if args.out is not None:
        paths = write_transfer(result, Path(args.out))
        print(f"\nwrote {', '.join(str(p) for p in paths)}")
    return 0


def realism_command(args: argparse.Namespace) -> int:
    from tradearena.envs.data.load import without_orderbooks

    args.sources = without_orderbooks(args.sources)  # a LOBSTER day named by both its files
    return _realism(args)


def _realism(args: argparse.Namespace) -> int:
    """``tradearena realism``: print the verdict (with --verbose the scorecard, the facts not
    available and the features that tell each market), and where it was written."""
    from tradearena.evaluation.market.realism import (
        format_features,
        format_scorecard,
        format_verdict,
        realism,
    )

    report = realism(
        args.sources,
        against=args.against,
        days=args.days,
        out=args.out,
        start=args.start,
        end=args.end,
        classifier_days=min(args.classifier_days, args.days),
        learned=args.learned,
    )
    print(format_verdict(report))
    if args.verbose:
        print("\n" + format_scorecard(report.table))
        for label, (reason, names) in report.missing.items():
            print(f"\n{label}: not available ({reason}): {', '.join(names)}")
        for label, tests in report.tests.items():
            print("\n" + format_features(label, tests))
    else:
        print(
            f"(--verbose: the scorecard's {report.table.fact.nunique()} facts, those not "
            "available and what tells each market from the tape)"
        )
    if args.out is not None:
        print(f"\nwrote {Path(args.out) / 'scorecard.csv'} (every fact and AUC) and realism_*.png")
    return 0


def impact_command(args: argparse.Namespace) -> int:
    """``tradearena impact``: print the verdict (and with --verbose every check), and where it
    was written."""
    from tradearena.envs.data.load import without_orderbooks
    from tradearena.evaluation.market.impact import format_impact, impact, impact_job

    (tape,) = without_orderbooks([args.tape])
    with executor_from(args, job=impact_job) as executor:
        found = impact(
            tape,
            args.markets,
            executor=executor,
            start=args.start,
            end=args.end,
            metaorders=args.metaorders,
            seed=args.seed,
            out=args.out,
        )
    print(format_impact(found, verbose=args.verbose))
    if args.out is not None:
        print(f"\nwrote {Path(args.out) / 'impact.csv'} and impact.png")
    return 0


def response_command(args: argparse.Namespace) -> int:
    """``tradearena response``: print the verdict and the table, and where it was written."""
    from tradearena.envs.data.load import without_orderbooks
    from tradearena.evaluation.market.response import format_response, response

    (tape,) = without_orderbooks([args.tape])
    found = response(
        tape, args.markets, start=args.start, end=args.end, days=args.days, out=args.out
    )
    print(format_response(found))
    if args.out is not None:
        print(f"\nwrote {Path(args.out) / 'response.csv'} and response.png")
    return 0
