"""evaluation.analysis.psro: the PSRO loop with an exact oracle on games with known answers."""

import numpy as np
import pytest

from tradearena.evaluation.analysis.payoffs import PayoffTable
from tradearena.evaluation.analysis.psro import psro

NAMES = ("rock", "paper", "scissors")
RPS = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]])


def _game(matrix: np.ndarray, names: tuple[str, ...], p: int = 2):
    """``table_of`` and an exact ``best_response`` (best pure strategy of the whole game
    against the mixture: the largest ``A x``) of a symmetric matrix game."""

    def table_of(strategies):
        index = [names.index(s) for s in strategies]
        return PayoffTable.from_matrix(matrix[np.ix_(index, index)], p, strategies=strategies)

    def best_response(strategies, mixture):
        x = np.zeros(len(names))
        x[[names.index(s) for s in strategies]] = mixture
        return names[int(np.argmax(matrix @ x))]

    return table_of, best_response


def test_rock_paper_scissors_grows_to_all_three_and_stops_at_the_centre():
    history = psro(*_game(RPS, NAMES), ["rock"], threshold=1e-6, rounds=10)
    assert [r.strategies for r in history] == [
        ("rock",),
        ("rock", "paper"),
        ("rock", "paper", "scissors"),
    ]
    assert [r.response for r in history] == ["paper", "scissors", "rock"]
    # paper against rock earns 1 more; scissors against paper 1 more; nothing beats the centre
    np.testing.assert_allclose([r.gain for r in history], [1.0, 1.0, 0.0], atol=1e-12)
    assert [r.added for r in history] == [True, True, False]
    np.testing.assert_allclose(history[-1].mixture, [1 / 3] * 3, atol=1e-10)
    assert history[-1].regret < 1e-12


def test_a_dominant_strategy_ends_the_loop_after_one_addition():
    # prisoner's dilemma: against cooperators, defecting gains 5 - 3 = 2; then nothing
    names = ("cooperate", "defect")
    history = psro(
        *_game(np.array([[3.0, 0.0], [5.0, 1.0]]), names, p=4),
        ["cooperate"],
        threshold=0.1,
        rounds=5,
    )
    assert [r.gain for r in history] == pytest.approx([2.0, 0.0])
    np.testing.assert_array_equal(history[-1].mixture, [0.0, 1.0])


def test_rounds_and_threshold_bound_the_loop():
    history = psro(*_game(RPS, NAMES), ["rock"], threshold=1e-6, rounds=1)
    assert len(history) == 1 and history[0].added
    # a gain of 1 below a threshold of 2 stops at once
    history = psro(*_game(RPS, NAMES), ["rock"], threshold=2.0, rounds=10)
    assert len(history) == 1 and not history[0].added
    with pytest.raises(ValueError, match="initial"):
        psro(*_game(RPS, NAMES), [], threshold=0.0, rounds=1)
