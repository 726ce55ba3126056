"""The market: order book, background traders, tapes, and its Gymnasium / PettingZoo faces.

Importing this package registers with Gymnasium ``tradearena/SyntheticMarket-v0`` (the
taker task), ``tradearena/ReplayMarket-v0`` (a replayed day),
``tradearena/AlmgrenChriss-v0`` (the optimal-execution model market of
`envs.execution_model`) and one id per task of `envs.tasks.TASKS`
(``tradearena/MarketMaking-v0``, ``tradearena/Execution-v0``). ``gymnasium.make_vec`` with a
market id gives the batched `envs.vector.MarketVectorEnv`. It pins torch's CPU kernels first
(`envs.cpu`).

`envs.rllib` is the market's face for RLlib's training; a policy it trained acts as an agent
through `agents.rllib`.
"""

if __name__ != "tradearena.envs":  # the folder imported by its bare name, from the project's root
    raise ImportError(f"{__name__} is installed as tradearena.envs: import tradearena.envs")

from tradearena.envs.cpu import pin_cpu_arithmetic

pin_cpu_arithmetic()  # before torch computes anything: the same numbers on every AVX2 machine

from gymnasium.envs.registration import register, registry  # noqa: E402

from tradearena.envs.simulator.book import Fill, OrderBook, Side  # noqa: E402

__all__ = ["Fill", "OrderBook", "Side"]

if "tradearena/SyntheticMarket-v0" not in registry:  # registered once per process
    register(
        id="tradearena/SyntheticMarket-v0",
        entry_point="tradearena.envs.trading_env:TradingEnv",
        vector_entry_point="tradearena.envs.vector:MarketVectorEnv",
        kwargs={},
        disable_env_checker=False,
    )
    register(
        id="tradearena/ReplayMarket-v0",
        entry_point="tradearena.envs.trading_env:make_replay_env",
        vector_entry_point="tradearena.envs.vector:MarketVectorEnv",
        kwargs={"tape": "synthetic"},
        disable_env_checker=False,
    )
    register(
        id="tradearena/AlmgrenChriss-v0",
        entry_point="tradearena.envs.execution_model:AlmgrenChrissMarket",
        kwargs={},
        disable_env_checker=False,
    )
    register(
        id="tradearena/MarketMaking-v0",
        entry_point="tradearena.envs.trading_env:TradingEnv",
        vector_entry_point="tradearena.envs.vector:MarketVectorEnv",
        kwargs={"task": "making"},
        disable_env_checker=False,
    )
    register(
        id="tradearena/Execution-v0",
        entry_point="tradearena.envs.trading_env:TradingEnv",
        vector_entry_point="tradearena.envs.vector:MarketVectorEnv",
        kwargs={"task": "execution"},
        disable_env_checker=False,
    )
    register(
        id="tradearena/InformedTrading-v0",
        entry_point="tradearena.envs.trading_env:TradingEnv",
        vector_entry_point="tradearena.envs.vector:MarketVectorEnv",
        kwargs={"task": "informed"},
        disable_env_checker=False,
    )
