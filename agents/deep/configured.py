"""`ConfiguredAgent`: an agent whose `state_dict` carries the keywords that rebuild it.

The deep learners keep their constructor keywords under ``state["config"]`` beside their
learned state. `ConfiguredAgent.from_state` builds a new agent from such a state (pickling
goes through it); `ConfiguredAgent.load_state_dict` restores one into the existing objects of
an agent built with the same config (so that whoever holds a part of it, such as an
adversary seat holding its owner, keeps holding the live part).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from typing import Any, Self

from tradearena.agents.base import Agent, check_keys

__all__ = ["ConfiguredAgent", "check_config", "saved_config"]


def saved_config(state: Mapping[str, Any]) -> Mapping[str, Any]:
    """``state["config"]``; ValueError if the state has none."""
    if "config" not in state:
        raise ValueError("state_dict: missing keys ['config']")
    return state["config"]


def check_config(state: Mapping[str, Any], config: Mapping[str, Any], name: str) -> None:
    """ValueError unless ``state["config"]`` equals ``config``, naming the keys that differ."""
    saved = saved_config(state)
    differ = sorted(
        key for key in saved.keys() | config.keys() if saved.get(key) != config.get(key)
    )
    if differ:
        raise ValueError(
            f"state_dict: config differs in {differ} from this agent's; build a new one with "
            f"{name}.from_state(state)"
        )


class ConfiguredAgent(Agent):
    """An agent whose `state_dict` holds ``"config"`` (its constructor keywords, `config`)
    and its learned state; subclasses write `state_dict` and `_restore`."""

    @property
    @abstractmethod
    def config(self) -> dict[str, Any]:
        """The keyword arguments that rebuild this agent."""

    @abstractmethod
    def _restore(self, state: Mapping[str, Any]) -> None:
        """Restore a `state_dict` with this agent's config and keys into its objects."""

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> Self:
        """A new agent built from ``state["config"]`` and restored to ``state``."""
        agent = cls(**saved_config(state))
        agent.load_state_dict(state)
        return agent

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore a `state_dict` of an agent with this config into this agent's objects;
        ValueError naming a differing config, unknown or missing keys, or wrong shapes."""
        check_config(state, self.config, type(self).__name__)
        check_keys(state, self.state_dict())
        self._restore(state)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle (and deep-copy) through `from_state` and the `state_dict`, keeping the
        `agents.make` recipe that `Agent.save` needs."""
        recipe = vars(self).get("recipe")
        return type(self).from_state, (self.state_dict(),), recipe and {"recipe": recipe}
