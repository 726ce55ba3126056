"""The plateau criterion of learning curves (evaluation.analysis.summary.plateau), on curves whose
shape is known: a rise then a flat stretch, a steady rise, checkpoints compared pairwise."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from tradearena.evaluation.analysis.summary import plateau
from tradearena.evaluation.experiment.schema import Training

SEEDS, EPISODES = 4, 200


def training_records(curve, noise: float, seed: int = 0) -> pd.DataFrame:
    """Training episodes of agent "a": value curve(episode) plus Gaussian noise, per seed."""
    rng = np.random.default_rng(seed)
    rows = [
        {"agent": "a", "phase": "train", "seed": s, "episode": e, "pnl": curve(e) + noise * z}
        for s in range(SEEDS)
        for e, z in enumerate(rng.normal(size=EPISODES))
    ]
    return pd.DataFrame(rows)


def rows_of(curve, seeds=range(20)) -> list[dict]:
    """The plateau row of agent "a" for the same curve under 20 noise draws (noise sd 1)."""
    return [plateau(training_records(curve, noise=1.0, seed=s)).iloc[0] for s in seeds]


def test_a_rise_then_flat_plateaus_where_the_flat_part_starts():
    """Rises by 10 over 100 episodes, then flat: windows of 20 episodes, the first wholly on
    the flat part starts at 100. A 95% test against the last window: nearly every draw finds
    the plateau there or a window or two later, never on the rise."""
    found = [r["plateau_episode"] for r in rows_of(lambda e: min(e, 100) / 10)]
    assert all(e == -1 or e >= 100 for e in found)
    assert sum(100 <= e <= 140 for e in found) >= 17


def test_a_steady_rise_has_not_plateaued():
    for row in rows_of(lambda e: e / 10, seeds=range(5)):
        assert not row["plateaued"] and row["plateau_episode"] == -1
        assert row["last_change"] > row["last_width"] > 0


def test_a_flat_curve_plateaus_in_most_draws():
    """No change at all: the last two windows agree in about 95% of draws."""
    rows = rows_of(lambda e: 3.0)
    assert sum(bool(r["plateaued"]) for r in rows) >= 17
    assert all(abs(r["last_change"]) <= r["last_width"] for r in rows if r["plateaued"])


def test_checkpoints_are_compared_session_by_session():
    """Greedy checkpoints every 50 episodes on the same 10 sessions: session noise (sd 5) is
    shared by every checkpoint, so a gain of 1 between checkpoints is detected although it is
    far smaller than the noise; it stops at checkpoint 3 (150 episodes)."""
    rng = np.random.default_rng(1)
    session = rng.normal(scale=5.0, size=(SEEDS, 10))
    rows = [
        {
            "agent": "a",
            "phase": "eval",
            "seed": s,
            "episode": c * 10 + i,
            "pnl": min(c, 3) + session[s, i] + 0.01 * rng.normal(),
        }
        for c in range(6)
        for s in range(SEEDS)
        for i in range(10)
    ]
    training = Training(
        episodes=250, evaluate_every=50, evaluate_episodes=10, sessions=1, checkpoint_every=0
    )
    (row,) = plateau(pd.DataFrame(rows), training=training).to_dict("records")
    assert row["plateaued"] and row["plateau_episode"] == 150


def test_one_session_a_checkpoint_of_one_seed_has_no_width_and_no_warning():
    """Checkpoints of one session of one seed (a `seeds = 1` run checking on one session):
    no standard error to give, so the widths are NaN and no plateau is found, without
    numpy's degrees-of-freedom warning (every such run printed it)."""
    rows = [
        {"agent": "a", "phase": "eval", "seed": 0, "episode": c, "pnl": 1.0 + c} for c in range(4)
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (row,) = plateau(pd.DataFrame(rows), training=Training(8, 2, 1, 1, 0)).to_dict("records")
    assert row["plateaued"] is False and row["plateau_episode"] == -1
    assert row["last_change"] == 1.0 and np.isnan(row["last_width"])
