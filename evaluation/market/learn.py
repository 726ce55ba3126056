"""`tradearena learn`: order flow learned from a tape event by event, written as an experiment
file whose market runs it (`envs.simulator.traders.LearnedFlow`), with the model's parameters
beside it (`envs.simulator.learned_flow.parameters`): all three files, or none."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import tomli_w
from tqdm import tqdm

from tradearena.envs.data.load import TapeIdentity, load_tape
from tradearena.envs.data.tapes import Tape
from tradearena.envs.errors import into, replacing, together
from tradearena.envs.simulator.learned_flow.estimate import fit_events
from tradearena.envs.simulator.learned_flow.events import window_events
from tradearena.envs.simulator.learned_flow.model import EventModel
from tradearena.envs.simulator.learned_flow.neural import NeuralModel
from tradearena.envs.simulator.learned_flow.neural_fit import fit_neural, torch_or_error
from tradearena.evaluation.market.fit import check_out, experiment_table
from tradearena.evaluation.market.sources import clock, day_until, tape_day

__all__ = ["learn", "learned_files", "learned_market", "write_learned"]


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
    ``.flow.json`` (and its arrays): every file, or none."""
    from tradearena.agents.saving import project_version

    base = model.base if isinstance(model, NeuralModel) else model
    meta = base.meta
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


def learn(
    tape_paths: Sequence[str],
    out: Path,
    *,
    start: float | None,
    end: float | None,
    neural: bool = False,
    minutes: float = 10.0,
) -> EventModel | NeuralModel:
    """Learn the flow of the days in ``tape_paths`` (one or more tapes of one market; their
    rates and profile pooled) between ``start`` and ``end`` (seconds after midnight; None:
    each tape's first and last message), with ``neural`` (one tape) its neural variant too
    (trained for at most ``minutes``), and write ``out`` (see `write_learned`; the market on
    the first day's clock and price); ``out`` is checked first
    (`evaluation.market.fit.check_out`)."""
    check_out(out, list(tape_paths), learned_files(out, neural))
    if neural:
        torch_or_error()
    tapes = [load_tape(path) for path in tape_paths]
    for path, tape in zip(tape_paths, tapes):
        day_until(tape, Path(path).stem, end)
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
