"""The market: order book, background traders, tapes, and its Gymnasium / PettingZoo faces.

Importing this package registers with Gymnasium ``tradearena/SyntheticMarket-v0`` (the
taker task), ``tradearena/ReplayMarket-v0`` (a replayed day),
``tradearena/AlmgrenChriss-v0`` (the optimal-execution model market of
`envs.execution_model`) and one id per task of `envs.tasks.TASKS`
(``tradearena/MarketMaking-v0``, ``tradearena/Execution-v0``). ``gymnasium.make_vec`` with a
market id gives the batched `envs.vector.MarketVectorEnv`.
"""

if __name__ != "tradearena.envs":  # the folder imported by its bare name, from the project's root
    raise ImportError(f"{__name__} is installed as tradearena.envs: import tradearena.envs")

from gymnasium.envs.registration import register, registry

from tradearena.envs.simulator.book import Fill, OrderBook, Side
from tradearena.envs.tasks import TASKS

__all__ = ["Fill", "OrderBook", "Side"]

_VECTOR = "tradearena.envs.vector:MarketVectorEnv"
for _id, _entry, _vector, _kwargs in (
    ("tradearena/SyntheticMarket-v0", "tradearena.envs.trading_env:TradingEnv", _VECTOR, {}),
    (
        "tradearena/ReplayMarket-v0",
        "tradearena.envs.trading_env:make_replay_env",
        _VECTOR,
        {"tape": "synthetic"},
    ),
    (
        "tradearena/AlmgrenChriss-v0",
        "tradearena.envs.execution_model:AlmgrenChrissMarket",
        None,
        {},
    ),
    *(
        (t.gym_id, "tradearena.envs.trading_env:TradingEnv", _VECTOR, t.gym_keywords())
        for t in TASKS.values()
    ),
):
    if _id not in registry:
        register(
            id=_id,
            entry_point=_entry,
            vector_entry_point=_vector,
            kwargs=_kwargs,
            disable_env_checker=False,
        )
