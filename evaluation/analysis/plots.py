"""Figures of the analysis: learning curves, Sharpe bars, game dynamics.

An agent's policy map, which needs the agent and the market, is `evaluation.reports.policy_plots`.
Each function draws on the ``ax`` it is given (or on a new bare `Figure`) and returns it;
nothing goes through pyplot's global state, so they work in notebooks, scripts and headless
tests alike."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Polygon

from tradearena.envs.errors import replacing
from tradearena.evaluation.analysis.dynamics import (
    field,
    rest_points,
    rest_points_on_face,
    simplex_grid,
)
from tradearena.evaluation.analysis.payoffs import PayoffTable
from tradearena.evaluation.analysis.roles import RoleTable, role_gains
from tradearena.evaluation.analysis.summary import Checkpointing

__all__ = [
    "dynamics_figure",
    "equilibria_figure",
    "face_field",
    "flow_line",
    "learning_curves",
    "axes_or_new",
    "psro_figure",
    "role_dynamics_figure",
    "save_dynamics",
    "save_figure",
    "save_learning_curves",
    "save_sharpe_bars",
    "sharpe_bars",
    "simplex_faces",
    "simplex_field",
]


def axes_or_new(ax: Axes | None, size: tuple[float, float] = (6.4, 4.0)) -> Axes:
    """``ax``, or the axes of a new bare `Figure` of ``size`` (inches)."""
    if ax is not None:
        return ax
    return Figure(figsize=size, layout="constrained").add_subplot()


def sharpe_bars(
    summary: pd.DataFrame,
    ax: Axes | None = None,
    *,
    condition: str | None = None,
    metric: str = "sharpe",
) -> Axes:
    """Bars of ``metric`` per agent with their confidence intervals (``metric_low`` /
    ``metric_high`` columns of `evaluation.analysis.summary.summary_table`), for one condition.
    An agent whose ``metric`` is NaN has no bar but a label in its place: "no trades" for one
    that made nothing and held no share (a ratio of 0 over 0), "undefined" otherwise; one
    whose interval is NaN (one seed's value alone) has its bar and "no interval" on it. The
    labels read from zero: along their bar, or towards the side with room (down when every
    bar is negative)."""
    ax = axes_or_new(ax)
    rows = summary if condition is None else summary[summary["condition"] == condition]
    rows = rows.sort_values(metric, ascending=False)
    values = rows[metric].to_numpy(float)
    low = values - rows[f"{metric}_low"].to_numpy(float)
    high = rows[f"{metric}_high"].to_numpy(float) - values
    x = np.arange(len(rows))
    ax.bar(x, values, yerr=np.vstack([low, high]), capsize=4, color="tab:blue", alpha=0.8)
    ax.set_xticks(x, rows["agent"].tolist(), rotation=20)
    ax.set_xlim(-0.6, len(rows) - 0.4)  # every agent's place, a bar or not, inside the frame
    ax.axhline(0.0, color="black", linewidth=0.8)
    idle = np.zeros(len(rows), dtype=bool)  # made nothing and never held a share
    if "mean_pnl" in rows:
        exposure = rows.get("exposure", 0.0)
        idle = ((rows["mean_pnl"] == 0) & (exposure == 0)).to_numpy()
    bottom, top = ax.get_ylim()
    up = top >= -bottom  # more room above zero than below
    for i in np.flatnonzero(np.isnan(values)):
        text = "no trades" if idle[i] else "undefined"
        ax.text(x[i], 0.0, text, **_label_from(up), gid="nan")
    for i in np.flatnonzero(~np.isnan(values) & np.isnan(low)):  # on its bar, from zero
        label = _label_from(values[i] >= 0) | {"color": "white"}
        ax.text(x[i], 0.0, "no interval", **label, gid="no-interval")
    ax.set_ylabel(
        f"{metric.replace('_', ' ')} of test PnL per episode\n(mean over seeds, bootstrap interval)"
    )
    title = "Sharpe ratio by agent" if metric == "sharpe" else metric
    ax.set_title(title if condition in (None, "clean") else f"{title}: {condition}")
    return ax


def _label_from(up: bool) -> dict:
    """A bar chart's vertical grey label from its anchor, upwards or downwards."""
    return {"ha": "center", "va": "bottom" if up else "top", "rotation": 90, "color": "0.35"}


def learning_curves(
    records: pd.DataFrame,
    ax: Axes | None = None,
    *,
    training: Checkpointing | None = None,
    value: str = "pnl",
    window: int = 5,
) -> Axes:
    """``value`` (dollars) per episode against training episodes, for each agent: the mean
    over seeds with a 95% band over seeds (1.96 standard errors of the seeds' means).

    With greedy checkpoints (phase "eval", placed by ``training``'s ``evaluate_every``) the
    curve is their mean per checkpoint; otherwise the training episodes' own ``value``,
    smoothed by a moving average of ``window`` episodes."""
    ax = axes_or_new(ax)
    every = training.evaluate_every if training is not None else 0
    checkpoints = bool(every) and (records["phase"] == "eval").any()
    for agent, rows in records[records["phase"] == ("eval" if checkpoints else "train")].groupby(
        "agent", sort=True
    ):
        if checkpoints:
            point = rows["episode"] // training.evaluate_episodes * every
            per_seed = rows.groupby([point.rename("x"), "seed"])[value].mean()
        else:
            per_seed = rows.set_index(["episode", "seed"])[value].rename_axis(["x", "seed"])
        by_x = per_seed.groupby(level="x")
        mean, half = by_x.mean(), 1.96 * by_x.sem().fillna(0.0)
        if not checkpoints:
            mean = mean.rolling(window, min_periods=1).mean()
            half = half.rolling(window, min_periods=1).mean()
        ax.plot(mean.index, mean.to_numpy(), label=agent, marker="o" if checkpoints else None)
        ax.fill_between(mean.index, mean - half, mean + half, alpha=0.2)
    ax.set_xlabel("training episodes")
    what = "greedy checkpoints" if checkpoints else f"training, {window}-episode average"
    ax.set_ylabel(f"{value} per episode (dollars)")
    ax.set_title(f"Learning curves ({what}; 95% band over seeds)")
    ax.legend(fontsize="small", loc="center left", bbox_to_anchor=(1.01, 0.5))  # off the data
    return ax


def save_learning_curves(
    directory: Path, records: pd.DataFrame, training: Checkpointing | None = None
) -> list[Path]:
    """``learning_curves.png`` in ``directory`` when ``records`` hold training episodes."""
    if records.empty or records[records["phase"] == "train"].empty:
        return []
    return [_save(learning_curves(records, training=training), directory / "learning_curves.png")]


def save_sharpe_bars(directory: Path, summary: pd.DataFrame) -> list[Path]:
    """One Sharpe bar chart per condition of a summary table: ``sharpe.png`` for the clean
    market, ``sharpe_<condition>.png`` for the others."""
    written = []
    for condition in summary["condition"].unique() if not summary.empty else []:
        name = "sharpe.png" if condition == "clean" else f"sharpe_{condition}.png"
        written.append(_save(sharpe_bars(summary, condition=condition), directory / name))
    return written


def save_dynamics(table: PayoffTable, path: Path, *, payoff: str, weighting: str) -> Path:
    """`dynamics_figure` of a payoff table, titled with its payoff and weighting, at ``path``."""
    figure = dynamics_figure(table, weighting=weighting)
    title = f"Replicator dynamics\n{payoff} payoffs, {weighting} weighting, p = {table.p}"
    _title(figure, table.k, title)
    return save_figure(figure, path)


def _title(figure: Figure, k: int, title: str) -> None:
    """``title`` over the figure of a k-strategy game: over its one axes for k <= 3 (the
    figure's constrained layout keeps it whole), over the grid of faces for k >= 4."""
    if k <= 3:
        figure.axes[0].set_title(title)
    else:
        figure.suptitle(title)


def _save(ax: Axes, path: Path) -> Path:
    return save_figure(ax.figure, path)


def save_figure(figure: Figure, path: Path, dpi: int = 120) -> Path:
    """``figure`` as a PNG of ``dpi`` dots per inch at ``path``, written under a temporary name
    and renamed when complete (`envs.errors.replacing`)."""
    with replacing(path) as temporary:
        figure.savefig(temporary, dpi=dpi)
    return path


# ---------------------------------------------------------------------------------------------
# Replicator dynamics of an empirical game (tradearena.evaluation.analysis.dynamics)
# ---------------------------------------------------------------------------------------------
REST_POINT_COLOURS = {
    "stable": "black",
    "unstable": "white",
    "saddle": "0.6",
    "center": "tab:blue",
    "neutral": "tab:orange",
}
"""Face colour of a rest-point marker by kind: filled stable, open unstable, grey saddle."""

_CORNERS = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, math.sqrt(3) / 2]])
"""Cartesian corners of the 2-simplex: strategy 0 bottom left, 1 bottom right, 2 top."""


def _check_k(table: PayoffTable, low: int, high: float = math.inf) -> None:
    """Raise unless ``table`` is a `PayoffTable` with ``low <= k <= high`` strategies."""
    if not isinstance(table, PayoffTable) or not low <= table.k <= high:
        allowed = f"k = {low}" if low == high else f"k >= {low}"
        k = getattr(table, "k", None)
        raise ValueError(f"table: expected a PayoffTable with {allowed} strategies, got k = {k}")


def _mark_rest_points(
    ax: Axes, points: Sequence[tuple[np.ndarray, str]], to_xy: Callable[[np.ndarray], np.ndarray]
) -> None:
    """One scatter per kind of rest point (gid ``rest-points``), labelled for the legend;
    ``points`` are (mix, kind) pairs."""
    for kind, colour in REST_POINT_COLOURS.items():
        xs = np.array([x for x, of_kind in points if of_kind == kind])
        if xs.size:
            xy = to_xy(xs)
            ax.scatter(
                xy[:, 0],
                xy[:, 1],
                s=70,
                facecolors=colour,
                edgecolors="black",
                linewidths=1.2,
                zorder=4,
                label=kind,
                gid="rest-points",
            )


def flow_line(
    table: PayoffTable,
    ax: Axes | None = None,
    *,
    weighting: str = "tuyls",
    resolution: int = 201,
    arrows: int = 9,
) -> Axes:
    """Replicator flow of a 2-strategy game: ``xdot_1`` against ``x_1`` in ``[0, 1]``.

    The curve is ``xdot_1 = x_1 (f_1 - x . f)`` at ``resolution`` points; ``arrows`` arrows on
    the axis ``xdot = 0`` point the way the population moves; rest points are marked by kind
    (`REST_POINT_COLOURS`: filled stable, open unstable).
    """
    _check_k(table, 2, 2)
    ax = axes_or_new(ax)
    share = np.linspace(0.0, 1.0, resolution)
    xdot = field(table, np.column_stack([share, 1.0 - share]), weighting)[:, 0]
    ax.plot(share, xdot, color="tab:blue", linewidth=1.5)
    ax.axhline(0.0, color="black", linewidth=0.8)
    at = np.linspace(0.0, 1.0, arrows + 2)[1:-1]
    direction = np.sign(field(table, np.column_stack([at, 1.0 - at]), weighting)[:, 0])
    ax.quiver(
        at,
        np.zeros_like(at),
        direction,
        np.zeros_like(at),
        angles="xy",
        scale_units="xy",
        scale=2.0 * (arrows + 1),
        pivot="mid",
        width=0.006,
    )
    on_line = lambda x: np.column_stack([x[:, 0], 0.0 * x[:, 0]])  # noqa: E731
    _mark_rest_points(ax, [(r.x, r.kind) for r in rest_points(table, weighting)], on_line)
    first, second = table.strategies
    ax.set_xlim(-0.03, 1.03)
    ax.set_xlabel(f"share of {first} (1 - share of {second})")
    ax.set_ylabel(f"d share of {first} / dt")
    ax.set_title(f"Replicator dynamics ({weighting} payoffs, p = {table.p})")
    ax.legend(fontsize="small")
    return ax


def simplex_field(
    table: PayoffTable,
    ax: Axes | None = None,
    *,
    weighting: str = "tuyls",
    kind: str = "arrows",
    resolution: int = 15,
    rest: Sequence[tuple[np.ndarray, str]] | None = None,
    speed_max: float | None = None,
) -> Axes:
    """Replicator field of a 3-strategy game on the simplex (a triangle, strategies at the
    corners).

    ``kind="arrows"``: one unit-length arrow at each of the ``C(resolution - 1, 2)`` interior
    points of ``simplex_grid(3, resolution)``; ``kind="streamlines"``: streamlines on a
    Cartesian grid of ``4 * resolution`` points per side. Either way the colour is the speed
    ``|xdot|`` (Euclidean, in the plane of the triangle) with a colorbar. Rest points are
    marked by kind (`REST_POINT_COLOURS`) with a legend: ``rest``, (mix over the three
    strategies, kind) pairs, by default those of `rest_points` of ``table``. ``speed_max``
    (payoff units per unit time) tops the colour scale, shared by panels that pass the same
    (default: this field's own fastest arrow).
    """
    _check_k(table, 3, 3)
    if kind not in ("arrows", "streamlines"):
        raise ValueError(f"kind: expected 'arrows' or 'streamlines', got {kind!r}")
    if int(resolution) != resolution or resolution < 4:
        raise ValueError(f"resolution: expected an integer >= 4, got {resolution!r}")
    ax = axes_or_new(ax, size=(5.6, 4.6))
    if kind == "arrows":
        x = simplex_grid(3, int(resolution), interior=True)
        xy, velocity = x @ _CORNERS, field(table, x, weighting) @ _CORNERS
        speed = np.linalg.norm(velocity, axis=1)
        unit = velocity / np.where(speed > 0, speed, 1.0)[:, None]
        mappable = ax.quiver(
            xy[:, 0],
            xy[:, 1],
            unit[:, 0],
            unit[:, 1],
            speed,
            cmap="viridis",
            angles="xy",
            scale_units="xy",
            scale=resolution / 0.55,
            pivot="mid",
            width=0.005,
        )
    else:
        side = 4 * int(resolution)
        gx, gy = np.meshgrid(np.linspace(0, 1, side), np.linspace(0, _CORNERS[2, 1], side))
        x2 = gy / _CORNERS[2, 1]
        bary = np.stack([1.0 - gx - x2 / 2, gx - x2 / 2, x2], axis=-1).reshape(-1, 3)
        inside = (bary >= 0).all(axis=1)
        velocity = np.full((bary.shape[0], 2), np.nan)
        velocity[inside] = field(table, bary[inside], weighting) @ _CORNERS
        u, v = (np.ma.masked_invalid(c.reshape(side, side)) for c in velocity.T)
        speed = np.ma.sqrt(u**2 + v**2)
        mappable = ax.streamplot(
            gx, gy, u, v, color=speed, cmap="viridis", density=1.2, linewidth=1.0, arrowsize=1.0
        ).lines
    if speed_max is not None:
        mappable.set_clim(0.0, speed_max)
    ax.figure.colorbar(mappable, ax=ax, label="speed |dx/dt|", shrink=0.8)
    ax.add_patch(Polygon(_CORNERS, closed=True, fill=False, edgecolor="black", linewidth=1.0))
    for corner, name, align in zip(_CORNERS, table.strategies, ("right", "left", "center")):
        ax.text(
            corner[0],
            corner[1] + (0.04 if align == "center" else -0.04),
            name,
            ha=align,
            va="center",
            gid="corner-label",
        )
    if rest is None:
        rest = [(r.x, r.kind) for r in rest_points(table, weighting)]
    _mark_rest_points(ax, rest, lambda x: x @ _CORNERS)
    ax.set_xlim(-0.12, 1.12)
    ax.set_ylim(-0.1, _CORNERS[2, 1] + 0.1)
    ax.set_aspect("equal")
    ax.set_axis_off()
    ax.set_title(f"Replicator dynamics ({weighting} payoffs, p = {table.p})")
    ax.legend(loc="upper left", fontsize="small")
    return ax


def face_field(
    table: PayoffTable, strategies: Sequence[str], ax: Axes | None = None, **options
) -> Axes:
    """`simplex_field` of the face of three ``strategies`` of ``table`` (its sub-table, whose
    dynamics are the whole game's on the face), its rest points those of the whole game on it
    marked with their stability in the whole simplex (`rest_points_on_face`); ``options``
    (``weighting``, ``kind``, ``resolution``) passed on."""
    weighting = options.get("weighting", "tuyls")
    rest = [(p.x, p.kind) for p in rest_points_on_face(table, strategies, weighting)]
    return simplex_field(table.restrict(strategies), ax, rest=rest, **options)


def simplex_faces(
    table: PayoffTable,
    fig: Figure | None = None,
    *,
    weighting: str = "tuyls",
    kind: str = "arrows",
    resolution: int = 12,
) -> Figure:
    """`simplex_field` on every 3-strategy face of a game with ``k >= 4`` strategies.

    Each face is the sub-table of the profiles that use only its three strategies
    (`PayoffTable.restrict`: complete when ``table`` is), whose dynamics are the whole game's
    on that face; its rest points are the whole game's that lie on it, marked with their
    stability in the whole simplex (a point stable within the face that another strategy
    invades is a saddle). One panel per face, in a grid, all on one colour scale of speed (0 to
    the fastest arrow of any face); returns the Figure.
    """
    _check_k(table, 4)
    faces = list(table.faces(3))
    columns = math.ceil(math.sqrt(len(faces)))
    rows = math.ceil(len(faces) / columns)
    if fig is None:
        fig = Figure(figsize=(5.0 * columns, 4.2 * rows), layout="constrained")
    axes = fig.subplots(rows, columns, squeeze=False).ravel()
    grid = simplex_grid(3, int(resolution), interior=True)
    speeds = (np.linalg.norm(field(f, grid, weighting) @ _CORNERS, axis=1) for _, f in faces)
    top = max(float(speed.max()) for speed in speeds)
    top = max(top, np.finfo(float).tiny)  # a field at rest everywhere: any positive scale
    for ax, (_, face) in zip(axes, faces):
        face_field(
            table,
            face.strategies,
            ax,
            weighting=weighting,
            kind=kind,
            resolution=resolution,
            speed_max=top,
        )
        ax.set_title(f"face {', '.join(face.strategies)}")
    for ax in axes[len(faces) :]:
        ax.set_axis_off()
    fig.suptitle(
        f"Replicator dynamics on the 3-strategy faces ({weighting} payoffs, p = {table.p})"
    )
    return fig


def dynamics_figure(table: PayoffTable, *, weighting: str = "tuyls", **options) -> Figure:
    """The replicator-dynamics figure for ``table``: `flow_line` (k = 2), `simplex_field`
    (k = 3) or `simplex_faces` (k >= 4), with ``options`` passed on; returns the Figure."""
    _check_k(table, 2)
    if table.k == 2:
        return flow_line(table, weighting=weighting, **options).figure
    if table.k == 3:
        return simplex_field(table, weighting=weighting, **options).figure
    return simplex_faces(table, weighting=weighting, **options)


def equilibria_figure(table: PayoffTable, mixtures: Sequence[np.ndarray], **options) -> Figure:
    """`dynamics_figure` of ``table`` under the "focal" weighting (whose rest points include
    the Nash equilibria, `analysis.equilibria`) with ``mixtures`` (each shape (k,)) marked by
    red stars (gid ``equilibria``); for ``k >= 4`` each on the faces that contain its support.
    ``options`` go to `dynamics_figure`; returns the Figure."""
    figure = dynamics_figure(table, weighting="focal", **options)
    title = f"Nash equilibria and replicator dynamics\n(focal payoffs, p = {table.p})"
    _title(figure, table.k, title)
    points = [np.asarray(x, dtype=float) for x in mixtures]
    if table.k == 2:
        _mark_equilibria(figure.axes[0], points, lambda x: np.column_stack([x[:, 0], 0 * x[:, 0]]))
    elif table.k == 3:
        _mark_equilibria(figure.axes[0], points, lambda x: x @ _CORNERS)
    else:
        for ax, (strategies, _) in zip(figure.axes, table.faces(3)):
            inside = [x[list(strategies)] for x in points if x[list(strategies)].sum() > 1 - 1e-9]
            _mark_equilibria(ax, inside, lambda x: x @ _CORNERS)
    return figure


def _mark_equilibria(
    ax: Axes, points: Sequence[np.ndarray], to_xy: Callable[[np.ndarray], np.ndarray]
) -> None:
    if points:
        xy = to_xy(np.array(points))
        ax.scatter(
            xy[:, 0],
            xy[:, 1],
            s=160,
            marker="*",
            color="tab:red",
            edgecolors="black",
            zorder=5,
            label="Nash equilibrium",
            gid="equilibria",
        )
        ax.legend(loc="upper left", fontsize="small")


def psro_figure(
    rounds: Sequence[int],
    regret: Sequence[float],
    gain: Sequence[float],
    threshold: float,
    ax: Axes | None = None,
) -> Figure:
    """PSRO's progress: per round, the regret of the equilibrium mixture in the game solved
    (~0) and the deviation gain of the round's response against it (its regret in the game
    grown by the response), payoff units, with the ``threshold`` a response must exceed to
    join the game; returns the Figure."""
    ax = axes_or_new(ax)
    ax.plot(rounds, gain, "o-", color="tab:red", label="gain of the round's response")
    ax.plot(rounds, regret, "s--", color="tab:blue", label="regret in the game solved")
    ax.axhline(threshold, color="0.5", lw=1, ls=":", label=f"threshold {threshold:g}")
    ax.set_xticks(list(rounds))
    ax.set_xlabel("PSRO round")
    ax.set_ylabel("deviation gain (payoff units)")
    ax.set_title("PSRO: regret of the equilibrium mixture per round")
    ax.legend(frameon=False)
    return ax.figure


def role_dynamics_figure(
    table: RoleTable,
    start: Sequence[float] | None = None,
    *,
    steps: int = 2000,
    mixtures: Sequence[np.ndarray] = (),
) -> Figure:
    """The replicator dynamics of a role game as a trajectory: one panel per role, each of
    its strategies' share against time, from ``start`` (K,; default each role's uniform
    mixture), ``steps`` multiplicative-weights steps ``x_c <- x_c exp(h g_c(x))`` renormalised
    per role (``g`` the deviation gains, `roles.role_gains`; ``h`` = 0.1 / the payoffs' range,
    so time is ``h`` per step, in 1 / payoff units). ``mixtures`` (each (K,), equilibria)
    are drawn as dotted lines at their shares; returns the Figure (lines with gid
    ``"<role>_<strategy>"``)."""
    sizes = [len(own) for own in table.strategies]
    x = np.concatenate([np.full(k, 1 / k) for k in sizes]) if start is None else np.array(start)
    spread = np.nanmax(table.payoffs) - np.nanmin(table.payoffs)
    h = 0.1 / spread if spread > 0 else 0.0
    path = [x]
    for _ in range(steps):
        x = x * np.exp(h * role_gains(table, x))
        x = x / np.add.reduceat(x, table.starts)[table.role_of]
        path.append(x)
    shares, time = np.array(path), h * np.arange(steps + 1)
    figure = Figure(figsize=(4.2 * len(sizes), 3.6), layout="constrained")
    axes = figure.subplots(1, len(sizes), squeeze=False)[0]
    columns = iter(range(len(table.columns)))
    for ax, role, own in zip(axes, table.roles, table.strategies):
        for strategy in own:
            c = next(columns)
            (line,) = ax.plot(time, shares[:, c], label=strategy, gid=f"{role}_{strategy}")
            for mixture in mixtures:
                ax.axhline(mixture[c], color=line.get_color(), ls=":", lw=1)
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("time (1 / payoff units)")
        ax.set_ylabel("share")
        ax.set_title(f"{role} ({table.players[table.roles.index(role)]} seats)")
        ax.legend(frameon=False)
    figure.suptitle("Replicator dynamics of the role game (dotted: equilibria)")
    return figure
