"""Agents for tradearena: the `Agent` interface, baselines, tabular learners and a registry.

``agents.make("raql", n_states=54, n_actions=3, seed=0)`` builds an agent by registry id;
``agents.names()`` lists the ids, ``agents.describe()`` gives one line each, and
``agents.check_agent(cls_or_instance, env)`` checks the contract and returns its report;
``agents.add_folders(path)`` lets ``"module:ClassName"`` ids import from a folder of one's own.
"""

from agents.base import Agent
from agents.checks import AgentContractError, check_agent
from agents.registry import add_folders, describe, make, names, resolve

__all__ = [
    "Agent",
    "AgentContractError",
    "add_folders",
    "check_agent",
    "describe",
    "make",
    "names",
    "resolve",
]
