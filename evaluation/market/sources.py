"""Days of real tapes and of simulated markets, seen as a level-1 file shows them: what the
market's judges (`evaluation.market.realism`, `transfer`), its fit and its learning read.

A source (`Source`, its name parsed once by `parse_source`) is a tape (a LOBSTER message
file with its orderbook file, or a converted recording's directory: one day) or a market (an
experiment file's ``[market]`` table or a Gymnasium id: ``days`` sessions with seeds 0, 1,
..., each recorded as a tape), carrying the hours a market learned from. Both become
`DayView` s through `tape_view`, so a simulated day is measured exactly as a real one: only
the messages a level-1 file holds, between the session's open and close.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

import numpy as np

from tradearena.envs.data.load import TapeIdentity, load_tape, missing_book
from tradearena.envs.data.tapes import EMPTY_ASK, EMPTY_BID, Event, Tape, clock
from tradearena.envs.errors import UserError, did_you_mean
from tradearena.envs.simulator.recording import synthetic_tape
from tradearena.envs.simulator.traders.learned import LearnedFlow
from tradearena.envs.spec import SYNTHETIC_DAY_STEPS, MarketSpec
from tradearena.evaluation.analysis.realism import DayView
from tradearena.evaluation.experiment.config import load_learned_from, load_market

__all__ = [
    "LearnedHours",
    "RealismSource",
    "Source",
    "clipped",
    "clock",
    "day_span",
    "day_until",
    "distinct_labels",
    "gym_spec",
    "held_out",
    "hours_on",
    "label_of",
    "session_of",
    "simulate_days",
    "parse_source",
    "tape_day",
    "tape_view",
]

_LOBSTER_SESSION = re.compile(r"_(\d+)_(\d+)_message_\d+$")
"""A LOBSTER file name's session: start and end, milliseconds after midnight."""
_ALWAYS_SHOWN = (Event.EXECUTE, Event.EXECUTE_HIDDEN, Event.CROSS, Event.HALT)
"""Messages a level-1 file holds whether or not the best quotes change."""


@dataclass(frozen=True)
class RealismSource:
    """One scorecard column: ``label`` (a file's stem or an id), its ``days`` and whether they
    were ``simulated`` (a market's sessions) or read (a tape's one day)."""

    label: str
    days: list[DayView]
    simulated: bool


# ------------------------------------------------------------------------------ the view
def tape_view(
    tape: Tape, open: float | None = None, close: float | None = None, *, levels: int = 1
) -> DayView:
    """The level-1 view of ``tape`` between ``open`` and ``close`` (seconds after midnight;
    default: the first message's second, and the last's rounded up): the messages after which
    the best bid or ask (price or size) changed, plus every execution, cross and halt, with
    ``open <= time <= close``. Prices stay in the tape's ticks, sizes in its lots, and the
    view's tick is what a tick is worth on one lot (as the replay prices it); an empty side
    is NaN. With
    ``levels`` > 1 (at most the tape's), the view's ``depth`` holds the book's first
    ``levels`` levels after every message that changed them."""
    if tape.book is None:
        raise missing_book(tape, "the realism judges")
    times = tape.messages["time"]
    open = math.floor(times[0]) if open is None else open
    close = math.ceil(times[-1]) if close is None else close
    inside = (times >= open) & (times <= close)
    top = tape.book[:, :4]
    changed = np.r_[True, (top[1:] != top[:-1]).any(axis=1)]
    keep = (changed | np.isin(tape.messages["type"], _ALWAYS_SHOWN)) & inside
    m, top = tape.messages[keep], top[keep].astype(float)
    ask, ask_size, bid, bid_size = top.T
    depth = depth_time = None
    if levels > 1:
        rows = tape.book[:, : 4 * min(levels, tape.book.shape[1] // 4)]
        moved = np.r_[True, (rows[1:] != rows[:-1]).any(axis=1)] & inside
        depth, depth_time = rows[moved].astype(float), times[moved].astype(float)
        depth[:, 0::4][rows[moved][:, 0::4] == EMPTY_ASK] = np.nan
        depth[:, 2::4][rows[moved][:, 2::4] == EMPTY_BID] = np.nan
    return DayView(
        time=m["time"].astype(float),
        kind=m["type"].astype(np.int64),
        size=m["size"].astype(np.int64),
        direction=m["direction"].astype(np.int64),
        bid=np.where(bid == EMPTY_BID, np.nan, bid),
        ask=np.where(ask == EMPTY_ASK, np.nan, ask),
        bid_size=bid_size,
        ask_size=ask_size,
        tick_size=tape.tick_dollars,
        open=float(open),
        close=float(close),
        depth=depth,
        depth_time=depth_time,
    )


def simulate_days(
    spec: MarketSpec,
    days: int,
    first_seed: int = 0,
    *,
    start: float | None = None,
    end: float | None = None,
    levels: int = 1,
) -> list[DayView]:
    """``days`` sessions of ``spec``'s market (seeds ``first_seed`` onwards), each a full day
    (``day_steps``, default 390 steps, or ``n_steps`` if longer), recorded as a tape with its
    top ``levels`` and seen through `tape_view` from the open (or ``start``, seconds after
    midnight, when later) to the close (or ``end``, when earlier)."""
    steps = max(spec.day_steps or SYNTHETIC_DAY_STEPS, spec.n_steps or 0)
    full = replace(spec, n_steps=steps, day_steps=None, window_steps=None, tape=None)
    views = []
    for seed in range(first_seed, first_seed + days):
        market = full.market(0)
        tape = synthetic_tape(
            seed,
            traders=market.traders,
            levels=levels,
            n_steps=market.n_steps,
            step_seconds=market.step_seconds,
            open_time=market.open_time,
            warmup_seconds=market.warmup_seconds,
            tick_size=market.tick_size,
            initial_price=market.initial_price,
        )
        bounds = clipped(market.open_time, market.close_time, start, end, f"{spec.task} market")
        views.append(tape_view(tape, *bounds, levels=levels))
    return views


def clipped(
    open: float, close: float, start: float | None, end: float | None, what: str
) -> tuple[float, float]:
    """(open, close) of a session cut to ``start``..``end`` (seconds after midnight, None:
    no cut); UserError naming ``what`` when nothing of the session is left."""
    low = open if start is None else max(open, start)
    high = close if end is None else min(close, end)
    if not high > low:
        raise UserError(
            f"{what}: its session ({clock(open)}-{clock(close)}) has nothing between "
            f"{clock(start) if start is not None else 'its open'} and "
            f"{clock(end) if end is not None else 'its close'}"
        )
    return low, high


# ----------------------------------------------------------------------------- the sources
@dataclass(frozen=True)
class Source:
    """A source as a command names it (``name``), parsed once by `parse_source`: a tape (a
    LOBSTER message file with its orderbook file beside it, or a converted recording's
    directory: one day; ``spec`` None) or a market (an experiment file's ``[market]`` table
    or a Gymnasium id: its ``spec``). ``label``: what the tables show it by (`label_of`)."""

    name: str
    label: str
    spec: MarketSpec | None

    @property
    def simulated(self) -> bool:
        """Whether its days are simulated: a market that replays no real tape."""
        return self.spec is not None and not self.spec.replays_file

    def market(self) -> MarketSpec:
        """The simulated market it is; a tape, or a market that replays one, is a
        `UserError`."""
        if self.spec is None:
            raise UserError(
                f"{self.name}: a tape, not a market (an experiment file or a Gymnasium id)"
            )
        if self.spec.replays_file:
            raise UserError(
                f"{self.name}: replays the tape {self.spec.tape}; give a simulated market"
            )
        return self.spec

    def read(
        self,
        days: int,
        *,
        start: float | None = None,
        end: float | None = None,
        levels: int = 1,
    ) -> RealismSource:
        """Its days seen from ``start`` to ``end`` (seconds after midnight; None: the
        session's open, close) with ``levels`` book levels (at most what a tape has): a tape's
        one day (a market that replays a real tape is that tape), or a market's ``days``
        sessions (seeds 0, 1, ...)."""
        if self.simulated:
            views = simulate_days(self.spec, days, start=start, end=end, levels=levels)
            return RealismSource(self.label, views, simulated=True)
        tape = load_tape(self.name) if self.spec is None else self.spec.replayed_tape()
        return _tape_source(tape, self.label, start, end, levels)

    @cached_property
    def learned_hours(self) -> LearnedHours | None:
        """The hours the market learned from, as its file names them: an experiment file's
        ``[learned_from]`` (`tradearena fit` writes it), its learned flow's parameter file
        (the window and tapes `tradearena learn` learned from:
        `envs.simulator.traders.learned.LearnedFlow.learned_window`), or, for a replay of a
        tape, the hours its sessions replay (``window_steps``, else the whole day); None for
        a tape and for a market that names none (a population's, a Gymnasium id)."""
        path = Path(self.name)
        if self.spec is None or path.suffix != ".toml":
            return None
        declared = load_learned_from(path)
        if declared is not None:
            tapes = tuple(map(TapeIdentity.read, declared.tapes))
            return LearnedHours(*declared.window, tapes, f"{path} [learned_from]")
        if self.spec.replays_file:
            return _replayed_hours(self.spec, f"{path} replays them")
        for trader in self.spec.background():
            window = trader.learned_window if isinstance(trader, LearnedFlow) else None
            if window is not None:
                return LearnedHours(*window, f"{path}'s learned flow")
        return None


def parse_source(name: str) -> Source:
    """The source ``name`` names: an experiment file (``.toml``: its ``[market]`` table, read
    and checked), a tape (a file or directory that exists), else a Gymnasium id of a
    tradearena market (`gym_spec`: an unknown id is a `UserError` naming the nearest)."""
    path = Path(name)
    if path.suffix == ".toml":
        spec = load_market(path)
    elif path.exists():
        spec = None
    else:
        spec = gym_spec(name)
    return Source(name, label_of(name), spec)


def label_of(name: str) -> str:
    """The label a source ``name`` is shown by in the tables: an experiment file's or a tape
    file's stem, a converted directory's name, a Gymnasium id itself."""
    path = Path(name)
    if path.suffix == ".toml" or path.is_file():
        return path.stem
    return path.name if path.is_dir() else name


def distinct_labels(names: Sequence[str]) -> None:
    """`UserError` when two of the sources ``names`` would be shown by one label (a table by
    label would keep only one of them), naming both: one given twice, or two files of one
    name in two folders."""
    seen: dict[str, str] = {}
    for name in names:
        label = label_of(name)
        if label in seen:
            raise UserError(
                f"{seen[label]} and {name} would both be labelled {label!r}: give each source "
                "once, under a name of its own (rename or copy one)"
            )
        seen[label] = name


def tape_day(tape: Tape, start: float | None = None, end: float | None = None) -> DayView:
    """The level-1 view of ``tape``'s day (a LOBSTER file's session, else its first and last
    second), cut to ``start``..``end`` (seconds after midnight; None: no cut)."""
    return _tape_source(tape, Path(tape.source).stem, start, end, 1).days[0]


def session_of(tape: Tape) -> tuple[float, float]:
    """(open, close) of ``tape``'s day, seconds after midnight: a LOBSTER file's session (in
    its name), else its first message's second and its last's rounded up."""
    session = _LOBSTER_SESSION.search(Path(tape.source).stem)
    times = tape.messages["time"]
    if session:
        return int(session[1]) / 1000, int(session[2]) / 1000
    return math.floor(times[0]), math.ceil(times[-1])


def day_until(tape: Tape, label: str, end: float | None) -> tuple[float, float]:
    """(open, close) of ``tape``'s day (`session_of`); a `UserError` naming ``label`` when
    ``end`` (``--until``, seconds after midnight) is after its close."""
    open, close = session_of(tape)
    if end is not None and end > close:
        raise UserError(
            f"{label}: --until {clock(end)} is after the day's close ({clock(close)}; the day "
            f"runs {clock(open)}-{clock(close)}): give a time inside it, or no --until for the "
            "whole day"
        )
    return open, close


def day_span(
    name: str, start: float | None = None, end: float | None = None
) -> tuple[float, float]:
    """(first, last) of the day of the tape ``name`` that the judges see from ``start`` to
    ``end`` (seconds after midnight; None: its open, its close), as `Source.read` cuts it."""
    return clipped(*session_of(load_tape(name)), start, end, label_of(name))


def _tape_source(
    tape: Tape, label: str, start: float | None, end: float | None, levels: int
) -> RealismSource:
    bounds = clipped(*day_until(tape, label, end), start, end, label)
    view = tape_view(tape, *bounds, levels=min(levels, tape.levels))
    return RealismSource(label, [view], simulated=False)


def gym_spec(name: str) -> MarketSpec:
    """The `MarketSpec` a tradearena Gymnasium id builds its market from."""
    import gymnasium

    import tradearena.envs  # noqa: F401  (registers the ids)

    markets = {
        env_id: spec.kwargs
        for env_id, spec in gymnasium.registry.items()
        if str(spec.entry_point).startswith("tradearena.envs.trading_env:")
    }
    if name not in markets:
        raise UserError(
            f"{name!r} is neither a file nor a tradearena market id{did_you_mean(name, markets)}"
            f" (ids: {', '.join(sorted(markets))})"
        )
    return MarketSpec.from_keywords(name, **markets[name])


# ------------------------------------------------------------------------ hours learned from
@dataclass(frozen=True)
class LearnedHours:
    """The part of a day a market learned from: ``first`` to ``last``, seconds after
    midnight, of the days ``tapes`` (`TapeIdentity`: by content, or by their files' names
    alone; empty: not said), and ``source``, where the market's file says so (for
    messages)."""

    first: float
    last: float
    tapes: tuple[TapeIdentity, ...]
    source: str

    def __str__(self) -> str:
        return f"{clock(self.first)}-{clock(self.last)}"


def held_out(hours: LearnedHours, start: float, end: float | None = None) -> None:
    """`UserError` when the hours judged, from ``start`` (``--from``) to ``end``
    (``--until``; None: the close), overlap ``hours``, those a market learned from (or its
    baseline replays): what a market is judged on must be held out of what it learned."""
    if start < hours.last and (end is None or hours.first < end):
        raise UserError(
            f"--from {clock(start)}: the hours judged overlap {hours}, learned from "
            f"({hours.source}): judge hours held out of them (--from {clock(hours.last)} or "
            "later)"
        )


def _replayed_hours(spec: MarketSpec, said: str) -> LearnedHours:
    """The hours of its tape that the replay ``spec`` replays (``window_steps``, else the
    whole day), ``said`` where."""
    market = spec.market(0)
    day = market.day_steps or market.n_steps
    first, last = spec.window_steps or (0, day - market.n_steps)
    step = market.step_seconds
    return LearnedHours(
        market.day_open + first * step,
        market.day_open + (last + market.n_steps) * step,
        (TapeIdentity.read(str(spec.tape)),),
        said,
    )


def hours_on(hours: LearnedHours, tape: str, given: bool) -> LearnedHours | str:
    """``hours`` on the day of ``tape`` (rounded out to whole seconds, within the day's
    session), or why they are not there: the market learned from another tape (unless the
    hours were ``given``; a tape renamed or moved is the same tape, `TapeIdentity.same`), or
    the day's session holds none of them. Given hours the day does not hold whole are a
    `UserError`."""
    name = Path(tape).name
    day = load_tape(tape)
    judged = TapeIdentity.of(day)
    if hours.tapes and not any(t.same(judged) for t in hours.tapes) and not given:
        return f"it learned from {', '.join(map(str, hours.tapes))}, not from {judged}"
    open, close = session_of(day)
    first, last = float(math.floor(hours.first)), float(math.ceil(hours.last))
    reason = (
        f"{name}'s day ({clock(open)}-{clock(close)}) does not hold the hours "
        f"{clock(first)}-{clock(last)}"
    )
    if given and (first < open or last > close):
        raise UserError(f"{hours.source}: {reason}")
    # hours a market's file names are judged where the day's session holds them (a tape's
    # messages from before its open, which a flow learns from too, are no part of it)
    first, last = max(first, open), min(last, close)
    if first >= last:
        return reason
    return replace(hours, first=first, last=last)
