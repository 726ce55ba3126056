"""An agent's policy map: its greedy action over inventory and time left in a seat of a market.

Apart from the analysis's figures (`evaluation.analysis.plots`) because it needs the agent and
the market; draws on the ``ax`` it is given (or a new bare `Figure`), as they do.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

import numpy as np
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.colors import BoundaryNorm, ListedColormap
from matplotlib.patches import Patch

from tradearena.agents.base import Agent
from tradearena.envs.simulator.actions import make_actions
from tradearena.envs.simulator.features import feature_names
from tradearena.envs.spec import MarketSpec
from tradearena.evaluation.analysis.plots import axes_or_new

__all__ = ["policy_grid", "policy_map"]


def policy_grid(
    agent: Agent,
    market: MarketSpec,
    inventory: np.ndarray,
    time_left: np.ndarray,
    features: Mapping[str, float] | None = None,
) -> np.ndarray:
    """The greedy actions of ``agent`` in a seat of ``market`` over ``inventory`` (fraction of
    the position limit, shape (I,)) and ``time_left`` (fraction of the session, shape (T,)),
    int64 (T, I); every other feature held at ``features`` (by name; default 0, with a
    one-tick spread). A tabular agent sees the states of the market's discretizer. The agent
    acts on a copy, so its own generator is left as it was."""
    names = feature_names(market.windows, market.signal)
    base = np.zeros(len(names), dtype=np.float32)
    for name, value in {"spread": 1.0, **(features or {})}.items():
        base[names.index(name)] = value
    grid = np.tile(base, (len(time_left), len(inventory), 1))
    grid[..., names.index("inventory")] = np.asarray(inventory)[None, :]
    grid[..., names.index("time_left")] = np.asarray(time_left)[:, None]
    rows = grid.reshape(-1, len(names))
    if agent.observation == "tabular":
        discretize = market.state_discretizer()
        rows = np.array([discretize(row) for row in rows], dtype=np.int64)
    actions = copy.deepcopy(agent).act_batch(rows, explore=False)
    return actions.reshape(len(time_left), len(inventory))


def policy_map(
    agent: Agent,
    market: MarketSpec,
    ax: Axes | None = None,
    *,
    inventory: np.ndarray | None = None,
    time_left: np.ndarray | None = None,
    features: Mapping[str, float] | None = None,
) -> Axes:
    """The agent's greedy action over inventory and time left (`policy_grid`; defaults: 41
    inventories from -1 to 1, 31 times left from 0 to 1), one colour per action of the
    market's action set, the actions taken named in the legend."""
    ax = axes_or_new(ax, (7.0, 4.2))
    inventory = np.linspace(-1.0, 1.0, 41) if inventory is None else inventory
    time_left = np.linspace(0.0, 1.0, 31) if time_left is None else time_left
    actions = policy_grid(agent, market, inventory, time_left, features)
    names = make_actions(market.action_set, market.order_size, market.parent_order).names
    palette = colormaps["tab20"].colors  # the strong shades first, then the light ones
    colours = [palette[(2 * i) % 20 + (2 * i) // 20 % 2] for i in range(len(names))]
    norm = BoundaryNorm(np.arange(len(names) + 1) - 0.5, len(names))
    ax.pcolormesh(
        inventory, time_left, actions, cmap=ListedColormap(colours), norm=norm, shading="nearest"
    )
    taken = sorted(set(actions.ravel().tolist()))
    ax.legend(
        [Patch(color=colours[a]) for a in taken],
        [names[a] for a in taken],
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        fontsize="small",
        title="greedy action",
    )
    ax.set_xlabel("inventory (fraction of the position limit)")
    ax.set_ylabel("time left (fraction of the session)")
    ax.set_title(f"policy of {agent.name}")
    return ax
