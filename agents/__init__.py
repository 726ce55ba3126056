"""Agents for tradearena: the `Agent` interface, baselines, tabular learners and a registry.

``agents.make("raql", n_states=54, n_actions=3, seed=0)`` builds an agent by registry id;
``agents.names()`` lists the ids, ``agents.describe()`` gives one line each, and
``agents.check_agent(cls_or_instance, env)`` checks the contract and returns its report;
``agent.save(path)`` writes an agent and ``agents.load(path)`` reads it back (`agents.saved`);
``agents.add_folders(path)`` lets ``"module:ClassName"`` ids import from a folder of one's own.
"""

if __name__ != "tradearena.agents":  # the folder imported by its bare name, from the project's root
    raise ImportError(f"{__name__} is installed as tradearena.agents: import tradearena.agents")

from tradearena.agents.base import Agent
from tradearena.agents.checks import AgentContractError, check_agent
from tradearena.agents.loading import load
from tradearena.agents.registry import add_folders, describe, make, names, resolve
from tradearena.agents.saved import MarketMismatchError, SavedAgentError, StateError, VersionError

__all__ = [
    "Agent",
    "AgentContractError",
    "MarketMismatchError",
    "SavedAgentError",
    "StateError",
    "VersionError",
    "add_folders",
    "check_agent",
    "describe",
    "load",
    "make",
    "names",
    "resolve",
]
