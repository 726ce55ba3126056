"""What every background trader shares: the class it extends and helpers for its order times.

A background trader is a *population* of participants of one kind (1000 noise traders are one
`Noise` object): vectorised over its members, it returns in one numpy batch all the orders they
send in an interval of market time, and the market merges the batches of all traders in time
order. Decisions inside an interval use what the market showed at its start. What does not
depend on the market (arrival times, sizes, coin flips, a fundamental value) is drawn once per
session in `reset`, so an interval costs a slice and a few array operations. The batch type
and the order kinds are in `envs.simulator.orders`.
"""

from __future__ import annotations

import numbers
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tradearena.envs.errors import ParameterError
from tradearena.envs.simulator.arrivals import Hawkes, Profile, arrival_times
from tradearena.envs.simulator.orders import Orders, Program
from tradearena.envs.simulator.sizes import SizeMixture

if TYPE_CHECKING:
    from tradearena.envs.simulator.book import Fill, OrderBook
    from tradearena.envs.simulator.market import Market


SIDES = np.array([-1, 1], dtype=np.int32)  # sell, buy: drawn as SIDES[rng.integers(0, 2, n)]


def require(ok: bool, field: str, rule: str, value: object) -> None:
    """Raise `ParameterError` naming ``field`` unless ``ok``: it must be ``rule``."""
    if not ok:
        raise ParameterError(field, f"must be {rule}, got {value!r}")


MAX_MEMBERS = 100_000
"""The most members one population may have (a trader's ``n_agents``, a market's
``extra_zi``): a hundred times rmsc04's largest population (1000 noise traders). A day of
that many zero-intelligence traders draws about 10^7 orders up front (some hundreds of MB);
more would exhaust a worker's memory before the first step."""


def members(n_agents: object) -> int:
    """``n_agents`` as a population's size: an integer in [1, `MAX_MEMBERS`], else
    `ParameterError` naming ``n_agents``."""
    whole = isinstance(n_agents, numbers.Integral) and not isinstance(n_agents, bool)
    ok = whole and 1 <= n_agents <= MAX_MEMBERS
    require(ok, "n_agents", f"an integer in [1, {MAX_MEMBERS:,}]", n_agents)
    return int(n_agents)


def size_range(size: object) -> tuple[int, int]:
    """``size`` as an inclusive range of order sizes (shares): [low, high] integers with
    1 <= low <= high, else `ParameterError` naming ``size``."""
    ok = (
        isinstance(size, tuple | list)
        and len(size) == 2
        and all(isinstance(x, numbers.Integral) and not isinstance(x, bool) for x in size)
        and 1 <= size[0] <= size[1]
    )
    require(ok, "size", "[low, high] shares with 1 <= low <= high", size)
    return int(size[0]), int(size[1])


def wake_period(seconds: object) -> float:
    """``seconds`` as the time between a trader's wake-ups: a finite number > 0, else
    `ParameterError` naming ``period``."""
    ok = isinstance(seconds, numbers.Real) and not isinstance(seconds, bool)
    require(ok and 0 < seconds < np.inf, "period", "a finite number > 0 seconds", seconds)
    return float(seconds)


class Trader:
    """A population of background participants of one kind.

    Subclasses set ``n_owners`` (how many owner ids their members need) and implement
    `orders`. The market calls `reset` at the start of a session with the owner ids it gave
    the population and `orders` once per interval. What a member holds is in the book's
    record of fills (``market.book.positions(...)``).
    """

    n_owners: int = 1
    file_parameters: tuple[str, ...] = ()
    """The parameters that name a file (a path; in an experiment file, relative to its
    folder): a run checks each before it starts and keeps its own copy, with the files it
    names (`file_parts`)."""

    @classmethod
    def file_parts(cls, parameter: str, path: Path) -> list[Path]:
        """The files that the file ``path``, given as ``parameter``, consists of: itself first,
        then the files it names, all in its folder (by default none). `ParameterError` naming
        ``parameter`` and the file when one is not a regular file."""
        if not path.is_file():
            reason = "not a regular file" if path.exists() else "no such file"
            raise ParameterError(parameter, f"{path}: {reason}")
        return [path]

    def reset(self, market: Market, owners: range, rng: np.random.Generator) -> None:
        """Start a session: remember ``owners``; may place an initial book into
        ``market.book``."""
        self.owners = owners

    def orders(self, market: Market, t0: float, t1: float, rng: np.random.Generator) -> Orders:
        """The orders the population sends in [t0, t1) seconds after midnight."""
        raise NotImplementedError

    def program(self) -> Program | None:
        """After `reset`: the session's rows and the rule that prices them, for the market's
        compiled flow (`envs.simulator.flow.Flow`), which then stands in for `orders`; None (the
        default) when the population only has `orders`."""
        return None

    def warm_up(self, market: Market, t0: float, t1: float) -> bool:
        """As the market's only population, carry out its flow over [t0, t1) before the open
        in a way of its own (say, from a state it kept) and return True; False (the default)
        has the market run the flow."""
        return False

    def handle(self, book: OrderBook, ref: int) -> list[Fill]:
        """Carry out a HANDLE row of this trader on ``book``; return its fills."""
        raise NotImplementedError(f"{type(self).__name__} sends no HANDLE rows")


def window(times: np.ndarray, t0: float, t1: float) -> slice:
    """The slice of sorted ``times`` that falls in [t0, t1)."""
    lo, hi = np.searchsorted(times, (t0, t1)).tolist()
    return slice(lo, hi)


def poisson_times(
    rate: float,
    n_agents: int,
    t0: float,
    t1: float,
    rng: np.random.Generator,
    *,
    profile: Profile | None = None,
    hawkes: Hawkes | None = None,
    day: tuple[float, float] = (0.0, 1.0),
) -> tuple[np.ndarray, np.ndarray]:
    """Arrivals of ``n_agents`` independent Poisson processes of ``rate`` per second in
    [t0, t1): (times, agent indices (int32)), sorted by time. With ``profile`` (over ``day``,
    its first and last second) the rate follows it; with ``hawkes`` the population's arrivals
    are one self-exciting process of that mean rate, each arrival a random member's (see
    `envs.simulator.arrivals.arrival_times`)."""
    times = arrival_times(rate * n_agents, t0, t1, rng, profile, hawkes, day)
    return times, rng.integers(0, n_agents, size=len(times), dtype=np.int32)  # int64's numbers


def order_sizes(
    size: tuple[int, int], sizes: SizeMixture | None, n: int, rng: np.random.Generator
) -> np.ndarray:
    """``n`` order sizes (shares, int32, shape (n,)): drawn from the mixture ``sizes`` when
    given, else uniform integers in the inclusive range ``size``."""
    if sizes is not None:
        return sizes.draw(rng, n)
    return rng.integers(size[0], size[1] + 1, size=n, dtype=np.int32)
