"""`tradearena fit --model events|neural`: order flow learned from a tape event by event,
written as an experiment file whose market runs it (`envs.simulator.traders.LearnedFlow`), with the
model's parameters beside it (JSON and arrays, `envs.simulator.eventmodel.EventModel.save`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tomli_w
from tqdm import tqdm

from tradearena.envs.data.load import load_tape
from tradearena.envs.errors import into, replacing
from tradearena.envs.simulator.eventmodel import EventModel, fit_events, window_events
from tradearena.envs.simulator.neuralflow import NeuralModel
from tradearena.evaluation.market.fit import experiment_table
from tradearena.evaluation.market.neural import fit_neural, torch_or_error

__all__ = ["learn", "learned_market", "write_learned"]


def learned_market(model_file: str, tape_path: str) -> dict[str, Any]:
    """The ``[market]`` table of a market of the learned flow in ``model_file`` (a path the
    experiment file reads relative to its folder), on the clock, tick and price of the day
    in ``tape_path``: the making task, one-hour sessions of one-minute steps in its day (the
    whole day when it is shorter)."""
    from tradearena.evaluation.market.realism import read_source

    day = read_source(tape_path, 1).days[0]
    mids = (day.bid + day.ask) / 2
    first = mids[mids == mids][0]
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


def write_learned(path: Path, model: EventModel | NeuralModel, market: Mapping[str, Any]) -> Path:
    """``path``: an experiment file (the quickstart's agents on the learned market), its
    header saying what was learned from what; the model beside it as ``path``'s stem +
    ``.flow.json`` (and its arrays)."""
    from tradearena.agents.saving import project_version
    from tradearena.evaluation.market.realism import clock

    base = model.base if isinstance(model, NeuralModel) else model
    meta = base.meta
    lo, hi = meta["window"]
    decays = ", ".join(f"{d:g}" for d in base.decays)
    lines = [
        f"# Order flow learned from {Path(meta['tape']).name} by `tradearena fit --model "
        f"{'neural' if base is not model else 'events'}`",
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
    with into(path.parent), replacing(path) as temporary:
        model.save(path.parent / f"{path.stem}.flow.json")
        text = tomli_w.dumps(experiment_table(path.stem, market))
        temporary.write_text("\n".join(lines) + "\n\n" + text)
    return path


def learn(
    tape_path: str,
    out: Path,
    *,
    start: float | None,
    end: float | None,
    neural: bool = False,
    minutes: float = 10.0,
) -> EventModel | NeuralModel:
    """Learn the flow of the day in ``tape_path`` between ``start`` and ``end`` (seconds
    after midnight; None: the tape's first and last message), with ``neural`` its neural
    variant too (trained for at most ``minutes``), and write ``out`` (see `write_learned`)."""
    if neural:
        torch_or_error()
    tape = load_tape(tape_path)
    model = fit_events(tape, start=start, end=end)
    if neural:
        ev, path = window_events(tape, *model.meta["window"])
        with tqdm(unit="epoch", dynamic_ncols=True, desc="neural flow") as bar:

            def progress(epoch: int, train: float, held_out: float) -> None:
                bar.set_postfix(train=f"{-train:.4f}", held_out=f"{-held_out:.4f}", refresh=False)
                bar.update(1)

            model = fit_neural(model, ev, path, minutes=minutes, progress=progress)
    write_learned(out, model, learned_market(f"{out.stem}.flow.json", tape_path))
    return model
