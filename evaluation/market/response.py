"""How a market answers a market order, measured alike on a tape and in a simulated market
(``tradearena response``): the run, which reads the sources, simulates the markets and writes
the table and figure; the measures are `evaluation.analysis.response`'s, the figure
`evaluation.analysis.response_plots`'.

On the tape: the response after each of its market orders (`envs.data.events`' MARKET
events: a sweep's executions at one time stamp as one order). In a market: the same after
the market orders of a seat that trades every `EVERY` seconds and nothing else, on a random
side, of sizes drawn from the tape's market orders; the market's own flow goes on around it.
A learned flow that reacts as the tape's flow does answers the seat as the tape answers its
own orders: a flow that reads the seats' quotes, or one that does not hear the seat's trades,
does not.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from tradearena.envs.data.events import Events, market_events
from tradearena.envs.data.load import load_tape
from tradearena.envs.data.tapes import Tape
from tradearena.envs.errors import UserError, into, replacing, together
from tradearena.envs.simulator.orders import Kind
from tradearena.envs.simulator.recording import recorded_tape
from tradearena.envs.simulator.response_estimate import size_edges
from tradearena.envs.spec import SYNTHETIC_DAY_STEPS, MarketSpec
from tradearena.evaluation.analysis.response import (
    MIN_ORDERS,
    PASS_SHARE,
    UNITS,
    agreement,
    order_responses,
    response_table,
)
from tradearena.evaluation.market.sources import (
    clipped,
    clock,
    distinct_labels,
    label_of,
    parse_source,
    session_of,
)

__all__ = ["EVERY", "Response", "format_response", "response", "seat_responses", "tape_responses"]

EVERY = 30.0
"""Seconds between a seat's market orders: longer than the longest horizon, so that one
order's response has faded before the next (and is not read into it)."""
_NO_LIMIT = 10**9  # lots: the seat's orders are never cut to a position limit


def _responses(tape: Tape, orders: Events) -> pd.DataFrame:
    """`order_responses` of ``orders`` (MARKET events of ``tape``) in ``tape``'s book."""
    bid, ask = tape.quotes
    return order_responses(tape.messages["time"], bid, ask, orders)


def tape_responses(tape: Tape, start: float, end: float) -> pd.DataFrame:
    """`order_responses` of ``tape``'s market orders from ``start`` to ``end`` (seconds after
    midnight) met with both sides quoted."""
    return _responses(tape, market_events(tape, start, end))


def seat_responses(
    spec: MarketSpec,
    sizes: np.ndarray,
    days: int,
    *,
    start: float | None = None,
    end: float | None = None,
    first_seed: int = 0,
) -> pd.DataFrame:
    """`order_responses` of a seat's market orders in ``days`` sessions of ``spec``'s
    market (seeds ``first_seed`` onwards), from ``start`` to ``end`` (seconds after
    midnight; None: its open, close): one every `EVERY` seconds, on a side and of a size
    (lots) drawn at random (``sizes``: the sizes drawn from, with replacement)."""
    steps = max(spec.day_steps or SYNTHETIC_DAY_STEPS, spec.n_steps or 0)
    day = replace(spec, n_steps=steps, day_steps=None, window_steps=None, tape=None).market(0)
    first, last = clipped(day.open_time, day.close_time, start, end, f"{spec.task} market")
    seated = replace(
        spec,
        step_seconds=EVERY,
        n_steps=max(int((last - first) // EVERY), 1),
        day_steps=None,
        window_steps=None,
        tape=None,
        open_time=first,
        position_limit=_NO_LIMIT,
        record=True,
    )
    market = seated.market(1)
    frames = []
    for seed in range(first_seed, first_seed + days):
        market.reset(seed)
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1,)))
        times = []
        while not market.done:
            side = 1 if rng.random() < 0.5 else -1
            times.append(market.t)
            market.step([[(int(Kind.MARKET), side, 0, int(rng.choice(sizes)))]])
        tape = recorded_tape(market, 1)
        ev = market_events(tape, first, last + EVERY)
        frames.append(_responses(tape, ev.take(np.isin(ev.time, times))))
    return pd.concat(frames, ignore_index=True)


@dataclass(frozen=True)
class Response:
    """What `response` finds: the ``table`` (`evaluation.analysis.response.response_table`),
    the ``tape``'s label and the ``hours`` (HH:MM-HH:MM) its orders were read over, and per
    market (cells whose interval meets the tape's, cells measured on both) (``agree``)."""

    table: pd.DataFrame
    tape: str
    hours: str
    agree: dict[str, tuple[int, int]]


def response(
    tape_name: str,
    markets: Sequence[str],
    *,
    start: float | None = None,
    end: float | None = None,
    days: int = 5,
    out: str | None = None,
) -> Response:
    """The response of the tape ``tape_name`` to its own market orders from ``start`` to
    ``end`` (seconds after midnight; None: its open, close) beside each market's (an
    experiment file or a Gymnasium id, ``days`` sessions over the same hours) to a seat's
    market orders of the tape's sizes (`seat_responses`). With ``out``, also
    ``out``/response.csv and response.png."""
    tape = load_tape(tape_name)
    read = [parse_source(name) for name in markets]
    specs = [market.market() for market in read]
    distinct_labels([tape_name, *markets])
    label = label_of(tape_name)
    first, last = clipped(*session_of(tape), start, end, label)
    responses = {label: tape_responses(tape, first, last)}
    _enough(tape_name, "market orders", responses[label], first, last)
    sizes = responses[label]["size"].to_numpy()
    for market, spec in zip(read, specs):
        responses[market.label] = seat_responses(spec, sizes, days, start=first, end=last)
        _enough(market.name, "market orders of a seat traded", responses[market.label], first, last)
    table = response_table(responses, size_edges(sizes))
    agree = {m: agreement(table, label, m) for m in list(responses)[1:]}
    hours = f"{clock(first)}-{clock(last)}"
    if out is not None:
        from tradearena.evaluation.analysis.response_plots import write_response_figure

        with into(out) as directory, together():
            with replacing(directory / "response.csv") as temporary:
                table.to_csv(temporary, index=False)
            write_response_figure(table, f"{label} {hours}", directory)
    return Response(table, label, hours, agree)


def _enough(name: str, what: str, found: pd.DataFrame, first: float, last: float) -> None:
    """`UserError` naming the source ``name`` when it has fewer than `MIN_ORDERS` orders
    ``found`` (``what`` they are) from ``first`` to ``last``: no response to read from it."""
    if len(found) < MIN_ORDERS:
        raise UserError(
            f"{name}: {len(found)} {what} from {clock(first)} to {clock(last)}, too few to "
            f"read a response from (at least {MIN_ORDERS})"
        )


def format_response(found: Response) -> str:
    """The verdict first (per market, how many of its cells meet the tape's, and whether
    that is `PASS_SHARE` of them), then the table: each size bucket's move (ticks) and
    refill (a share) at each horizon, tape and markets side by side."""
    lines = [f"The response to a market order, {found.tape} {found.hours}:"]
    for market, (met, cells) in found.agree.items():
        needed = math.ceil(PASS_SHARE * cells)
        lines.append(
            f"  {market}: {met} of {cells} figures within the tape's 95% interval, {needed} "
            f"to pass: {'passes' if met >= needed else 'fails'} (a seat's market orders of the "
            "tape's sizes)"
        )
    table = found.table.assign(
        what=lambda t: t.what.map(UNITS),
        cell=lambda t: t.apply(
            lambda r: "n/a" if np.isnan(r.value) else f"{r.value:.2f} [{r.low:.2f}, {r.high:.2f}]",
            axis=1,
        ),
    )
    buckets = list(dict.fromkeys(table.sizes))
    table["sizes"] = pd.Categorical(table.sizes, categories=buckets, ordered=True)
    wide = table.pivot_table(
        index=["what", "horizon", "sizes"],
        columns="source",
        values="cell",
        aggfunc="first",
        observed=True,
    )[list(dict.fromkeys(found.table.source))]
    lines += ["", wide.to_string()]
    return "\n".join(lines)
