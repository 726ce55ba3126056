"""The market: order book, background traders, tapes, and its Gymnasium / PettingZoo faces.

Importing this package registers ``tradearena/SyntheticMarket-v0`` and
``tradearena/ReplayMarket-v0`` with Gymnasium.
"""

from gymnasium.envs.registration import register, registry

from envs.book import Fill, OrderBook, Side

__all__ = ["Fill", "OrderBook", "Side"]

for _id, _entry in (
    ("tradearena/SyntheticMarket-v0", "envs.trading_env:TradingEnv"),
    ("tradearena/ReplayMarket-v0", "envs.trading_env:make_replay_env"),
):
    if _id not in registry:
        register(id=_id, entry_point=_entry, disable_env_checker=False)
