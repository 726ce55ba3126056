"""Agents for tradearena: the `Agent` interface, baselines, tabular learners and a registry.

``agents.make("raql", n_states=54, n_actions=3, seed=0)`` builds an agent by registry id;
``agents.names()`` lists the ids, ``agents.describe()`` gives one line each, and
``agents.check_agent(cls_or_instance, env)`` checks the contract and returns its report;
``agent.save(path)`` writes an agent and ``agents.load(path)`` reads it back (`agents.saving`);
``agents.add_folders(path)`` lets ``"module:ClassName"`` ids import from a folder of one's own
(``agents.folders()`` lists those added).

The names are imported on first use (PEP 562), so that ``from tradearena.agents import Agent``
loads neither the market nor pandas.

Two module names recur in the market's rooms: `agents.base` is the seats' contract, as
`envs.simulator.traders.base` is the background traders'; `agents.rllib` runs a policy
trained by RLlib as an agent, while `envs.rllib` is the market's face for RLlib's training.
"""

if __name__ != "tradearena.agents":  # the folder imported by its bare name, from the project's root
    raise ImportError(f"{__name__} is installed as tradearena.agents: import tradearena.agents")

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names for type checkers, which do not run __getattr__
    from tradearena.agents.base import Agent as Agent
    from tradearena.agents.checks import AgentContractError as AgentContractError
    from tradearena.agents.checks import check_agent as check_agent
    from tradearena.agents.registry import add_folders as add_folders
    from tradearena.agents.registry import describe as describe
    from tradearena.agents.registry import folders as folders
    from tradearena.agents.registry import make as make
    from tradearena.agents.registry import names as names
    from tradearena.agents.registry import resolve as resolve
    from tradearena.agents.saving import MarketMismatchError as MarketMismatchError
    from tradearena.agents.saving import SavedAgentError as SavedAgentError
    from tradearena.agents.saving import StateError as StateError
    from tradearena.agents.saving import VersionError as VersionError
    from tradearena.agents.saving import load as load

_WHERE = {
    "Agent": "base",
    "AgentContractError": "checks",
    "check_agent": "checks",
    "add_folders": "registry",
    "describe": "registry",
    "folders": "registry",
    "make": "registry",
    "names": "registry",
    "resolve": "registry",
    "MarketMismatchError": "saving",
    "SavedAgentError": "saving",
    "StateError": "saving",
    "VersionError": "saving",
    "load": "saving",
}
"""Public name -> the module of this package that defines it."""

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    """The public ``name``, imported from its module on first use."""
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})
