"""evaluation.plots, replicator-dynamics figures: what is drawn, on bare Figures (no pyplot)."""

import math

import numpy as np
import pytest
from matplotlib.collections import PathCollection
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.quiver import Quiver

from evaluation.payoffs import PayoffTable
from evaluation.plots import (
    REST_POINT_COLOURS,
    dynamics_figure,
    flow_line,
    simplex_faces,
    simplex_field,
)

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
