"""`tradearena learn`: order flow learned from a tape event by event, written as an experiment
file whose market runs it (`envs.simulator.traders.LearnedFlow`), with the model's parameters
beside it (`envs.simulator.learned_flow.parameters`): all three files, or none."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import tomli_w
from tqdm import tqdm

from tradearena.envs.data.events import window_events
from tradearena.envs.data.load import TapeIdentity, load_tape
from tradearena.envs.data.tapes import Tape
from tradearena.envs.errors import into, replacing, together
from tradearena.envs.simulator.learned_flow.estimate import fit_events
from tradearena.envs.simulator.learned_flow.model import EventModel, check
from tradearena.envs.simulator.learned_flow.neural import NeuralModel
from tradearena.envs.simulator.learned_flow.neural import check as check_neural
from tradearena.envs.simulator.learned_flow.neural_fit import fit_neural, torch_or_error
from tradearena.envs.simulator.learned_flow.parameters import LearnedFlowError
from tradearena.evaluation.market.fit import check_out, experiment_table
from tradearena.evaluation.market.sources import clipped, clock, day_until, tape_day

__all__ = [
    "MAX_PRICE_RATIO",
    "learn",
    "learned_files",
    "learned_market",
    "one_market",
    "write_learned",
]

MAX_PRICE_RATIO = 2.0
"""The most the days' median prices may differ by, as a factor, to be pooled as one market's
days without ``mixed`` (a split, or another instrument, moves them further)."""
_LOBSTER_DAY = re.compile(r"(?P<ticker>.+?)_(?P<date>\d{4}-\d{2}-\d{2})_\d+_\d+_message_\d+\.csv")
"""A LOBSTER message file's name: its ticker and date (then its session and levels)."""


def learned_market(model_file: str, tape: Tape) -> dict[str, Any]:
    """The ``[market]`` table of a market of the learned flow in ``model_file`` (a path the
    experiment file reads relative to its folder), on the clock, tick and price of the day
    of ``tape``: the making task, one-hour sessions of one-minute steps in its day (the
    whole day when it is shorter)."""
    day = tape_day(tape)
    mids = (day.bid + day.ask) / 2
    first = mids[np.isfinite(mids)][0]
    day_steps = max(int(round((day.close - day.open) / 60)), 1)
    return {
        "task": "making",
        "tick_size": day.tick_size,
        "initial_price": int(round(float(first))),
        "open_time": float(day.open),
        "n_steps": min(60, day_steps),
        "day_steps": day_steps,
        "traders": [{"type": "LearnedFlow", "model": model_file}],
    }


def learned_files(out: Path, neural: bool) -> list[Path]:
    """The files `write_learned` writes for the experiment file ``out``: it, the flow's
    parameter file and its arrays (and a neural flow's base model and its arrays)."""
    flow = out.with_name(f"{out.stem}.flow.json")
    files = [out, flow, flow.with_suffix(".npz")]
    if neural:
        base = flow.with_name(f"{flow.stem}.base.json")
        files += [base, base.with_suffix(".npz")]
    return files


def write_learned(path: Path, model: EventModel | NeuralModel, market: Mapping[str, Any]) -> Path:
    """``path``: an experiment file (the quickstart's agents on the learned market), its
    header saying what was learned from what; the model beside it as ``path``'s stem +
    ``.flow.json`` (and its arrays): every file, or none; none when the model is one its
    market would refuse (a `LearnedFlowError` naming the days)."""
    from tradearena.agents.saving import project_version

    base = model.base if isinstance(model, NeuralModel) else model
    meta = base.meta
    runs = f"the flow learned from {_days(meta)} cannot run"  # written only if it can
    (check_neural if base is not model else check)(model, runs)
    lo, hi = meta["window"]
    decays = ", ".join(f"{d:g}" for d in base.decays)
    kind = "neural" if base is not model else "events"
    lines = [
        f"# Order flow learned from {_days(meta)} by `tradearena learn --model {kind}`",
        "# (a queue-reactive point process with Hawkes excitation, maximum likelihood): "
        f"{meta['events']:,} events",
        f"# from {clock(lo)} to {clock(hi)}, log-likelihood {meta['log_likelihood_per_event']:.4f} "
        f"nats per event, decays {decays} per second,",
        f"# branching {base.branching:.3f}, {len(meta['pooled'])} sparse states pooled with "
        f"a neighbour (listed in the parameter file); tradearena {project_version()}.",
    ]
    if base is not model:
        held = model.meta["held_out_log_likelihood_per_event"]
        lines.append(
            f"# Its excitation replaced by a GRU of {model.hidden} units over the events "
            f"(torch, {model.meta['epochs']} epochs): {held:.4f} nats per event on the"
        )
        lines.append("# window's last tenth, held out.")
    with into(path.parent), together():
        model.save(path.parent / f"{path.stem}.flow.json")
        with replacing(path) as temporary:
            text = tomli_w.dumps(experiment_table(path.stem, market))
            temporary.write_text("\n".join(lines) + "\n\n" + text)
    return path


def _days(meta: Mapping[str, Any]) -> str:
    """The tapes a flow learned from, as its file's header names them."""
    names = [TapeIdentity.read(tape).name for tape in meta["tapes"]]
    return names[0] if len(names) == 1 else f"{len(names)} days ({', '.join(names)})"


def one_market(paths: Sequence[str], tapes: Sequence[Tape], mixed: bool = False) -> None:
    """`LearnedFlowError` unless the ``tapes`` (read from ``paths``) are distinct days of one
    market: no file twice, no two of the same messages (a copy), no two LOBSTER files of one
    ticker and date (parts of one day, or its level-1 and level-5 files); and, unless
    ``mixed`` (a user pooling them on purpose), one ticker by the LOBSTER names, one depth of
    book, one grid of prices (the greatest common divisor of a day's prices, in ticks: a
    $0.05 instrument's is 5 at $0.01) and median prices within `MAX_PRICE_RATIO` of each
    other. The tick the days are read at is `fit_events`'s check."""
    seen: dict[object, str] = {}
    for path, tape in zip(paths, tapes):
        named = _LOBSTER_DAY.fullmatch(Path(path).name)
        keys = {
            "the same file": Path(path).resolve(),
            "the same messages": hashlib.sha256(tape.messages.tobytes()).digest(),
            "the same day": named and (named["ticker"], named["date"]),
        }
        for what, key in keys.items():
            if key and (what, key) in seen:
                raise LearnedFlowError(
                    f"{seen[what, key]} and {path} are {what}: learn from distinct days"
                )
            seen[what, key] = path
    if mixed or len(tapes) < 2:
        return
    tickers = sorted({m["ticker"] for p in paths if (m := _LOBSTER_DAY.fullmatch(Path(p).name))})
    levels = sorted({tape.levels for tape in tapes})
    quoted = [t.messages["price"][t.messages["price"] > 0] for t in tapes]
    prices = [float(np.median(q)) for q in quoted]
    grids = sorted({int(np.gcd.reduce(q)) for q in quoted})
    differ = [
        (len(tickers) > 1, f"are of {len(tickers)} tickers ({', '.join(tickers)})"),
        (len(levels) > 1, f"hold books of {' and '.join(map(str, levels))} levels"),
        (len(grids) > 1, f"quote on grids of {' and '.join(map(str, grids))} ticks"),
        (
            max(prices) > MAX_PRICE_RATIO * min(prices),
            f"trade at prices {max(prices) / min(prices):.1f} times apart (median "
            f"{min(prices):,.0f} and {max(prices):,.0f} ticks)",
        ),
    ]
    for bad, why in differ:
        if bad:
            raise LearnedFlowError(
                f"the days {why}: learn from days of one market, or pass --mixed to pool them"
            )


def learn(
    tape_paths: Sequence[str],
    out: Path,
    *,
    start: float | None,
    end: float | None,
    neural: bool = False,
    minutes: float = 10.0,
    mixed: bool = False,
) -> EventModel | NeuralModel:
    """Learn the flow of the days in ``tape_paths`` (one or more tapes of one market; their
    rates and profile pooled) between ``start`` and ``end`` (seconds after midnight; None:
    each tape's first and last message), with ``neural`` (one tape) its neural variant too
    (trained for at most ``minutes``), and write ``out`` (see `write_learned`; the market on
    the first day's clock and price); ``out`` is checked first
    (`evaluation.market.fit.check_out`), and the days are distinct days of one market
    (`one_market`; ``mixed``: of several, on purpose)."""
    check_out(out, list(tape_paths), learned_files(out, neural))
    if neural:
        torch_or_error()
    tapes = [load_tape(path) for path in tape_paths]
    one_market(tape_paths, tapes, mixed)
    for path, tape in zip(tape_paths, tapes):
        clipped(*day_until(tape, Path(path).stem, end), start, end, Path(path).stem)
    with tqdm(unit="fit", dynamic_ncols=True, desc="decays tried") as bar:

        def tried(decays: tuple[float, ...], likelihood: float) -> None:
            shown = ", ".join(f"{d:g}" for d in decays)
            bar.set_postfix(decays=shown, nats=f"{likelihood:.4f}", refresh=False)
            bar.update(1)

        model = fit_events(tapes, start=start, end=end, progress=tried)
    if neural:
        ev, path = window_events(tapes[0], *model.meta["window"])
        with tqdm(unit="epoch", dynamic_ncols=True, desc="neural flow") as bar:

            def progress(epoch: int, train: float, held_out: float) -> None:
                bar.set_postfix(train=f"{-train:.4f}", held_out=f"{-held_out:.4f}", refresh=False)
                bar.update(1)

            model = fit_neural(model, ev, path, minutes=minutes, progress=progress)
    write_learned(out, model, learned_market(f"{out.stem}.flow.json", tapes[0]))
    return model
