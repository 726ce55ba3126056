"""`MarketSpec`: everything that defines a market task, defaulted once.

The Gymnasium env, the PettingZoo env and an experiment file's ``[market]`` table all build
their markets from one `MarketSpec`, so a default lives here and nowhere else, and a misspelt
keyword is named where it was typed (`MarketSpec.from_keywords`).
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import json
import math
import numbers
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from gymnasium import spaces

from tradearena.envs.data.load import TAPE_FORMATS, load_tape
from tradearena.envs.data.tapes import Tape
from tradearena.envs.errors import ParameterError, UserError, did_you_mean, not_one_of
from tradearena.envs.simulator.actions import ACTION_SETS, make_actions
from tradearena.envs.simulator.features import DEFAULT_WINDOWS, Discretizer, feature_space
from tradearena.envs.simulator.latency import MAX_LATENCY_SECONDS, order_latency
from tradearena.envs.simulator.market import Market, TraderError
from tradearena.envs.simulator.recording import synthetic_tape
from tradearena.envs.simulator.replayer import QUEUE_MODELS
from tradearena.envs.simulator.response_estimate import responsive_model
from tradearena.envs.simulator.responsive import ResponseModel
from tradearena.envs.simulator.traders import (
    MAX_MEMBERS,
    TRADERS,
    MarketReplay,
    Trader,
    ZeroIntelligence,
    build_trader,
    light,
    rmsc04,
)
from tradearena.envs.tasks import TASKS

__all__ = [
    "MAX_PRICE_TICKS",
    "MAX_SESSIONS",
    "MAX_SESSION_SECONDS",
    "MAX_STEPS",
    "MAX_DEPTH_LEVELS",
    "MAX_DOLLARS",
    "MAX_SHARES",
    "MIN_TICK_SIZE",
    "OBSERVATIONS",
    "POPULATIONS",
    "MarketSpec",
    "SYNTHETIC",
    "SpecError",
    "names_tape_file",
    "observation_kinds",
]

POPULATIONS = {"rmsc04": rmsc04, "light": light, "none": list}
"""Named background populations: name -> function returning fresh traders."""
OBSERVATIONS = ("features", "tabular")
"""Observation kinds a seat can read: a Box of market features or one Discrete state."""
SYNTHETIC = "synthetic"
"""The ``tape`` value that records a synthetic day from the background population."""


def names_tape_file(tape: object) -> bool:
    """Whether a market's ``tape`` value names a real tape to replay (its file or directory,
    or a `Tape`): neither None, "" (no tape) nor `SYNTHETIC` (a recorded synthetic day)."""
    return tape is not None and not (isinstance(tape, str) and tape in ("", SYNTHETIC))


SYNTHETIC_DAY_STEPS = 390
"""Steps of a recorded synthetic day when ``day_steps`` is not given (09:30-16:00)."""
MAX_STEPS = 1_000_000
"""The most decision steps a session (``n_steps``) or its day (``day_steps``) may have: a
week of one-second steps is 604,800. A session keeps a few numbers per step."""
MAX_SESSIONS = 1024
"""The most sessions played at once (a vector face's ``num_envs``, an experiment's ``[training]
sessions``): each is a whole market held in memory (a book, its background's flow for the
day)."""
MAX_SESSION_SECONDS = 7 * 86_400.0
"""The longest a session may last, seconds: its warm-up and its day (``day_steps``, else
``n_steps``, times ``step_seconds``), a week. The background draws its flow over the whole
session up front, so a longer one exhausts a worker's memory before the first step. The
latest a session may open (``open_time``, seconds after midnight) too: far later, float
seconds are too coarse for a flow's waits between events, and its clock stops."""
MAX_PRICE_TICKS = 10**9
"""The highest opening price (``initial_price``), ticks: $10,000,000 at $0.01, a hundred
times the dearest share listed. Accounts count cash in ticks (int64); prices far above it
overflow them once multiplied by the shares traded."""
MIN_TICK_SIZE = 1e-12
"""The smallest tick (``tick_size``), dollars: below the finest tick of one lot listed (a
cent on a lot of 10^-8 BTC is 10^-10); a market's PnL and rewards are counted in ticks
times it, and smaller ones are noise of floating point."""
MAX_DOLLARS = 1e6
"""The most dollars a market's per-unit money field may be (``tick_size`` a tick,
``fee_per_share`` a share, ``inventory_penalty`` a share squared) and the largest
``reward_scale``: with at most `MAX_SHARES` shares at `MAX_PRICE_TICKS` ticks, every reward
stays a finite float64 (1e308 of them made infinite rewards, and Q-tables of -inf)."""
MAX_SHARES = 10**9
"""The most shares (lots) a seat may hold either way (``position_limit``) or send at once
(``order_size``, ``parent_order``): its cash in ticks x shares stays inside the int64 the
book counts it in."""
MAX_DEPTH_LEVELS = 1000
"""The most book levels the features read (``depth_levels``)."""


class SpecError(UserError):
    """A market setting that cannot be used; ``path`` names it (a field, then the index and
    key inside it, e.g. ``("traders", 0, "type")``) and ``reason`` says why."""

    def __init__(self, path: str | tuple, reason: str) -> None:
        self.path = (path,) if isinstance(path, str) else tuple(path)
        self.reason = reason
        dotted = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in self.path)
        super().__init__(f"{dotted.lstrip('.')}: {reason}")


@dataclass(frozen=True)
class MarketSpec:
    """One market task: the background, the session's clock and rules, and the seats' view.

    Each field's docstring gives its meaning and unit (docs/market.md lists them, generated
    from these docstrings). The task (``task``, see `envs.tasks`) defaults the fields left
    None, so that a task's spec is the market of its config and of its Gymnasium id. On a
    tape, sizes are the tape's lots (a share on LOBSTER files): ``order_size``,
    ``position_limit`` and ``fee_per_share`` count lots, and a tick of one lot is worth the
    tape's tick times its lot.
    """

    population: str | None = None
    """Background population: "rmsc04", "light" or "none" (`envs.simulator.traders`); None:
    the task's (light)."""
    traders: tuple = ()
    """Background traders replacing ``population``: `Trader` objects, or tables
    ``{"type": "ZeroIntelligence", ...}`` naming one of `envs.simulator.traders.TRADERS`."""
    tape: Tape | str | Path | None = None
    """Order flow replayed instead of the population: a `Tape`, the path of a LOBSTER message
    file (its orderbook file beside it is used when present) or of a converted recording's
    directory (``tradearena data convert``), or "synthetic": a day recorded from the
    background population with ``tape_seed``. A tape fixes its own day (as many steps as cover
    its messages), open time, tick size and opening price, and has no warm-up."""
    tape_format: str = "lobster"
    """What ``tape`` is: "lobster", or a recording of "binance", "tardis" or "l3" (a file, or a
    directory of its files), converted when loaded (`envs.data.load.load_tape`)."""
    tape_seed: int = 0
    """Seed of the day recorded for ``tape = "synthetic"``."""
    queue: str = "risk_averse"
    """How the seats' orders move up a replayed level's queue when the tape cancels volume
    there without naming whose (an L2 feed): "risk_averse" (only trades advance them),
    "power" (with ``queue_power``), "log" or "optimistic"
    (`envs.simulator.replayer.QUEUE_MODELS`)."""
    queue_power: float = 2.0
    """Exponent of the "power" queue model: a cancel's share from ahead of a seat's order is
    f(ahead) / (f(ahead) + f(behind)), f(x) = x ** queue_power, x in lots."""
    responsive: bool = False
    """Whether the replayed tape answers the seats' trades (the responsive replay,
    `envs.simulator.responsive`): its messages go on as recorded, and what a seat takes is
    carried forward as a shift of the tape's later prices (a propagator estimated from the
    tape) and volume held out of the levels until they refill; false: the plain replay, which
    puts back at the next message whatever a seat took. Needs a tape with orderbook rows."""
    response_hours: tuple[float, float] | None = None
    """[first, last] seconds after midnight: the tape's hours the responsive replay's answer
    is estimated from (None: the whole tape); they must hold enough market orders
    (`envs.simulator.response_estimate.MIN_ORDERS`)."""
    response_concavity: float = 0.5
    """How a seat's trades add up in the responsive replay: the ``1 / response_concavity``
    powers of their impacts are summed (0.5: in squares, the square-root law of
    metaorders; 1: linearly, the plain propagator)."""
    extra_zi: int = 0
    """Zero-intelligence traders added to the background (the ZI perturbation), reverting to
    the initial price."""
    n_steps: int | None = None
    """Decisions per session; None: the task's (60; an execution 30), with a tape the tape's
    whole day."""
    day_steps: int | None = None
    """Steps of a longer day of which every session is a window (more than ``n_steps``; see
    `Market`); with ``tape = "synthetic"``, the recorded day's steps (default 390, at least
    ``n_steps``). None: the session is the day."""
    window_steps: tuple[int, int] | None = None
    """[first, last] steps of the day at which a session may open (0: the day's first step;
    None: any the day allows), e.g. a replayed day's morning to train on and its afternoon to
    test on; a `SpecError` names it when the day holds no such window."""
    step_seconds: float = 60.0
    """Seconds between decisions."""
    open_time: float | None = None
    """Seconds after midnight of the session's day opening; None: 09:30 (34,200 s), or the
    tape's."""
    warmup_seconds: float | None = None
    """Seconds of background flow before the first step; None: 300 (a tape has none)."""
    tick_size: float | None = None
    """Dollars per tick; None: $0.01, or the tape's (given beside a tape, it must be the
    tape's: a `SpecError` otherwise; a LOBSTER message file's dollar prices are read in ticks
    of it)."""
    initial_price: int | None = None
    """Opening price, ticks; None: 10,000 ($100 at $0.01), or the tape's."""
    position_limit: int | None = None
    """Shares either side to which orders are clipped; None: the task's (500; an execution
    1,000)."""
    fee_per_share: float = 0.0
    """Dollars charged per share of every fill."""
    task: str = "taker"
    """The task (`envs.tasks`): "taker", "making", "execution" or "informed"; it defaults the
    fields left None, the action set and the tabular states."""
    actions: str | None = None
    """Action set of `envs.simulator.actions`: "trade", "quote", "make" or "execute"; None: the
    task's (see `action_set`)."""
    order_size: int = 100
    """Shares of each order the action set sends (a lot of the "execute" set)."""
    reward_scale: float | None = None
    """Factor on the rewards, which are in dollars; None: the task's (0.01; an execution
    0.1)."""
    inventory_penalty: float | None = None
    """Dollars per share^2 per step subtracted from the reward, times inventory^2: a running
    inventory cost (the score, PnL, is not penalised); None: the task's (0; making 2e-5)."""
    parent_order: int | None = None
    """Shares a seat must acquire by the close, negative to sell (the "execution" task): its
    rewards and score are then measured against holding the parent order from the open, so
    that an episode's sum is minus the implementation shortfall against the opening mid;
    None: the task's (1,000 for an execution)."""
    signal_noise: float = 1.0
    """Standard deviation of a seat's look at the fundamental, ticks (the "informed"
    task)."""
    windows: tuple[int, ...] = DEFAULT_WINDOWS
    """Return windows of the features, steps (`envs.simulator.features`)."""
    depth_levels: int = 5
    """Book levels the imbalance feature reads."""
    discretizer: Discretizer | None = field(default=None, compare=False)
    """The `Discretizer` of the tabular states; None: the task's."""
    record: bool = False
    """Log the book's changes as LOBSTER messages."""
    order_latency: float | Mapping[str, Any] = 0.0
    """Delay of a seat's orders before they reach the book: seconds, or a model table
    (``{model = "constant", seconds}``, ``{model = "lognormal", median, sigma}`` or
    ``{model = "empirical", rows = [seconds, ...]}``; `envs.simulator.latency`); 0: none."""
    feed_latency: float = 0.0
    """Seconds: the seats see the book as it was that long before each step; 0: as it is."""

    def __post_init__(self) -> None:
        _check_types(self)
        set_ = object.__setattr__  # normalising a frozen dataclass's own fields
        set_(self, "traders", tuple(self.traders))
        set_(self, "windows", tuple(int(w) for w in self.windows))
        for name in ("window_steps", "response_hours"):
            if isinstance(getattr(self, name), list):
                set_(self, name, tuple(getattr(self, name)))
        if self.tape == "":
            set_(self, "tape", None)
        if isinstance(self.tape, Path):
            set_(self, "tape", str(self.tape))
        if self.task not in TASKS:
            raise SpecError("task", not_one_of(self.task, TASKS))
        for name, value in TASKS[self.task].market.items():
            if getattr(self, name) is None and not (name == "n_steps" and self.tape is not None):
                set_(self, name, value)
        _check(self)

    # ---------------------------------------------------------------------------- building
    @classmethod
    def from_keywords(
        cls, owner: str, base: MarketSpec | None = None, /, **keywords: Any
    ) -> MarketSpec:
        """``base`` with ``keywords`` replaced, or (no base) the spec of ``keywords``, its task
        defaulting the rest; a keyword that is not a field is a `SpecError` naming it and
        ``owner`` (who was given it), with the nearest field name, and so is a ``base`` that
        is no `MarketSpec` (a market file's path: its loader reads it)."""
        if base is not None and not isinstance(base, MarketSpec):
            raise SpecError(
                "market_spec",
                f"{owner} takes a MarketSpec, got {base!r}; a market file's is "
                "tradearena.evaluation.experiment.config.load_market(path)",
            )
        names = [f.name for f in dataclasses.fields(cls)]
        for key in keywords:
            if key not in names:
                hint = did_you_mean(key, names)
                raise SpecError(key, f"{owner} takes no market keyword {key!r}{hint}; {names}")
        return cls(**keywords) if base is None else dataclasses.replace(base, **keywords)

    def market(self, n_seats: int, *, extra_zi: int = 0) -> Market:
        """A new `Market` of this spec with ``n_seats`` seats (and ``extra_zi`` more
        zero-intelligence traders than the spec's)."""
        background = self.background()
        steps = self.n_steps or SYNTHETIC_DAY_STEPS
        clock: dict[str, Any] = {"n_steps": steps, "day_steps": self.day_steps}
        clock |= {"open_time": 34_200.0, "warmup_seconds": 300.0, "tick_size": 0.01}
        clock["initial_price"] = 10_000
        tape = self.replayed_tape()
        if tape is not None:
            replay = MarketReplay(
                tape, queue=self.queue, queue_power=self.queue_power, response=self.response()
            )
            background = [replay] + (background if self.replays_file else [])
            clock |= _tape_clock(tape, self.n_steps, self.step_seconds)
            _check_tick(self.tick_size, tape)
        given = {
            "open_time": self.open_time,
            "warmup_seconds": self.warmup_seconds,
            "tick_size": self.tick_size if tape is None else None,
            "initial_price": self.initial_price,
        }
        clock |= {key: value for key, value in given.items() if value is not None}
        clock["window_steps"] = _window(self.window_steps, clock)
        zi = self.extra_zi + extra_zi
        if zi:
            background.append(ZeroIntelligence(zi))  # reverting to the initial price
        return Market(
            background,
            n_seats=n_seats,
            step_seconds=self.step_seconds,
            position_limit=self.position_limit,
            fee_per_share=self.fee_per_share,
            record=self.record,
            order_latency=order_latency(self.order_latency),
            feed_latency=self.feed_latency,
            depth_levels=self.depth_levels,
            **clock,
        )

    def check_session(self) -> None:
        """`SpecError` naming the field to blame when a session of this market cannot open
        (what only a session shows: a learned flow's tick against the market's, the book it
        opens): a trader of ``traders`` by its place, else the tape's replay or the
        population; the check of an experiment file runs it before any seat is built, so
        that a market's fault is never a seat's."""
        market = self.market(0)
        try:
            market.reset(0)
        except TraderError as failed:
            trader = market.traders[failed.index]
            replayed = int(isinstance(market.traders[0], MarketReplay))
            error, place = failed.error, failed.index - replayed
            path = getattr(error, "path", ())
            reason = getattr(error, "reason", str(error))
            if isinstance(trader, MarketReplay):
                raise SpecError("tape", reason) from None
            if place < len(self.traders):
                raise SpecError(("traders", place, *path), reason) from None
            raise SpecError("population", str(error)) from None

    def background(self) -> list[Trader]:
        """Fresh background traders: copies of ``traders`` (tables built), or the named
        population when there are none; with a tape (not "synthetic"), only ``traders``."""
        if self.traders:
            return [_trader(t) for t in self.traders]
        if self.replays_file:
            return []
        return POPULATIONS[self.population]()

    def replayed_tape(self) -> Tape | None:
        """The tape the market replays (loaded or recorded once per process), or None."""
        if self.tape is None or isinstance(self.tape, Tape):
            return self.tape
        if self.tape == SYNTHETIC:
            steps = max(self.day_steps or SYNTHETIC_DAY_STEPS, self.n_steps or 0)
            return _recorded_day(self._population_key(), self.tape_seed, steps, self.step_seconds)
        return _file_tape(str(self.tape), self.tape_format, self.tick_size)

    def response(self) -> ResponseModel | None:
        """How the replayed tape answers the seats (`responsive`; estimated once per process
        and tape), or None for the plain replay; `SpecError` naming ``response_hours`` when
        they hold too few market orders to estimate it from."""
        if not self.responsive:
            return None
        try:
            return responsive_model(
                self.replayed_tape(), self.response_hours, self.response_concavity
            )
        except UserError as error:
            raise SpecError("response_hours", str(error)) from None

    def _population_key(self) -> str:
        if any(isinstance(t, Trader) for t in self.traders):
            raise SpecError("traders", 'tape = "synthetic" needs traders given as tables')
        return json.dumps([self.population, list(self.traders)], sort_keys=True)

    # ---------------------------------------------------------------------------- the view
    @property
    def replays_file(self) -> bool:
        """Whether the market replays a real tape (`names_tape_file`: a file, a directory or
        a `Tape`), not a recorded synthetic day nor none."""
        return names_tape_file(self.tape)

    @property
    def action_set(self) -> str:
        """The name of the seats' action set: ``actions``, or the task's when None."""
        return self.actions or TASKS[self.task].actions

    @property
    def signal(self) -> bool:
        """Whether seats observe a signal of the fundamental (the task's choice)."""
        return TASKS[self.task].signal

    @property
    def action_space(self) -> spaces.Discrete:
        """Discrete(n) of the action set."""
        return spaces.Discrete(make_actions(self.action_set, self.order_size, self.parent_order).n)

    def observation_space(self, kind: str = "features") -> spaces.Space:
        """A seat's observation space for observation ``kind`` ("features" or "tabular")."""
        if kind == "features":
            return feature_space(self.windows, self.depth_levels, self.signal)
        if kind == "tabular":
            return spaces.Discrete(self.state_discretizer().n_states)
        raise SpecError("observation", not_one_of(kind, OBSERVATIONS))

    def state_discretizer(self) -> Discretizer:
        """The discretizer of tabular observations (``discretizer`` or the task's)."""
        return self.discretizer or TASKS[self.task].states(self.windows)

    def to_table(self) -> dict[str, Any]:
        """The spec as plain data (an experiment file's ``[market]`` table); only specs whose
        tape is a path or "synthetic" and whose traders are tables have one."""
        table = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        del table["discretizer"]
        table["traders"] = [dict(t) for t in self.traders]
        table["windows"] = list(self.windows)
        for name in ("window_steps", "response_hours"):
            if getattr(self, name) is not None:
                table[name] = list(getattr(self, name))
        return table


@lru_cache(maxsize=8)
def _file_tape(path: str, format: str, tick_size: float | None) -> Tape:
    """The tape of a file; ``tick_size`` (dollars, None: $0.01) is how a LOBSTER message
    file's dollar prices are read into ticks (a converted tape has its own, in meta.json)."""
    if tick_size is None:
        return load_tape(path, format=format)
    return load_tape(path, format=format, tick_size=tick_size)


@lru_cache(maxsize=8)
def _recorded_day(population: str, seed: int, steps: int, step_seconds: float) -> Tape:
    name, traders = json.loads(population)
    background = [_trader(t) for t in traders] or POPULATIONS[name]()
    return synthetic_tape(seed, traders=background, n_steps=steps, step_seconds=step_seconds)


def _tape_clock(tape: Tape, n_steps: int | None, step_seconds: float) -> dict[str, Any]:
    """The `Market` clock of a tape: it opens at the tape's first second with no warm-up and
    lasts the steps that cover every message; shorter sessions are windows of that day."""
    first, last = float(tape.messages["time"][0]), float(tape.messages["time"][-1])
    day = int((last - math.floor(first)) // step_seconds) + 1
    clock = {
        "open_time": float(math.floor(first)),
        "warmup_seconds": 0.0,
        "tick_size": tape.tick_dollars,
        "n_steps": min(n_steps or day, day),
        "day_steps": day if (n_steps or day) < day else None,
    }
    bids, asks = tape.initial_book()
    if bids and asks:
        clock["initial_price"] = (bids[0][0] + asks[0][0]) // 2
    elif tape.opening_price is not None:
        clock["initial_price"] = tape.opening_price
    return clock


def _window(window: tuple[int, int] | None, clock: Mapping[str, Any]) -> tuple | None:
    """``window`` (the steps at which a session may open), checked against the market's
    ``clock``: `SpecError` naming ``window_steps`` when its last step would let a session
    run past the day's end."""
    if window is None:
        return None
    n_steps = clock["n_steps"]
    day = clock["day_steps"] or n_steps
    if window[1] > day - n_steps:
        raise SpecError(
            "window_steps",
            f"a session of {n_steps} steps opened at step {window[1]} would run past the "
            f"day's {day} steps: the last step a session may open at is {day - n_steps}",
        )
    return window


def _check_tick(tick_size: float | None, tape: Tape) -> None:
    """Raise `SpecError` naming ``tick_size`` (dollars) when one is given beside ``tape`` and
    is not the tape's own tick: the tape's prices are in its ticks, so another tick would
    only rescale every dollar figure."""
    if tick_size is not None and not math.isclose(tick_size, tape.tick_size, rel_tol=1e-9):
        raise SpecError(
            "tick_size",
            f"{tick_size:g} dollars conflicts with the tape's own tick, {tape.tick_size:g} "
            f"dollars ({tape.source}): a tape's prices are in its ticks; leave tick_size out",
        )


def _trader(spec: Trader | Mapping[str, Any]) -> Trader:
    """A fresh trader: a copy of a `Trader`, or one built from a ``{"type": ...}`` table."""
    if isinstance(spec, Trader):
        return copy.deepcopy(spec)
    return build_trader(spec["type"], {k: v for k, v in spec.items() if k != "type"})


_SCALARS = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}
"""The plain types a field may hold, by their name in messages."""


@lru_cache(maxsize=1)
def _scalar_types() -> dict[str, tuple[type, str]]:
    """Field name -> (its plain type, that type's name) for the fields annotated with one plain
    type (or it or None): the types `_check_types` asks of a value."""
    hints = typing.get_type_hints(MarketSpec)
    out = {}
    for name in (f.name for f in dataclasses.fields(MarketSpec)):
        kinds = [t for t in typing.get_args(hints[name]) or (hints[name],) if t is not type(None)]
        if len(kinds) == 1 and kinds[0] in _SCALARS:
            out[name] = (kinds[0], _SCALARS[kinds[0]])
    return out


def _check_types(spec: MarketSpec) -> None:
    """Raise `SpecError` naming the first field whose value is not of its type (a number of
    either kind where a float is asked; never a bool for a number), or ``windows`` that are
    not integers."""
    for name, (kind, described) in _scalar_types().items():
        value = getattr(spec, name)
        if value is None:
            continue
        number = {int: numbers.Integral, float: numbers.Real}.get(kind, kind)
        if not isinstance(value, number) or isinstance(value, bool) and kind is not bool:
            raise SpecError(name, f"expected {described}, got {value!r}")
    windows = spec.windows
    if isinstance(windows, str | bytes) or not all(
        isinstance(w, numbers.Integral) and not isinstance(w, bool) for w in windows
    ):
        raise SpecError("windows", f"expected integers (steps), got {windows!r}")


def _check(spec: MarketSpec) -> None:
    """Raise `SpecError` naming the first field that cannot be used."""

    def need(ok: bool, name: str, rule: str) -> None:
        if not ok:
            raise SpecError(name, f"must be {rule}, got {getattr(spec, name)!r}")

    if spec.population not in POPULATIONS:
        raise SpecError("population", not_one_of(spec.population, POPULATIONS))
    for i, trader in enumerate(spec.traders):
        if isinstance(trader, Trader):
            continue
        kind = trader.get("type") if isinstance(trader, Mapping) else None
        if kind not in TRADERS:
            raise SpecError(("traders", i, "type"), not_one_of(kind, sorted(TRADERS)))
        _check_trader(trader, ("traders", i))
    need(spec.tape_format in TAPE_FORMATS, "tape_format", f"one of {list(TAPE_FORMATS)}")
    need(not spec.responsive or spec.tape is not None, "responsive", "false without a tape")
    hours = spec.response_hours
    ok = hours is None or (
        isinstance(hours, tuple)
        and len(hours) == 2
        and all(isinstance(h, numbers.Real) and not isinstance(h, bool) for h in hours)
        and 0 <= hours[0] < hours[1] <= MAX_SESSION_SECONDS
    )
    need(ok, "response_hours", "[first, last] seconds after midnight with first < last")
    need(
        _positive(spec.response_concavity) and spec.response_concavity <= 1,
        "response_concavity",
        "in (0, 1]",
    )
    need(spec.tape_seed >= 0, "tape_seed", ">= 0")
    need(spec.queue in QUEUE_MODELS, "queue", f"one of {list(QUEUE_MODELS)}")
    need(0 < spec.queue_power <= 100, "queue_power", "in (0, 100]")
    need(0 <= spec.extra_zi <= MAX_MEMBERS, "extra_zi", f"in [0, {MAX_MEMBERS:,}] traders")
    steps = f"in [1, {MAX_STEPS:,}] steps"
    need(spec.n_steps is None or 1 <= spec.n_steps <= MAX_STEPS, "n_steps", steps)
    need(spec.day_steps is None or 1 <= spec.day_steps <= MAX_STEPS, "day_steps", steps)
    longer = spec.tape is not None or None in (spec.day_steps, spec.n_steps)  # a tape: its day
    need(longer or spec.day_steps >= spec.n_steps, "day_steps", f">= n_steps ({spec.n_steps})")
    window = spec.window_steps
    ok = window is None or (
        isinstance(window, tuple)
        and len(window) == 2
        and all(isinstance(s, numbers.Integral) and not isinstance(s, bool) for s in window)
        and 0 <= window[0] <= window[1]
    )
    need(ok, "window_steps", "[first, last] steps of the day with 0 <= first <= last")
    need(_positive(spec.step_seconds), "step_seconds", "> 0 seconds")
    opens = spec.open_time
    need(
        opens is None or 0 <= opens <= MAX_SESSION_SECONDS,
        "open_time",
        f"in [0, {MAX_SESSION_SECONDS:,.0f}] seconds after midnight (a week)",
    )
    need(spec.warmup_seconds is None or spec.warmup_seconds >= 0, "warmup_seconds", ">= 0 s")
    _check_session_length(spec)
    need(
        spec.tick_size is None or MIN_TICK_SIZE <= spec.tick_size <= MAX_DOLLARS,
        "tick_size",
        f"a number in [{MIN_TICK_SIZE:g}, {MAX_DOLLARS:g}] dollars",
    )
    price = spec.initial_price
    need(
        price is None or 0 < price <= MAX_PRICE_TICKS,
        "initial_price",
        f"in [1, {MAX_PRICE_TICKS:,}] ticks",
    )
    shares = f"in [1, {MAX_SHARES:,}] shares"
    need(0 < spec.position_limit <= MAX_SHARES, "position_limit", shares)
    dollars = f"in [0, {MAX_DOLLARS:g}] dollars"
    need(0 <= spec.fee_per_share <= MAX_DOLLARS, "fee_per_share", f"{dollars} a share")
    if spec.actions not in (None, *ACTION_SETS):
        raise SpecError("actions", not_one_of(spec.actions, sorted(ACTION_SETS)))
    need(0 < spec.order_size <= MAX_SHARES, "order_size", shares)
    need(0 < spec.reward_scale <= MAX_DOLLARS, "reward_scale", f"in (0, {MAX_DOLLARS:g}]")
    executing = spec.action_set == "execute"
    need(not executing or spec.parent_order != 0, "parent_order", "non-zero shares to execute")
    need(abs(spec.parent_order) <= spec.position_limit, "parent_order", "within position_limit")
    noise = spec.signal_noise
    need(0 < noise <= MAX_PRICE_TICKS, "signal_noise", f"in (0, {MAX_PRICE_TICKS:,}] ticks")
    penalty = spec.inventory_penalty
    need(0 <= penalty <= MAX_DOLLARS, "inventory_penalty", f"{dollars} a share^2")
    levels = f"in [1, {MAX_DEPTH_LEVELS:,}]"
    need(1 <= spec.depth_levels <= MAX_DEPTH_LEVELS, "depth_levels", levels)
    windows = spec.windows
    ok = bool(windows) and len(set(windows)) == len(windows) and min(windows) >= 1
    need(ok and max(windows) <= MAX_STEPS, "windows", f"distinct step counts in [1, {MAX_STEPS:,}]")
    feed = spec.feed_latency
    ok = isinstance(feed, int | float) and not isinstance(feed, bool) and math.isfinite(feed)
    need(
        ok and 0 <= feed <= MAX_LATENCY_SECONDS,
        "feed_latency",
        f"in [0, {MAX_LATENCY_SECONDS:g}] seconds",
    )
    try:
        order_latency(spec.order_latency)
    except ParameterError as error:
        raise SpecError(error.path, error.reason) from None


def _check_session_length(spec: MarketSpec) -> None:
    """Raise `SpecError` naming the field that makes a session (its warm-up and its day of
    ``day_steps``, else ``n_steps`` or the synthetic day, times ``step_seconds``) last longer
    than `MAX_SESSION_SECONDS` (a tape's day is the tape's: not counted here)."""
    steps = spec.day_steps or spec.n_steps or SYNTHETIC_DAY_STEPS
    warmup = spec.warmup_seconds or 0.0
    seconds = warmup + steps * spec.step_seconds
    if seconds <= MAX_SESSION_SECONDS:
        return
    # blamed on the warm-up when it is most of it, else on what is off the usual one-minute steps
    if warmup > steps * spec.step_seconds:
        longest = "warmup_seconds"
    elif spec.step_seconds > 60 or not (spec.day_steps or spec.n_steps):
        longest = "step_seconds"
    else:
        longest = "day_steps" if spec.day_steps else "n_steps"
    raise SpecError(
        longest,
        f"the session would last {seconds:,.0f} s ({steps:,} steps of {spec.step_seconds:g} s"
        f"{f', after {warmup:g} s of warm-up' if warmup else ''}), longer than "
        f"{MAX_SESSION_SECONDS:,.0f} s (a week), got {getattr(spec, longest)!r}",
    )


def _check_trader(table: Mapping[str, Any], path: tuple) -> None:
    """Raise `SpecError` at ``path`` (and the parameter) for a trader table's parameter its
    class does not take (with the nearest name) or a value it rejects (the flow mechanisms'
    tables name the key inside, e.g. ``traders[0].hawkes.decay``; the trader's own checks
    say which parameter)."""
    cls = TRADERS[table["type"]]
    names = list(inspect.signature(cls).parameters)
    for key in table:
        if key != "type" and key not in names:
            hint = did_you_mean(key, names)
            reason = f"{cls.__name__} takes no parameter {key!r}{hint}; it takes {names}"
            raise SpecError((*path, key), reason)
    try:
        _trader(table)
    except ParameterError as error:
        raise SpecError((*path, *error.path), error.reason) from None
    except ValueError as error:  # a trader's own check of a plain parameter
        raise SpecError(path, str(error)) from None


def _positive(x: float) -> bool:
    return math.isfinite(x) and x > 0


def observation_kinds(kinds: str | Sequence[str], n_seats: int) -> list[str]:
    """One observation kind per seat from one kind or a sequence of them; `SpecError`
    otherwise."""
    out = [kinds] * n_seats if isinstance(kinds, str) else list(kinds)
    if len(out) != n_seats or any(k not in OBSERVATIONS for k in out):
        raise SpecError(
            "observation",
            f"must be one of {list(OBSERVATIONS)}, or one per seat ({n_seats} seats), "
            f"got {kinds!r}{did_you_mean(kinds, OBSERVATIONS)}",
        )
    return out
