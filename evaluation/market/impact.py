"""The impact scorecard (``tradearena impact``): how a market answers a seat's own trading,
held to what real markets do.

A seat trades in each market of a tape over the tape's judged hours, on scripts drawn up
front from the tape (the same scripts in every market):

- metaorders (`metaorder_scripts`): child market orders over a duration T (5 to 30 minutes)
  at a participation of 0.1% to 10% of the tape's volume over it, half spread evenly in time
  (TWAP), half following the tape's volume (participation rate), at random starts; each
  session is run twice, with the seat and without (the same seed), and the impact is the
  difference of the two mids in the metaorder's direction, so that the tape's own moves
  cancel out;
- single market orders (`single_scripts`), one a session, of the tape's sizes, at random
  times, recorded with and without them: the mid's move after each against the same session
  without it, and the time the spread took to close again after those that emptied the best;
- a seat quoting a small order at the best bid and ask, re-quoted every `QUOTE_EVERY`
  seconds, recorded: its passive fills and the mid's move after them;
- a seat that never trades (it holds, then it quotes far from the touch);
- round trips (buy Q over T, sell it over T) and pump-and-dumps (buy Q over T / 5, sell it
  over T).

The checks (`evaluation.analysis.impact.CHECKS`) set these against the tape's own figures over
the same hours (its bare propagator by size, its refill times, its passive fills' mark-outs)
and the literature's (the square-root law, the relaxation after a metaorder): each with its
value, a 95% bootstrap interval where it has one, and its target.
"""

from __future__ import annotations

import math
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from tradearena.envs.data.load import load_tape, require_book
from tradearena.envs.data.tapes import Event, Tape
from tradearena.envs.errors import UserError, into, replacing, together
from tradearena.envs.simulator.flow import advance
from tradearena.envs.simulator.orders import Kind
from tradearena.envs.simulator.recording import recorded_tape
from tradearena.envs.simulator.response_estimate import (
    bare_propagator,
    market_orders,
    refill_times,
    size_edges,
    size_scale,
)
from tradearena.envs.spec import MarketSpec
from tradearena.evaluation.analysis.impact import (
    CHECKS,
    decay_exponent,
    ks_p,
    mean_interval,
    ratio_of_means,
    relaxation,
    square_root_law,
)
from tradearena.evaluation.experiment.parallel import Executor, Study
from tradearena.evaluation.experiment.store import JobResult
from tradearena.evaluation.market.sources import (
    LearnedHours,
    clipped,
    clock,
    held_out,
    parse_source,
    session_of,
)

__all__ = [
    "COLUMNS",
    "MARKS",
    "MAX_METAORDERS",
    "MIN_METAORDERS",
    "Impact",
    "Metaorder",
    "Script",
    "TapeFacts",
    "format_impact",
    "impact",
    "impact_job",
    "market_on",
    "metaorder_scripts",
    "run_scripts",
    "single_scripts",
    "tape_facts",
    "trip_scripts",
]

STEP = 1.0
"""Seconds per decision step of a scripted session: a child order's time, a mark's."""
MARKS = np.array([0.25, 0.5, 0.75, 1.0, 1.1, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0])
"""Times a metaorder's impact is read at, in durations T after its start (1: its end)."""
DURATIONS = (300.0, 1800.0)
"""A metaorder's duration, seconds: drawn uniformly in log between these."""
PARTICIPATION = (0.001, 0.1)
"""A metaorder's share of the tape's volume over it: drawn uniformly in log between these."""
GRID = 60.0
"""Seconds between the times a scripted session may start."""
MIN_METAORDERS, MAX_METAORDERS = 20, 20_000
"""The fewest and most metaorders a scorecard takes (``--metaorders``)."""
TRIPS = 100
"""Round trips, and pump-and-dumps, per market."""
TRIP_SECONDS = 600.0
"""A round trip's buying (and its selling) time T, seconds."""
TRIP_PARTICIPATION = 0.05
"""A round trip's share of the tape's volume over its buying time."""
SINGLES = 400
"""Single market orders per market, each in a session of its own."""
SINGLE_SECONDS = 300.0
"""Seconds a single order's session runs after it: a refill is looked for as long."""
QUOTE_EVERY = 10.0
"""Seconds between the quoting seat's looks at the book (it re-quotes at the best)."""
LAGS = 10
"""Market orders after a single one its response is read over (1 and 10 are checked)."""
MARKOUTS = (1.0, 10.0)
"""Seconds after a passive fill its mark-out is read."""
QUOTE_SESSIONS = 4
"""Sessions (seeds) of the quoting seat per market."""
CHUNK = 40
"""Scripts per job."""
COLUMNS = (
    "market",
    "check",
    "value",
    "low",
    "high",
    "target_low",
    "target_high",
    "holds",
)
"""impact.csv's columns: the market, the check (`CHECKS`), its value and 95% interval (NaN
where it has none), its target and whether the value meets it."""
_NO_LIMIT = 10**9  # lots: a scripted seat is never cut to a position limit


# ------------------------------------------------------------------------------- the tape
@dataclass(frozen=True)
class TapeFacts:
    """The judged hours ``first`` to ``last`` (seconds after midnight) of a tape, as the
    scorecard reads them: ``sigma`` (the day's volatility of the mid, ticks, from its
    5-minute returns over the hours), ``volume`` (the day's traded lots, from the hours'),
    ``child`` (the median market order, lots: a metaorder's child), ``quote`` (the lower
    decile of its market orders, lots: the quoting seat's order, small, so that its own order
    barely changes the queue it joins), ``sizes`` (its market orders' sizes, lots),
    ``clock`` (times and cumulative lots traded: every execution), ``edges`` (size buckets,
    `size_edges`), ``propagator`` (its bare propagator by bucket, ticks, (buckets, `LAGS`)),
    ``refill`` (seconds its flow took to close the spread after its market orders that
    emptied the best level) and ``passive`` (its passive fills)."""

    first: float
    last: float
    sigma: float
    volume: float
    child: int
    quote: int
    sizes: np.ndarray
    clock: tuple[np.ndarray, np.ndarray]
    edges: np.ndarray
    propagator: np.ndarray
    refill: np.ndarray
    passive: PassiveFills

    def traded(self, start: float, end: float) -> float:
        """Lots traded on the tape from ``start`` to ``end`` (seconds after midnight)."""
        times, cumulative = self.clock
        at = np.searchsorted(times, [start, end], side="left")
        return float(np.r_[0.0, cumulative][at[1]] - np.r_[0.0, cumulative][at[0]])


@dataclass(frozen=True)
class PassiveFills:
    """Passive fills, shape (n,) each: ``time`` (seconds after midnight), ``ahead`` (lots
    ahead of the order when it joined its level; NaN where the rows do not show it) and
    ``moves`` (n, len(`MARKOUTS`)): the mid's move against the filled order's side (ticks:
    positive when the maker lost) each horizon after the fill."""

    time: np.ndarray
    ahead: np.ndarray
    moves: np.ndarray


def passive_fills(
    tape: Tape, first: float, last: float, ids: set[int] | None = None
) -> PassiveFills:
    """The visible executions at ``first <= time < last`` of orders ``tape`` placed itself
    (those of ``ids`` only, when given): how much was ahead of each when it joined (its
    level's lots in the row before, 0 for a new best price, NaN when the row does not show
    it) and its mark-outs (`PassiveFills`)."""
    m, rows, mids = tape.messages, tape.book_rows, tape.mids
    kind, order_id, time = m["type"], m["order_id"], m["time"]
    new = np.flatnonzero(kind == Event.NEW)
    if ids is not None:
        new = new[np.isin(order_id[new], list(ids))]
    placed = dict(zip(order_id[new].tolist(), new.tolist()))
    fills = np.flatnonzero(
        (kind == Event.EXECUTE) & (time >= first) & (time < last) & np.isin(order_id, list(placed))
    )
    ahead = np.array([_ahead(m, rows, placed[int(order_id[i])]) for i in fills], float)
    side = m["direction"][fills].astype(float)
    before = mids[np.maximum(fills - 1, 0)]
    moves = (
        np.column_stack(
            [
                side * (before - mids[np.searchsorted(time, time[fills] + h, side="right") - 1])
                for h in MARKOUTS
            ]
        )
        if len(fills)
        else np.zeros((0, len(MARKOUTS)))
    )
    return PassiveFills(time[fills], ahead, moves)


def _ahead(messages: np.ndarray, rows: np.ndarray, new: int) -> float:
    """Lots ahead of the order placed by message ``new`` at its level: the level's lots in the
    row before, 0 when it set a new best price, NaN when the row does not show its price."""
    if new == 0:
        return math.nan
    side, price = int(messages["direction"][new]), int(messages["price"][new])
    row = rows[new - 1]
    column = 2 if side > 0 else 0
    levels = len(row) // 4
    prices, lots = row[column::4][:levels], row[column + 1 :: 4][:levels]
    if lots[0] == 0 or side * (price - prices[0]) > 0:
        return 0.0
    hit = np.flatnonzero((prices == price) & (lots > 0))
    return float(lots[hit[0]]) if len(hit) else math.nan


def tape_facts(tape: Tape, first: float, last: float) -> TapeFacts:
    """The `TapeFacts` of ``tape``'s hours ``first`` to ``last``; a `UserError` when they
    hold too few market orders to read the tape's response from."""
    orders = market_orders(tape, first, last)
    if len(orders) < 4 * LAGS:
        raise UserError(
            f"{Path(tape.source).name}: {len(orders)} market orders from {clock(first)} to "
            f"{clock(last)}, too few to read the tape's response from (at least {4 * LAGS})"
        )
    open_, close = session_of(tape)
    day, hours = close - open_, last - first
    time, mids = tape.messages["time"], tape.mids
    five = np.arange(first, last + 1e-9, 300.0)
    at = mids[np.maximum(np.searchsorted(time, five, side="right") - 1, 0)]
    returns = np.diff(at)
    sigma = float(np.sqrt(np.nansum(returns**2) * day / hours))
    executed = np.isin(tape.messages["type"], (Event.EXECUTE, Event.EXECUTE_HIDDEN))
    clock_times = time[executed]
    cumulative = np.cumsum(tape.messages["size"][executed].astype(float))
    inside = (clock_times >= first) & (clock_times < last)
    volume = float(tape.messages["size"][executed][inside].sum()) * day / hours
    edges = size_edges(orders.size)
    lags = min(5 * LAGS, (len(orders) - 1) // 3)
    pooled = bare_propagator(orders.sign, orders.mid, lags)[:LAGS]
    propagator = size_scale(orders, edges)[:, None] * pooled[None, :]
    emptied, _ = refill_times(tape, orders)
    return TapeFacts(
        first=first,
        last=last,
        sigma=sigma,
        volume=volume,
        child=max(int(np.median(orders.size)), 1),
        quote=max(int(np.quantile(orders.size, 0.1)), 1),
        sizes=orders.size,
        clock=(clock_times, cumulative),
        edges=edges,
        propagator=propagator,
        refill=emptied,
        passive=passive_fills(tape, first, last),
    )


# ---------------------------------------------------------------------------- the scripts
@dataclass(frozen=True)
class Script:
    """A scripted seat's session: it opens at ``start`` (seconds after midnight) for
    ``steps`` steps of `STEP` seconds and sends, at the start of step ``at[i]``, a market
    order of ``lots[i]`` on ``side[i]`` (+1 buy)."""

    start: float
    steps: int
    at: np.ndarray
    side: np.ndarray
    lots: np.ndarray

    def orders(self) -> dict[int, list[tuple[int, int, int, int]]]:
        """Step -> the seat's orders then (`envs.simulator.orders.SeatOrder` s)."""
        out: dict[int, list] = {}
        for step, side, lots in zip(self.at.tolist(), self.side.tolist(), self.lots.tolist()):
            out.setdefault(step, []).append((int(Kind.MARKET), side, 0, lots))
        return out


@dataclass(frozen=True)
class Metaorder:
    """A metaorder: ``side`` (+1 buy), ``lots`` in all over ``duration`` seconds,
    ``participation`` of the tape's volume over it, ``kind`` ("twap" or "pov") and the
    `Script` that sends its child orders (its session lasts 3 durations)."""

    side: int
    lots: int
    duration: float
    participation: float
    kind: str
    script: Script


def metaorder_scripts(facts: TapeFacts, n: int, seed: int = 0) -> list[Metaorder]:
    """``n`` metaorders over ``facts``' hours, half TWAP, half participation-rate (module
    docstring), their starts on a `GRID`-second grid so that sessions share their warm-ups."""
    rng = np.random.default_rng(seed)
    hours = facts.last - facts.first
    out = []
    for i in range(n):
        duration = float(np.round(np.exp(rng.uniform(*np.log(DURATIONS)))))
        duration = min(duration, math.floor((hours - GRID) / 3))
        start = _start(facts, 3 * duration, rng, "three times a metaorder")
        participation = float(np.exp(rng.uniform(*np.log(PARTICIPATION))))
        side = 1 if rng.random() < 0.5 else -1
        traded = facts.traded(start, start + duration)
        lots = max(int(round(participation * traded)), 1)
        sizes = _split(lots, facts.child)
        children = len(sizes)
        kind = "twap" if i % 2 == 0 else "pov"
        if kind == "twap":
            at = (np.arange(children) + 0.5) * duration / children
        else:  # each child once the tape has traded its share of the volume
            times, cumulative = facts.clock
            before = np.r_[0.0, cumulative][np.searchsorted(times, start, side="left")]
            due = before + traded * np.arange(1, children + 1) / children
            reached = np.minimum(np.searchsorted(cumulative, due, side="left"), len(times) - 1)
            at = times[reached] - start
        steps = np.clip(np.floor(at / STEP).astype(np.int64), 0, int(duration / STEP) - 1)
        script = Script(start, int(3 * duration / STEP) + 1, steps, np.full(children, side), sizes)
        out.append(Metaorder(side, lots, duration, participation, kind, script))
    return out


def trip_scripts(facts: TapeFacts, n: int, *, pump: bool, seed: int = 0) -> list[Script]:
    """``n`` round trips (buy Q over `TRIP_SECONDS`, then sell it over as long) or, with
    ``pump``, pump-and-dumps (buy Q over a fifth of it, then sell it over all of it), Q
    `TRIP_PARTICIPATION` of the tape's volume over the buying time, at random starts."""
    rng = np.random.default_rng(seed)
    buy = TRIP_SECONDS / 5 if pump else TRIP_SECONDS
    sell = TRIP_SECONDS
    out = []
    for _ in range(n):
        start = _start(facts, buy + sell, rng, "a round trip")
        lots = max(int(round(TRIP_PARTICIPATION * facts.traded(start, start + TRIP_SECONDS))), 1)
        sizes = _split(lots, facts.child)
        children = len(sizes)
        buys = np.floor((np.arange(children) + 0.5) * buy / children / STEP)
        sells = np.floor((buy + (np.arange(children) + 0.5) * sell / children) / STEP)
        out.append(
            Script(
                start,
                int((buy + sell) / STEP) + 1,
                np.concatenate([buys, sells]).astype(np.int64),
                np.repeat([1, -1], children),
                np.concatenate([sizes, sizes]),
            )
        )
    return out


def single_scripts(facts: TapeFacts, n: int, seed: int = 0) -> list[Script]:
    """``n`` sessions of one market order each, of a size drawn from the tape's market
    orders, on a random side, at a random second of a random minute of ``facts``' hours; each
    session runs `SINGLE_SECONDS` after it."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        start = _start(facts, GRID + SINGLE_SECONDS, rng, "a single order's session")
        at = int(rng.integers(0, int(GRID / STEP)))
        side, lots = (1 if rng.random() < 0.5 else -1), int(rng.choice(facts.sizes))
        steps = at + int(SINGLE_SECONDS / STEP) + 1
        out.append(Script(start, steps, np.array([at]), np.array([side]), np.array([lots])))
    return out


def _start(facts: TapeFacts, seconds: float, rng: np.random.Generator, what: str) -> float:
    """A random start on the `GRID` of a session of ``seconds`` that fits in ``facts``'
    hours; a `UserError` naming ``what`` when none does."""
    room = facts.last - facts.first - seconds - 2 * STEP
    if room < 0:
        raise UserError(
            f"the hours {clock(facts.first)}-{clock(facts.last)} are shorter than {what} "
            f"({seconds / 60:g} minutes)"
        )
    return facts.first + GRID * math.floor(rng.uniform(0, room) / GRID)


def _split(lots: int, child: int) -> np.ndarray:
    """``lots`` as child orders of ``child`` lots, the last one what is left (int64)."""
    sizes = np.full(math.ceil(lots / child), child, np.int64)
    sizes[-1] = lots - child * (len(sizes) - 1)
    return sizes


# ---------------------------------------------------------------------------- the sessions
def session_spec(spec: MarketSpec, start: float, steps: int, step: float = STEP) -> MarketSpec:
    """``spec``'s market as a session of ``steps`` steps of ``step`` seconds opening at
    ``start`` (seconds after midnight; a whole step of a replayed tape's day), with no
    position limit."""
    seat = {"step_seconds": step, "n_steps": steps, "position_limit": _NO_LIMIT}
    if spec.replays_file:
        day_open = math.floor(float(spec.replayed_tape().messages["time"][0]))
        k = int(round((start - day_open) / step))
        return replace(spec, **seat, window_steps=(k, k))
    return replace(spec, **seat, day_steps=None, window_steps=None, open_time=start)


@dataclass(frozen=True)
class Played:
    """What a scripted session left: the ``mids`` (ticks, (steps + 1,): at the open and
    after each step), the seat's ``cash`` (ticks x lots) and ``inventory`` (lots) and, when
    recorded, its ``tape`` (the level-1 tape of its book's changes)."""

    mids: np.ndarray
    cash: int
    inventory: int
    tape: Tape | None = None


def run_scripts(
    spec: MarketSpec,
    scripts: Sequence[Script],
    seeds: Sequence[int],
    *,
    seat: bool = True,
    record: bool = False,
) -> list[Played]:
    """Each of ``scripts`` in ``spec``'s market (`session_spec`), seed ``seeds[i]``, its
    orders sent (or, without ``seat``, none: the same session as the seat would have met it
    had it held), all stepped together; with ``record``, each session's tape too."""
    markets = []
    for script, seed in zip(scripts, seeds):
        session = session_spec(spec, script.start, script.steps)
        market = replace(session, record=record).market(1)
        market.reset(seed)
        markets.append(market)
    plans = [script.orders() if seat else {} for script in scripts]
    live = list(range(len(markets)))
    step = 0
    while live:
        batch = [markets[i] for i in live]
        orders = [[plans[i].get(step, [])] for i in live]
        advance(batch, orders, np.empty((len(batch), 1)))
        step += 1
        live = [i for i in live if not markets[i].done]
    return [
        Played(
            m.mids().copy(),
            m.account(0).cash,
            m.account(0).inventory,
            recorded_tape(m, 1) if record else None,
        )
        for m in markets
    ]


# ----------------------------------------------------------------------------- the markets
REPLAYS = {"replay": False, "responsive": True}
"""The names that stand for the tape's own replays: plain, and answering the seats."""


def market_on(
    name: str, tape_name: str, learned: tuple[float, float] | None
) -> tuple[MarketSpec, str]:
    """The market ``name`` names on the tape ``tape_name``, and its label: "replay" (the
    plain replay of the tape), "responsive" (its responsive replay, its answer estimated from
    the hours ``learned``, [first, last] seconds after midnight, or the whole tape when None),
    an experiment file (``.toml``: its ``[market]``) or a Gymnasium id; a market that replays
    another tape is a `UserError`."""

    if name in REPLAYS:
        if REPLAYS[name] and learned is None:
            raise UserError(
                f"{name}: the responsive replay learns how the tape answers a trade from the "
                "hours before those judged: give --from (HH:MM) a minute or more after the open"
            )
        spec = MarketSpec(tape=tape_name, responsive=REPLAYS[name], response_hours=learned)
        return spec, name
    found = parse_source(name)
    if found.spec is None:
        raise UserError(
            f"MARKET {name}: a file that is not an experiment file (.toml); give the tape first, "
            f"then markets: {', '.join(REPLAYS)}, experiment files or Gymnasium ids"
        )
    spec = found.spec
    if spec.replays_file and Path(str(spec.tape)).resolve() != Path(tape_name).resolve():
        raise UserError(
            f"{name}: replays {spec.tape}, not the tape judged ({tape_name}); its scorecard "
            "is read on its own tape"
        )
    return spec, found.label


def _held_out(name: str, spec: MarketSpec, first: float, last: float) -> None:
    """A `UserError` when ``spec`` is a responsive replay whose answer was estimated from
    the hours judged, ``first`` to ``last`` (seconds after midnight; `held_out`)."""
    if spec.responsive:
        hours = spec.response_hours or (0.0, 86_400.0)  # None: the whole tape
        held_out(LearnedHours(*hours, (), f"{name}'s response_hours"), first, last)


# ------------------------------------------------------------------------------ the jobs
@dataclass(frozen=True)
class Work:
    """One impact job's work: ``what`` ("metaorders", "trips", "singles", "quotes", "null")
    in the market ``spec`` over the tape's ``facts``, with its ``scripts`` and ``seeds``."""

    what: str
    spec: MarketSpec
    facts: TapeFacts
    scripts: tuple = ()
    seeds: tuple = ()


def impact_job(job: Study[Work]) -> JobResult:
    """Carry out ``job.work``; its one record is what the work measured."""
    began = time.perf_counter()
    work = job.work
    try:
        measured = _MEASURES[work.what](work)
    except Exception:  # noqa: BLE001 - reported with the market and work it failed for
        return JobResult(job.id, job.seed, (), time.perf_counter() - began, traceback.format_exc())
    return JobResult(job.id, job.seed, (measured,), time.perf_counter() - began)


def _metaorders(work: Work) -> np.ndarray:
    """Each metaorder's impact (ticks, in its direction) at each of `MARKS`: (m, marks)."""
    seated = run_scripts(work.spec, [m.script for m in work.scripts], work.seeds)
    alone = run_scripts(work.spec, [m.script for m in work.scripts], work.seeds, seat=False)
    out = np.empty((len(work.scripts), len(MARKS)))
    for i, (order, a, b) in enumerate(zip(work.scripts, seated, alone)):
        at = np.minimum(np.round(MARKS * order.duration / STEP).astype(np.int64), len(a.mids) - 1)
        out[i] = order.side * (a.mids[at] - b.mids[at])
    return out


def _trips(work: Work) -> np.ndarray:
    """Each script's P&L, ticks x lots (the seat ends flat: its cash)."""
    played = run_scripts(work.spec, work.scripts, work.seeds)
    return np.array([p.cash + p.inventory * p.mids[-1] for p in played], float)


def _hours_session(work: Work, every: float, seed: int):
    """A recorded market of ``work.spec`` over the tape's hours in steps of ``every``."""
    steps = max(int((work.facts.last - work.facts.first) // every), 1)
    spec = replace(session_spec(work.spec, work.facts.first, steps, every), record=True)
    market = spec.market(1)
    market.reset(seed)
    return market


def _singles(work: Work) -> np.ndarray:
    """Each single market order (a session of its own, `single_scripts`), one row: its size
    bucket, whether it emptied the best level, the seconds the spread took to close again
    after it (NaN when it did not empty it), its mid's move in its direction against the same
    session without it after 1 .. `LAGS` of the market's other market orders (ticks; NaN
    where the session held fewer)."""
    seated = run_scripts(work.spec, work.scripts, work.seeds, record=True)
    alone = run_scripts(work.spec, work.scripts, work.seeds, seat=False, record=True)
    rows = np.full((len(work.scripts), 3 + LAGS), np.nan)
    for i, (script, a, b) in enumerate(zip(work.scripts, seated, alone)):
        sent = script.start + script.at[0] * STEP
        orders = market_orders(a.tape, sent, math.inf)
        mine = orders.time == sent
        if not mine.any():  # met a side empty
            continue
        single = orders.take(mine & (np.cumsum(mine) == 1))
        others = orders.time[~mine][:LAGS]
        gap = _mid_gap(a.tape, b.tape)
        moves = single.sign[0] * (gap(others) - gap(np.array([sent]))[0])
        rows[i, 0] = np.searchsorted(work.facts.edges, single.size[0], side="left")
        rows[i, 1] = single.emptied[0]
        if single.emptied[0]:
            rows[i, 2] = refill_times(a.tape, single)[0][0]
        rows[i, 3 : 3 + len(moves)] = moves
    return rows[np.isfinite(rows[:, 0])]


def _mid_gap(seated: Tape, alone: Tape):
    """The seated session's mid less the one without the seat, just before given times."""

    def before(tape: Tape, times: np.ndarray) -> np.ndarray:
        row = np.searchsorted(tape.messages["time"], times, side="left") - 1
        return np.where(row >= 0, tape.mids[np.maximum(row, 0)], np.nan)

    return lambda times: before(seated, np.atleast_1d(times)) - before(alone, np.atleast_1d(times))


def _quotes(work: Work) -> np.ndarray:
    """The quoting seat's passive fills, one row each: lots ahead of its order when placed,
    then its mark-outs (ticks, `MARKOUTS`)."""
    market = _hours_session(work, QUOTE_EVERY, work.seeds[0])
    mine: set[int] = set()
    while not market.done:
        bid, ask = market.book.best_bid(), market.book.best_ask()
        orders = (
            []
            if bid is None or ask is None
            else [
                (int(Kind.QUOTE), 1, bid[0], work.facts.quote),
                (int(Kind.QUOTE), -1, ask[0], work.facts.quote),
            ]
        )
        market.step([orders])
        mine.update(order[0] for order in market.book.owned(0))
    fills = passive_fills(recorded_tape(market, 5), work.facts.first, math.inf, mine)
    return np.column_stack([fills.ahead, fills.moves])


def _null(work: Work) -> np.ndarray:
    """How many of the market's book changes differ from its reference's with a seat that
    never trades: one that holds, then one that quotes far from the touch (the reference: the
    plain replay of the tape with the same seat, or the market with no seat at all)."""
    steps = max(int((work.facts.last - work.facts.first) // NULL_STEP), 1)
    out = []
    for far in (False, True):
        logs = []
        for spec, seats in _null_pair(work.spec):
            quotes: set[int] = set()
            recording = replace(session_spec(spec, work.facts.first, steps, NULL_STEP), record=True)
            market = recording.market(seats)
            market.reset(work.seeds[0])
            while not market.done:
                market.step([_far_quotes(market.last_mid)] if far and seats else [])
                if far and seats:
                    quotes.update(order[0] for order in market.book.owned(0))
            logs.append([row for row in market.book.log if row[2] not in quotes])
        out.append(_differences(*logs))
    return np.array(out, float)


NULL_STEP = 60.0
"""Seconds between the null seat's looks at the book."""


def _far_quotes(mid: float) -> list[tuple[int, int, int, int]]:
    """One lot bid at half ``mid`` and asked at half again (ticks): never touched."""
    return [
        (int(Kind.QUOTE), 1, max(int(mid * 0.5), 1), 1),
        (int(Kind.QUOTE), -1, int(mid * 1.5) + 1, 1),
    ]


def _null_pair(spec: MarketSpec) -> list[tuple[MarketSpec, int]]:
    """The market with its seat, and its reference: (spec, seats) each."""
    if spec.replays_file:
        return [(spec, 1), (replace(spec, responsive=False), 1)]
    return [(spec, 1), (spec, 0)]


def _differences(with_seat: list, reference: list) -> int:
    """Book changes of ``with_seat`` that are not ``reference``'s, position by position, and
    the length either has over the other; orders named by the order they first appear in
    (a seat's own orders, left out, still took ids from the book)."""
    same = sum(a == b for a, b in zip(_renamed(with_seat), _renamed(reference)))
    return max(len(with_seat), len(reference)) - same


def _renamed(log: list) -> list[tuple]:
    """``log``'s messages with each order id replaced by its order of first appearance."""
    names: dict[int, int] = {}
    return [(t, kind, names.setdefault(oid, len(names)), *rest) for t, kind, oid, *rest in log]


_MEASURES = {
    "metaorders": _metaorders,
    "trips": _trips,
    "singles": _singles,
    "quotes": _quotes,
    "null": _null,
}


# -------------------------------------------------------------------------------- judging
@dataclass(frozen=True)
class Impact:
    """The scorecard: ``table`` (`COLUMNS`), the ``tape``'s label and judged ``hours``
    (HH:MM-HH:MM), and per market what the figure draws: its metaorders'
    (Q / V_D, I(T) / sigma_D), its mean relaxation curve (impact at `MARKS` over the impact
    at the end) and its single orders' response by lag over the tape's."""

    table: pd.DataFrame
    tape: str
    hours: str
    metaorders: int
    curves: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    propagator: np.ndarray = field(default_factory=lambda: np.zeros(LAGS))


def impact(
    tape_name: str,
    markets: Sequence[str],
    *,
    executor: Executor,
    start: float | None = None,
    end: float | None = None,
    metaorders: int = 1000,
    singles: int = SINGLES,
    trips: int = TRIPS,
    seed: int = 0,
    out: str | None = None,
) -> Impact:
    """The scorecard of each of ``markets`` (`market_on`) on the tape ``tape_name``'s hours
    ``start`` to ``end`` (seconds after midnight; None: its open, close) with ``metaorders``
    metaorders, ``singles`` single orders and ``trips`` round trips and pump-and-dumps each,
    on ``executor``. With ``out``, also ``out``/impact.csv and impact.png."""
    if not MIN_METAORDERS <= metaorders <= MAX_METAORDERS:
        raise UserError(
            f"--metaorders {metaorders}: give {MIN_METAORDERS:,} to {MAX_METAORDERS:,} (the "
            "square-root law is fitted over them; 1,000 a day is the scorecard's)"
        )
    tape = load_tape(tape_name)
    require_book(tape, "the impact scorecard")
    label = Path(tape_name).stem
    first, last = clipped(*session_of(tape), start, end, label)
    facts = tape_facts(tape, first, last)
    learned = (session_of(tape)[0], first) if first - session_of(tape)[0] >= GRID else None
    specs = {name: market_on(name, tape_name, learned) for name in markets}
    for name, (spec, _) in specs.items():
        _held_out(name, spec, first, last)
    orders = metaorder_scripts(facts, metaorders, seed)
    round_trips = {pump: trip_scripts(facts, trips, pump=pump, seed=seed + 1) for pump in (0, 1)}
    single_orders = single_scripts(facts, singles, seed + 2)
    jobs = []
    for name, (spec, _) in specs.items():
        jobs += _chunks(name, "metaorders", spec, facts, orders, seed)
        for pump in (0, 1):
            jobs += _chunks(name, "pump" if pump else "trips", spec, facts, round_trips[pump], seed)
        jobs += _chunks(name, "singles", spec, facts, single_orders, seed)
        jobs += [
            Study(f"{name}|quotes|{s}", s, Work("quotes", spec, facts, (), (seed + s,)))
            for s in range(QUOTE_SESSIONS)
        ]
        jobs.append(Study(f"{name}|null|0", 0, Work("null", spec, facts, (), (seed,))))
    results = {}
    for result in executor.run(jobs):
        if result.error is not None:
            name, what, _ = result.job_id.split("|")
            last_line = result.error.strip().splitlines()[-1]
            raise UserError(f"{name} ({what}): {last_line}")
        results[result.job_id] = result.records[0]
    table, curves = [], {}
    for name, (spec, market_label) in specs.items():
        measured = _gather(results, name)
        rows, curves[market_label] = _score(market_label, facts, orders, measured, spec)
        table += rows
    found = Impact(
        pd.DataFrame(table, columns=list(COLUMNS)),
        label,
        f"{clock(first)}-{clock(last)}",
        metaorders,
        curves,
        facts.propagator.mean(axis=0),
    )
    if out is not None:
        write_impact(found, out)
    return found


def _chunks(name, what, spec, facts, scripts, seed) -> list[Study[Work]]:
    """The jobs of ``what`` over ``scripts``, `CHUNK` at a time (seeds ``seed`` + index)."""
    kind = "trips" if what == "pump" else what
    return [
        Study(
            f"{name}|{what}|{i}",
            i,
            Work(
                kind,
                spec,
                facts,
                tuple(scripts[i : i + CHUNK]),
                tuple(range(seed + i, seed + i + len(scripts[i : i + CHUNK]))),
            ),
        )
        for i in range(0, len(scripts), CHUNK)
    ]


def _gather(results: dict, name: str) -> dict[str, np.ndarray]:
    """One market's measurements, each kind's parts joined in order."""
    out: dict[str, list] = {}
    for job_id, value in results.items():
        market, what, index = job_id.split("|")
        if market == name:
            out.setdefault(what, []).append((int(index), value))
    return {
        what: np.concatenate([v for _, v in sorted(parts, key=lambda p: p[0])])
        if what != "null"
        else parts[0][1]
        for what, parts in out.items()
    }


def _score(
    market: str, facts: TapeFacts, orders: list[Metaorder], measured: dict, spec: MarketSpec
) -> tuple[list[tuple], dict[str, np.ndarray]]:
    """The market's rows of the scorecard and its curves."""
    values: dict[str, tuple[float, float, float]] = {}
    nulls = measured["null"]
    values["null_seat_differences"] = (float(nulls.sum()), math.nan, math.nan)
    impacts = measured["metaorders"]  # (m, marks)
    end = int(np.flatnonzero(MARKS == 1.0)[0])
    share = np.array([o.lots for o in orders], float) / facts.volume
    law = square_root_law(share, impacts[:, end] / facts.sigma)
    values["sqrt_exponent"] = _triple(law.exponent)
    values["sqrt_prefactor"] = _triple(law.prefactor)
    later = int(np.flatnonzero(MARKS == 3.0)[0])
    values["relaxation"] = _triple(relaxation(impacts[:, end], impacts[:, later]))
    after = MARKS > 1.0
    values["decay_exponent"] = _triple(
        decay_exponent(MARKS[after] - 1.0, impacts[:, np.r_[end, np.flatnonzero(after)]])
    )
    singles = measured["singles"]
    bucket = singles[:, 0].astype(np.int64)
    for lag in (1, 10):
        reference = facts.propagator[bucket, lag - 1]
        values[f"response_{lag}"] = _triple(ratio_of_means(singles[:, 2 + lag], reference))
    refills = singles[singles[:, 1] > 0, 2]
    values["refill_ks_p"] = (ks_p(refills, facts.refill), math.nan, math.nan)
    quotes = measured["quotes"]
    for h, horizon in enumerate(MARKOUTS):
        reference = _markout_reference(facts.passive, quotes[:, 0], h)
        key = f"passive_markout_{horizon:g}s"
        values[key] = _triple(ratio_of_means(quotes[:, 1 + h], reference))
    dollars = spec.market(0).tick_size
    values["round_trip_pnl"] = _triple(mean_interval(measured["trips"] * dollars))
    values["pump_dump_pnl"] = _triple(mean_interval(measured["pump"] * dollars))
    rows = []
    for check, target in CHECKS.items():
        value, low, high = values[check]
        rows.append(
            (market, check, value, low, high, target.low, target.high, target.holds(value, low))
        )
    curve = impacts.mean(axis=0) / impacts[:, end].mean() if impacts[:, end].mean() else MARKS * 0
    responses = np.nanmean(singles[:, 3:], axis=0) if len(singles) else np.full(LAGS, np.nan)
    curves = {"share": share, "impact": impacts[:, end] / facts.sigma, "relaxation": curve}
    curves["response"] = responses
    return rows, curves


def _triple(ci) -> tuple[float, float, float]:
    return float(ci.estimate), float(ci.low), float(ci.high)


def _markout_reference(tape: PassiveFills, ahead: np.ndarray, h: int) -> np.ndarray:
    """For each of a seat's fills (lots ``ahead`` of it), the tape's mean mark-out ``h`` of
    its own fills with about as much ahead (the tape's terciles of it)."""
    known = np.isfinite(tape.ahead)
    edges = np.unique(np.quantile(tape.ahead[known], [1 / 3, 2 / 3])) if known.any() else []
    bucket = np.searchsorted(edges, tape.ahead[known], side="left")
    means = np.array(
        [
            tape.moves[known][bucket == b, h].mean() if (bucket == b).any() else np.nan
            for b in range(len(edges) + 1)
        ]
    )
    mine = np.searchsorted(edges, np.nan_to_num(ahead, nan=0.0), side="left")
    return means[mine] if len(means) else np.full(len(ahead), np.nan)


def write_impact(found: Impact, out: str | Path) -> list[Path]:
    """``out``/impact.csv (`COLUMNS`) and impact.png (`write_impact_figure`), together."""
    with into(out) as directory, together():
        with replacing(directory / "impact.csv") as temporary:
            found.table.to_csv(temporary, index=False)
        figure = write_impact_figure(found, directory)
    return [directory / "impact.csv", figure]


def write_impact_figure(found: Impact, out: Path) -> Path:
    """``out``/impact.png: each market's metaorders' impact against their size on log-log
    axes beside the square-root law, the relaxation after them, and its single orders'
    response by lag beside the tape's bare propagator."""
    from matplotlib.figure import Figure

    from tradearena.evaluation.analysis.impact_plots import (
        relaxation_curves,
        response_by_lag,
        square_root_points,
    )
    from tradearena.evaluation.analysis.plots import save_figure

    figure = Figure(figsize=(13.0, 4.2), layout="constrained")
    axes = figure.subplots(1, 3)
    square_root_points(found.curves, axes[0])
    relaxation_curves(found.curves, MARKS, axes[1])
    response_by_lag(found.curves, found.propagator, axes[2])
    handles, labels = axes[1].get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower center", ncols=len(labels), fontsize=8)
    figure.suptitle(
        f"The impact scorecard: {found.tape} {found.hours}, {found.metaorders:,} metaorders",
        fontsize=10,
    )
    return save_figure(figure, out / "impact.png", dpi=100)


def format_impact(found: Impact, verbose: bool = False) -> str:
    """The verdict first (per market, how many checks hold and which do not), then the
    scorecard (every check's value, interval and target) with ``verbose``."""
    lines = [f"The impact scorecard, {found.tape} {found.hours} ({found.metaorders:,} metaorders):"]
    table = found.table
    for market, rows in table.groupby("market", sort=False):
        failing = rows.loc[~rows.holds.astype(bool), "check"].tolist()
        verdict = f"  {market}: {len(rows) - len(failing)} of {len(rows)} checks hold"
        lines.append(verdict + (f"; not {', '.join(failing)}" if failing else ""))
    if not verbose:
        lines.append("(--verbose prints every check's value, interval and target)")
        return "\n".join(lines)
    lines.append("")
    for market, rows in table.groupby("market", sort=False):
        lines.append(market)
        for r in rows.itertuples():
            spread = "" if math.isnan(r.low) else f" [{r.low:.3g}, {r.high:.3g}]"
            target = _target_text(r.check)
            mark = "holds" if r.holds else "fails"
            lines.append(f"  {r.check:<24}{r.value:>10.3g}{spread:<22} target {target}: {mark}")
    return "\n".join(lines)


def _target_text(check: str) -> str:
    target = CHECKS[check]
    if target.at_most_zero:
        return "<= 0 (its interval reaching 0)"
    if math.isinf(target.high):
        return f"> {target.low:g}"
    if target.low == target.high:
        return f"{target.low:g}"
    return f"{target.low:g}-{target.high:g}"
