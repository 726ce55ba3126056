"""The realism figures' legends leave the lines readable."""

from __future__ import annotations

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from tradearena.evaluation.analysis.realism_plots import profile_lines


def assert_legend_covers_no_point(figure: Figure, ax) -> None:
    """No point of any line of ``ax`` lies under its legend, ``figure`` drawn."""
    renderer = FigureCanvasAgg(figure).get_renderer()
    figure.draw(renderer)
    legend = ax.get_legend().get_window_extent(renderer)
    for line in ax.get_lines():
        points = ax.transData.transform(line.get_xydata())
        assert not any(legend.contains(x, y) for x, y in points), line.get_label()


def test_a_profile_legend_covers_no_point():
    """Volatility profiles as a real day and the simulated markets draw them (the day's
    highest in the first hour, top left, where a fixed upper-left legend sat on it)."""
    day = np.array([9.5, 10.0, 9.8, 8.8, 5.2, 7.8, 6.1, 5.0, 7.2, 5.4, 5.4, 6.1, 5.9])
    profiles = {
        "AMZN_2012-06-21_34200000_57600000_message_1": day,
        "light": np.full(13, 0.6),
        "rmsc04": np.full(13, 0.7),
        "amzn_fitted": np.full(13, 6.5),
    }
    figure = Figure(figsize=(6.4, 4.0), layout="constrained")
    ax = profile_lines(profiles, "rms 1-min return, bp", "Volatility", figure.add_subplot())
    assert_legend_covers_no_point(figure, ax)


def test_a_source_with_no_whole_bucket_is_named_so_in_the_legend():
    from tradearena.evaluation.analysis.realism_plots import profile_lines

    ax = profile_lines(
        {"day": np.array([0.5, 0.5]), "six minutes": np.full(2, np.nan)}, "share", "Volume"
    )
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["day", "six minutes (no whole 30-min bucket)"]


def test_policies_that_lie_together_share_one_label_and_the_key_names_them():
    """A zoo whose policies sit on a few spots (hold and a wide quote both at $0): one label
    per spot, the numbers of the policies there, and the key beside the axes naming each."""
    from types import SimpleNamespace

    import pandas as pd

    from tradearena.evaluation.analysis.realism_plots import transfer_scatter

    spots = {
        "hold": (0.0, 0.0),
        "wide": (3.0, 0.5),
        "narrow": (1700.0, -160.0),
        "random": (900, -80),
    }
    rows = []
    for policy, (market, real) in spots.items():
        for side, pnl in (("market", market), ("tape/optimistic", real)):
            rows.append(
                {"policy": policy, "side": side, "mean_pnl": pnl, "low": pnl - 1, "high": pnl + 1}
            )
    figure = Figure(figsize=(9.0, 5.2), layout="constrained")
    ax = transfer_scatter(
        pd.DataFrame(rows),
        {"market": {"optimistic": SimpleNamespace(rho=-0.8)}},
        "m",
        "day",
        figure.add_subplot(),
    )
    labels = sorted(t.get_text() for t in ax.texts if t.get_gid() == "policy")
    assert labels == ["1, 2", "3", "4"]
    (key,) = (t.get_text() for t in ax.texts if t.get_gid() == "key")
    assert key.splitlines() == [" 1  hold", " 2  wide", " 3  narrow", " 4  random"]


def test_an_acf_legend_covers_no_point_and_lags_are_whole_minutes():
    """The AMZN day's 1-min return autocorrelations, whose lag-4 point sat under the legend
    in the top right."""
    from tradearena.evaluation.analysis.realism_plots import acf_lines

    acfs = {
        "AMZN_2012-06-21_34200000_57600000_message_1": np.array([0.046, -0.08, -0.07, 0.048, -0.1]),
        "light": np.array([-0.013, -0.05, -0.04, -0.02, -0.02]),
        "rmsc04": np.array([-0.26, -0.03, -0.01, -0.007, 0.0]),
    }
    figure = Figure(figsize=(6.4, 4.0), layout="constrained")
    ax = acf_lines(acfs, "1-min returns", figure.add_subplot())
    assert_legend_covers_no_point(figure, ax)
    ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
    assert ticks == [1, 2, 3, 4, 5]
