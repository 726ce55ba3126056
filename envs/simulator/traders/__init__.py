"""Background traders: populations that send order flow between the seats' decisions.

`base` holds the class every population extends, as `agents.base` holds the contract every
seat's agent keeps.
"""

import inspect
from collections.abc import Mapping
from typing import Any

from tradearena.envs.errors import ParameterError, did_you_mean, keyword_numbers
from tradearena.envs.simulator.arrivals import Hawkes, Profile
from tradearena.envs.simulator.sizes import SizeMixture
from tradearena.envs.simulator.traders.base import MAX_MEMBERS, Trader
from tradearena.envs.simulator.traders.learned import LearnedFlow
from tradearena.envs.simulator.traders.market_maker import MarketMaker
from tradearena.envs.simulator.traders.metaorder import Metaorder
from tradearena.envs.simulator.traders.momentum import Momentum
from tradearena.envs.simulator.traders.noise import Noise
from tradearena.envs.simulator.traders.replay import MarketReplay
from tradearena.envs.simulator.traders.zero_intelligence import ZeroIntelligence

__all__ = [
    "MAX_MEMBERS",
    "LearnedFlow",
    "MarketMaker",
    "MarketReplay",
    "Metaorder",
    "Momentum",
    "Noise",
    "ParameterError",
    "TRADERS",
    "Trader",
    "build_trader",
    "ZeroIntelligence",
    "light",
    "rmsc04",
]

TRADERS: dict[str, type[Trader]] = {
    cls.__name__: cls
    for cls in (ZeroIntelligence, Noise, Momentum, MarketMaker, Metaorder, LearnedFlow)
}
"""The background traders a config may name in ``[[market.traders]]``, by class name."""


def build_trader(kind: str, params: Mapping[str, Any]) -> Trader:
    """The `TRADERS` trader ``kind`` built with ``params``: a parameter it does not take is a
    `ParameterError` naming it, with the nearest parameter name, and so is one it needs and
    is not given, a number not finite or not of the kind it declares (`keyword_numbers`),
    and a value its checks refuse."""
    cls = TRADERS[kind]
    parameters = inspect.signature(cls).parameters
    allowed = list(parameters)
    for key in params:
        if key not in allowed:
            hint = did_you_mean(key, allowed)
            reason = f"{kind} takes no parameter {key!r}{hint}; it takes {allowed}"
            raise ParameterError(key, reason)
    for name, parameter in parameters.items():
        if parameter.default is parameter.empty and name not in params:
            raise ParameterError(name, f"{kind} needs it: it has no default")
    keyword_numbers(cls, params)
    return cls(**params)


def rmsc04(
    *,
    profile: Profile | list[float] | dict | None = None,
    hawkes: Hawkes | dict | None = None,
    sizes: SizeMixture | dict | None = None,
) -> list[Trader]:
    """A population the size of ABIDES' rmsc04 configuration: 1000 noise traders (one trade a
    day), 102 zero-intelligence traders (one arrival per 175 s each), 2 market makers (10
    levels a side every 60 s) and 12 momentum traders (every 37 s). The flow mechanisms
    (off by default) go to the traders that take them: ``profile`` and ``sizes`` to the noise
    and zero-intelligence traders, ``hawkes`` to the zero-intelligence traders."""
    return [
        Noise(1000, profile=profile, sizes=sizes),
        ZeroIntelligence(102, arrival_rate=1 / 175, profile=profile, hawkes=hawkes, sizes=sizes),
        MarketMaker(2, period=60.0, levels=10),
        Momentum(12, period=37.0),
    ]


def light(
    *,
    profile: Profile | list[float] | dict | None = None,
    hawkes: Hawkes | dict | None = None,
    sizes: SizeMixture | dict | None = None,
) -> list[Trader]:
    """A small population for quick experiments (about a tenth of `rmsc04`'s flow): 100 noise
    traders, 20 zero-intelligence traders (one arrival per 60 s each), 1 market maker (5
    levels a side every 30 s) and 4 momentum traders; the flow mechanisms as in `rmsc04`."""
    return [
        Noise(100, profile=profile, sizes=sizes),
        ZeroIntelligence(20, arrival_rate=1 / 60, profile=profile, hawkes=hawkes, sizes=sizes),
        MarketMaker(1, period=30.0, levels=5),
        Momentum(4, period=37.0),
    ]
