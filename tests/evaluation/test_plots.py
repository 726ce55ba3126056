"""evaluation.analysis.plots, replicator-dynamics figures: what is drawn, on bare Figures (no
pyplot)."""

import math

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PathCollection
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.quiver import Quiver

from tradearena import agents
from tradearena.envs.simulator.features import FEATURE_NAMES
from tradearena.envs.spec import MarketSpec
from tradearena.evaluation.analysis.dynamics import field, simplex_grid
from tradearena.evaluation.analysis.payoffs import PayoffTable
from tradearena.evaluation.analysis.plots import (
    REST_POINT_COLOURS,
    dynamics_figure,
    equilibria_figure,
    flow_line,
    learning_curves,
    sharpe_bars,
    simplex_faces,
    simplex_field,
)
from tradearena.evaluation.reports.policy_plots import policy_grid, policy_map

RPS = [[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]]


def _axes():
    return Figure().add_subplot()


def _rest_markers(ax) -> dict[str, int]:
    """Number of rest-point markers by face colour name."""
    by_rgba = {to_rgba(c): kind for kind, c in REST_POINT_COLOURS.items()}
    found: dict[str, int] = {}
    for collection in ax.collections:
        if isinstance(collection, PathCollection) and collection.get_gid() == "rest-points":
            (face,) = collection.get_facecolors()  # one colour per kind
            kind = by_rgba[tuple(face)]
            found[kind] = found.get(kind, 0) + len(collection.get_offsets())
    return found


def _quivers(ax) -> list[Quiver]:
    return [c for c in ax.collections if isinstance(c, Quiver)]


def test_flow_line_coordination():
    table = PayoffTable.from_matrix(np.eye(2), strategies=["buy", "sell"])
    ax = _axes()
    assert flow_line(table, ax, arrows=7) is ax
    (quiver,) = _quivers(ax)
    # arrows point away from the unstable interior rest point at 1/2
    np.testing.assert_array_equal(quiver.U, [-1, -1, -1, 0, 1, 1, 1])
    assert _rest_markers(ax) == {"stable": 2, "unstable": 1}
    assert "buy" in ax.get_xlabel()
    assert len(ax.lines) >= 1 and ax.get_legend() is not None


@pytest.mark.parametrize("resolution", [6, 11])
def test_simplex_field_arrows(resolution):
    table = PayoffTable.from_matrix(RPS, strategies=["rock", "paper", "scissors"])
    ax = _axes()
    assert simplex_field(table, ax, resolution=resolution) is ax
    (quiver,) = _quivers(ax)
    assert len(quiver.U) == math.comb(resolution - 1, 2)  # interior grid points
    assert _rest_markers(ax) == {"saddle": 3, "center": 1}
    labels = [t.get_text() for t in ax.texts if t.get_gid() == "corner-label"]
    assert labels == ["rock", "paper", "scissors"]
    assert quiver.colorbar is not None and len(ax.figure.axes) == 2
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["saddle", "center"]


def test_simplex_field_streamlines_coordination():
    ax = _axes()
    simplex_field(PayoffTable.from_matrix(np.eye(3), p=3), ax, kind="streamlines", resolution=8)
    assert not _quivers(ax) and ax.collections[0].colorbar is not None
    # vertices stable, edge midpoints saddles, centre unstable
    assert _rest_markers(ax) == {"stable": 3, "saddle": 3, "unstable": 1}


def test_simplex_faces_grid_of_faces():
    table = PayoffTable.from_matrix(np.eye(4), p=2, strategies=list("ABCD"))
    fig = simplex_faces(table, Figure(), resolution=6)
    panels = [ax for ax in fig.axes if _quivers(ax)]
    assert len(panels) == 4  # C(4, 3) faces, plus their colorbars
    titles = ["face A, B, C", "face A, B, D", "face A, C, D", "face B, C, D"]
    assert [ax.get_title() for ax in panels] == titles
    for ax in panels:
        assert len(_quivers(ax)[0].U) == math.comb(5, 2)
        # stability in the whole simplex: the face's centre, unstable within the face, is
        # no mix the fourth strategy invades (it earns 0 < 1/3), so a saddle
        assert _rest_markers(ax) == {"stable": 3, "saddle": 4}


def test_simplex_faces_share_one_colour_scale():
    """Faces of unequal speed (D's payoff a tenth of the others'): every panel's colours run
    from 0 to the fastest arrow of any face, not each face's own."""
    a = np.diag([10.0, 10.0, 10.0, 1.0])
    table = PayoffTable.from_matrix(a, p=2, strategies=list("ABCD"))
    fig = simplex_faces(table, Figure(), resolution=6)
    x = simplex_grid(3, 6, interior=True)
    corners = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, np.sqrt(3) / 2]])
    own = [
        np.linalg.norm(field(table.restrict(face), x) @ corners, axis=1).max()
        for face in ("ABC", "ABD", "ACD", "BCD")
    ]
    fastest = max(own)
    assert min(own) < 0.95 * fastest  # the faces' own scales would differ
    scales = [_quivers(ax)[0].get_clim() for ax in fig.axes if _quivers(ax)]
    assert len(scales) == 4
    for low, high in scales:
        assert low == 0.0 and high == pytest.approx(fastest, rel=1e-12)


def test_dynamics_figure_dispatch_and_errors():
    for k in (2, 3, 4):
        fig = dynamics_figure(PayoffTable.from_matrix(np.eye(k)), resolution=6 if k > 2 else 51)
        assert isinstance(fig, Figure) and fig.axes
    with pytest.raises(ValueError, match="table: expected a PayoffTable with k = 3"):
        simplex_field(PayoffTable.from_matrix(np.eye(2)))
    with pytest.raises(ValueError, match="kind: expected"):
        simplex_field(PayoffTable.from_matrix(RPS), kind="contours")
    with pytest.raises(ValueError, match="table: expected a PayoffTable with k >= 4"):
        simplex_faces(PayoffTable.from_matrix(RPS))


# ----------------------------------------------------------------------------- policy maps
MAKING = MarketSpec(task="making", position_limit=500)


def test_policy_grid_is_the_greedy_action_at_each_point():
    """A features agent (Avellaneda-Stoikov) acts on the vector built at each point; a
    tabular one on the discretizer's state of it; the agent's generator is not touched."""
    inventory, time_left = np.linspace(-1, 1, 5), np.array([0.1, 0.9])
    maker = agents.make("avellaneda_stoikov", market_spec=MAKING, gamma=0.1, sigma=0.6, kappa=1.5)
    grid = policy_grid(maker, MAKING, inventory, time_left)
    vector = np.zeros(len(FEATURE_NAMES), np.float32)
    vector[2] = 1.0  # a one-tick spread
    left_column = FEATURE_NAMES.index("time_left")
    for t, left in enumerate(time_left):
        for i, held in enumerate(inventory):
            vector[0], vector[left_column] = held, left
            assert grid[t, i] == maker.act(vector)
    assert grid[0, 0] != grid[0, -1]  # long and short inventories quote apart
    table = agents.make("q_learning", n_states=60, n_actions=17, seed=0)
    table.q[:] = np.arange(17)[None, :] == (np.arange(60) % 17)[:, None]
    before = table.rng.bit_generator.state
    grid = policy_grid(table, MAKING, inventory, time_left, {"spread": 3.0})
    discretize = MAKING.state_discretizer()
    vector[2] = 3.0
    vector[0], vector[left_column] = inventory[1], time_left[1]
    assert grid[1, 1] == discretize(vector) % 17
    assert table.rng.bit_generator.state == before


def test_policy_map_names_the_actions_taken():
    maker = agents.make("avellaneda_stoikov", market_spec=MAKING, gamma=0.1, sigma=0.6, kappa=1.5)
    ax = policy_map(maker, MAKING, _axes())
    names = [text.get_text() for text in ax.get_legend().get_texts()]
    taken = sorted(
        set(policy_grid(maker, MAKING, np.linspace(-1, 1, 41), np.linspace(0, 1, 31)).ravel())
    )
    assert len(names) == len(taken) and "bid 0 / ask 0" in names
    assert ax.get_xlabel() == "inventory (fraction of the position limit)"


def test_sharpe_bars_label_an_agent_without_a_ratio():
    """hold never trades (Sharpe 0 / 0): no bar, "no trades" in its place."""
    summary = pd.DataFrame(
        {
            "condition": "clean",
            "agent": ["dqn", "hold"],
            "sharpe": [2.0, np.nan],
            "sharpe_low": [1.5, np.nan],
            "sharpe_high": [2.5, np.nan],
            "mean_pnl": [10.0, 0.0],
            "exposure": [50.0, 0.0],
        }
    )
    ax = sharpe_bars(summary, Figure().add_subplot())
    labels = [t for t in ax.texts if t.get_gid() == "nan"]
    assert [(t.get_text(), t.get_position()[0]) for t in labels] == [("no trades", 1)]
    assert [tick.get_text() for tick in ax.get_xticklabels()] == ["dqn", "hold"]
    # the label stands inside the frame, clear of its right edge, as the last agent's does
    renderer = FigureCanvasAgg(ax.figure).get_renderer()
    box, frame = labels[0].get_window_extent(renderer), ax.get_window_extent(renderer)
    assert frame.x0 < box.x0 and box.x1 < frame.x1 - 10


def test_learning_curve_legend_sits_off_the_data():
    records = pd.DataFrame(
        {
            "agent": ["a"] * 4 + ["b"] * 4,
            "seed": [0, 0, 1, 1] * 2,
            "episode": [0, 1] * 4,
            "phase": "train",
            "pnl": [1.0, 2.0, 1.5, 2.5, 0.0, -1.0, 0.5, -0.5],
        }
    )
    figure = Figure(layout="constrained")
    ax = learning_curves(records, figure.add_subplot())
    renderer = FigureCanvasAgg(figure).get_renderer()
    figure.draw(renderer)
    legend = ax.get_legend().get_window_extent(renderer)
    assert legend.x0 >= ax.get_window_extent(renderer).x1


def test_an_equilibria_title_lies_inside_its_figure():
    table = PayoffTable.from_matrix(
        [[0, 1, -1], [-1, 0, 1], [1, -1, 0]], strategies=("hold", "random", "avellaneda_stoikov")
    )
    figure = equilibria_figure(table, [np.full(3, 1 / 3)])
    renderer = FigureCanvasAgg(figure).get_renderer()
    figure.draw(renderer)
    title = figure.axes[0].title.get_window_extent(renderer)
    assert title.x0 >= 0 and title.x1 <= figure.bbox.x1


def test_sharpe_bars_keep_their_labels_in_the_frame_and_mark_a_bar_without_interval():
    """Every bar negative: "no trades" reads down from zero, inside the frame; a value with
    no interval (one seed's alone) has its bar and "no interval" on it."""
    summary = pd.DataFrame(
        {
            "condition": "clean",
            "agent": ["dqn", "raql", "hold"],
            "sharpe": [-1.0, -2.0, np.nan],
            "sharpe_low": [-1.5, np.nan, np.nan],
            "sharpe_high": [-0.5, np.nan, np.nan],
            "mean_pnl": [-10.0, -5.0, 0.0],
            "exposure": [50.0, 20.0, 0.0],
        }
    )
    ax = sharpe_bars(summary, Figure().add_subplot())
    renderer = FigureCanvasAgg(ax.figure).get_renderer()
    frame = ax.get_window_extent(renderer)
    for gid, text, x in (("nan", "no trades", 2), ("no-interval", "no interval", 1)):
        (label,) = [t for t in ax.texts if t.get_gid() == gid]
        box = label.get_window_extent(renderer)
        assert (label.get_text(), label.get_position()[0]) == (text, x)
        assert frame.y0 <= box.y0 and box.y1 <= frame.y1, (text, box, frame)
