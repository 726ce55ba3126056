"""`load`: an agent built back from the directory `Agent.save` wrote (see `agents.saved`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from tradearena.agents.base import Agent
from tradearena.agents.registry import make, names
from tradearena.agents.saved import (
    MarketMismatchError,
    SavedAgentError,
    StateError,
    read_header,
    read_state,
    seat_view,
)
from tradearena.envs.spec import MarketSpec

__all__ = ["load"]


def load(
    path: str | Path, *, custom: Iterable[str] = (), market: MarketSpec | None = None
) -> Agent:
    """The agent saved at ``path``, built with `agents.make` and restored to its saved state.

    ``custom``: the ``"module:Class"`` ids that may be imported (a file naming another one is
    refused); registered ids always may. ``market``: the market the agent will sit in; it is
    built for that market (its spec and spaces), and `MarketMismatchError` names what differs
    when the seat's actions or observations are not those it was saved from. Errors:
    `VersionError`, `StateError`, `SavedAgentError` (all naming the file)."""
    path = Path(path)
    header = read_header(path)
    agent_id = header["id"]
    if agent_id not in names() and agent_id not in set(custom):
        raise SavedAgentError(
            f"{path}: saved agent {agent_id!r} is not a registered id; pass it in custom= "
            "(a config names it as the agent's id) to import its module"
        )
    standard = {
        "seed": header["seed"],
        "observation_space": header["observation_space"],
        "action_space": header["action_space"],
    }
    saved_market = header["market_spec"]
    if market is not None:
        here = {
            "observation_space": market.observation_space(header["observation"]),
            "action_space": market.action_space,
        }
        saved, now = header["view"], seat_view(market, header["observation"])
        if saved is None:  # saved from no market: its spaces are what it was made for
            saved = {k: v for k, v in standard.items() if k in here and v is not None}
            now = {k: here[k] for k in saved}
        if saved != now:
            raise MarketMismatchError(
                f"{path}: {agent_id} was saved from a seat with other actions or observations "
                f"than this market's: saved {'; '.join(_differences(saved, now))}"
            )
        standard |= {**here, "market_spec": market}
    elif saved_market is not None:
        standard["market_spec"] = MarketSpec(**saved_market)
    keywords = {k: v for k, v in standard.items() if v is not None}
    agent = make(agent_id, **header["params"], **keywords)
    _, state = read_state(path)
    template = agent.state_dict()
    state |= {key: template[key] for key in header["left_out"] if key in template}
    try:
        agent.load_state_dict(state)
    except (ValueError, KeyError, TypeError) as error:
        raise StateError(f"{path}: the saved state does not fit {agent_id}: {error}") from None
    return agent


def _differences(saved: Mapping[str, Any], here: Mapping[str, Any]) -> list[str]:
    """``"key <saved> here <here>"`` for each key whose values differ."""
    return [
        f"{key} {saved.get(key)!r} here {here.get(key)!r}"
        for key in sorted(saved.keys() | here.keys())
        if saved.get(key) != here.get(key)
    ]
