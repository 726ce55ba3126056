"""Tournaments with roles: a role-symmetric game of makers and takers, say.

``[tournament] roles`` declares each role's seats and the labels of the agents it may play,
in order::

    [tournament]
    roles = { maker = { seats = 2, strategies = ["raql", "hold"] },
              taker = { seats = 1, strategies = ["twap", "random"] } }

A profile counts the seats on each strategy of each role (role by role, each role's counts
summing to its seats); its seats are the roles' blocks in order, so a seat's role is its
place. Its key joins the roles' `profile_key` with ``+`` (``"2-0+1-0"``). The payoff table
(`analysis.roles.RoleTable`, columns ``n_<role>_<strategy>`` and ``u_<role>_<strategy>``)
averages the payoffs of a role's seats on a strategy over repetitions; ``tradearena games
payoffs.csv --roles maker,taker`` reads it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import product

import numpy as np
import pandas as pd

from tradearena.evaluation.analysis.payoffs import PayoffTable, profile_key
from tradearena.evaluation.analysis.roles import RoleTable
from tradearena.evaluation.experiment.schema import Config, Locator, Role

__all__ = ["check_roles", "role_key", "role_profiles", "role_table", "seat_roles"]


def check_roles(config: Config, where: Locator) -> None:
    """Each role's ``strategies`` are labels of ``[[agents]]`` (their form, the config's
    check), and every agent plays in some role; `ConfigError` naming the field."""
    roles = config.tournament.roles
    labels = config.labels
    for role, table in roles.items():
        unknown = [s for s in table.strategies if s not in labels]
        if unknown:
            raise where.error(
                ("tournament", "roles", role, "strategies"),
                f"{unknown} are not [[agents]] labels; those are {labels}",
            )
    idle = [label for label in labels if not any(label in t.strategies for t in roles.values())]
    if idle:
        raise where.error(("tournament", "roles"), f"agents {idle} play in no role")


def seat_roles(roles: dict[str, Role]) -> list[str]:
    """The role of each seat, in seat order."""
    return [role for role, table in roles.items() for _ in range(table.seats)]


def role_profiles(roles: dict[str, Role]) -> Iterator[tuple[str, tuple[str, ...]]]:
    """Every profile of the role game: (its key, its seats' labels), each role's profiles in
    `PayoffTable.profiles` order, the first role's slowest."""
    each = [
        list(PayoffTable.profiles(table.seats, len(table.strategies))) for table in roles.values()
    ]
    for counts in product(*each):
        seats = tuple(
            label
            for table, own in zip(roles.values(), counts)
            for label, n in zip(table.strategies, own)
            for _ in range(n)
        )
        yield "+".join(profile_key(own) for own in counts), seats


def role_key(roles: dict[str, Role], labels: Sequence[str]) -> str:
    """The key of the profile whose seats hold ``labels`` (in seat order)."""
    keys, start = [], 0
    for table in roles.values():
        block = labels[start : start + table.seats]
        keys.append(profile_key([block.count(s) for s in table.strategies]))
        start += table.seats
    return "+".join(keys)


def role_table(seats: pd.DataFrame, roles: dict[str, Role]) -> RoleTable:
    """The role game's payoff table of a tournament's seat payoffs
    (`experiment.profiles.seat_payoffs`: columns profile, strategy, repetition, seat, payoff): each
    cell the mean payoff of the role's seats on the strategy in the profile, over repetitions."""
    columns = [f"{role}_{s}" for role, table in roles.items() for s in table.strategies]
    role_of = seat_roles(roles)
    named = seats.assign(
        column=[f"{role_of[s]}_{x}" for s, x in zip(seats["seat"], seats["strategy"])]
    )
    means = named.groupby(["profile", "column"], sort=True)["payoff"].mean()
    keys = sorted(set(named["profile"]))
    counts = np.array(
        [[int(n) for part in key.split("+") for n in part.split("-")] for key in keys]
    )
    payoffs = np.full(counts.shape, np.nan)
    for (key, column), value in means.items():
        payoffs[keys.index(key), columns.index(column)] = value
    declared = {role: (table.seats, list(table.strategies)) for role, table in roles.items()}
    return RoleTable.from_arrays(declared, counts, payoffs)
