"""`tradearena fit --model events`: order flow learned from a tape event by event, written as
an experiment file whose market runs it (`envs.simulator.traders.LearnedFlow`), with the
model's parameters beside it (JSON and arrays, `envs.simulator.eventmodel.EventModel.save`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tomli_w

from tradearena.envs.data.load import load_tape
from tradearena.envs.errors import into, replacing
from tradearena.envs.simulator.eventmodel import EventModel, fit_events
from tradearena.evaluation.market.fit import experiment_table

__all__ = ["learn", "learned_market", "write_learned"]


def learned_market(model_file: str, tape_path: str) -> dict[str, Any]:
    """The ``[market]`` table of a market of the learned flow in ``model_file`` (a path the
    experiment file reads relative to its folder), on the clock, tick and price of the day
    in ``tape_path``: the making task, one-hour sessions of one-minute steps in its day."""
    from tradearena.evaluation.market.realism import read_source

    day = read_source(tape_path, 1).days[0]
    mids = (day.bid + day.ask) / 2
    first = mids[mids == mids][0]
    return {
        "task": "making",
        "tick_size": day.tick_size,
        "initial_price": int(round(float(first))),
        "open_time": float(day.open),
        "n_steps": 60,
        "day_steps": max(int(round((day.close - day.open) / 60)), 1),
        "traders": [{"type": "LearnedFlow", "model": model_file}],
    }


def write_learned(path: Path, model: EventModel, market: Mapping[str, Any]) -> Path:
    """``path``: an experiment file (the quickstart's agents on the learned market), its
    header saying what was learned from what; the model beside it as ``path``'s stem +
    ``.flow.json`` and ``.flow.npz``."""
    from tradearena.agents.saving import project_version
    from tradearena.evaluation.market.realism import clock

    meta = model.meta
    lo, hi = meta["window"]
    decays = ", ".join(f"{d:g}" for d in model.decays)
    lines = [
        f"# Order flow learned from {Path(meta['tape']).name} by `tradearena fit --model events`",
        f"# (a queue-reactive point process with Hawkes excitation, maximum likelihood): "
        f"{meta['events']:,} events",
        f"# from {clock(lo)} to {clock(hi)}, log-likelihood {meta['log_likelihood_per_event']:.4f} "
        f"nats per event, decays {decays} per second,",
        f"# branching {model.branching:.3f}, {len(meta['pooled'])} sparse states pooled with "
        f"a neighbour (listed in the .flow.json); tradearena {project_version()}.",
    ]
    with into(path.parent), replacing(path) as temporary:
        model.save(path.parent / f"{path.stem}.flow.json")
        text = tomli_w.dumps(experiment_table(path.stem, market))
        temporary.write_text("\n".join(lines) + "\n\n" + text)
    return path


def learn(tape_path: str, out: Path, *, start: float | None, end: float | None) -> EventModel:
    """Learn the flow of the day in ``tape_path`` between ``start`` and ``end`` (seconds
    after midnight; None: the tape's first and last message) and write ``out`` (see
    `write_learned`)."""
    model = fit_events(load_tape(tape_path), start=start, end=end)
    write_learned(out, model, learned_market(f"{out.stem}.flow.json", tape_path))
    return model
