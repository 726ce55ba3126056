"""The market: order book, background traders, tapes, and its Gymnasium / PettingZoo faces.

Importing this package registers with Gymnasium ``tradearena/SyntheticMarket-v0`` (the
taker task), ``tradearena/ReplayMarket-v0`` (a replayed day),
``tradearena/AlmgrenChriss-v0`` (the optimal-execution model market of
`envs.execution_model`) and one id per task of `envs.tasks.TASKS`
(``tradearena/MarketMaking-v0``, ``tradearena/Execution-v0``).
"""

from gymnasium.envs.registration import register, registry

from envs.book import Fill, OrderBook, Side
from envs.tasks import TASKS

__all__ = ["Fill", "OrderBook", "Side"]

for _id, _entry, _kwargs in (
    ("tradearena/SyntheticMarket-v0", "envs.trading_env:TradingEnv", {}),
    ("tradearena/ReplayMarket-v0", "envs.trading_env:make_replay_env", {}),
    ("tradearena/AlmgrenChriss-v0", "envs.execution_model:AlmgrenChrissMarket", {}),
    *((t.gym_id, "envs.trading_env:TradingEnv", t.gym_keywords()) for t in TASKS.values()),
):
    if _id not in registry:
        register(id=_id, entry_point=_entry, kwargs=_kwargs, disable_env_checker=False)
