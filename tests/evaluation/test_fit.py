"""The fitting loop on known problems: CMA-ES finds a known optimum, resumes from its memory,
honours its budget, and the simulated-moments distance is what its formula says."""

import math
import time

import numpy as np
import pytest

from tradearena.envs.errors import UserError
from tradearena.evaluation.experiment.schema import is_file_name
from tradearena.evaluation.market.fit import FitTarget, experiment_table, objective, set_path
from tradearena.evaluation.market.search import FitParameter, fit

SPACE = [FitParameter("a", 0.0, 10.0), FitParameter("traders.1.rate", 1e-3, 1.0, log=True)]
OPTIMUM = {"a": 3.0, "traders.1.rate": 0.02}


def bowl(candidates, calls=None):
    """A noiseless distance with its minimum 0 at OPTIMUM (the rate on a log scale)."""
    if calls is not None:
        calls.append(len(candidates))
    return [
        (c["a"] - 3.0) ** 2 + (math.log(c["traders.1.rate"]) - math.log(0.02)) ** 2
        for c in candidates
    ]


def test_parameters_map_the_unit_interval_onto_their_bounds():
    rate = SPACE[1]
    assert rate.value(0.0) == pytest.approx(1e-3) and rate.value(1.0) == pytest.approx(1.0)
    assert rate.value(0.5) == pytest.approx(math.sqrt(1e-3))  # the geometric middle
    assert rate.unit(rate.value(0.3)) == pytest.approx(0.3)
    assert SPACE[0].value(1.7) == 10.0  # clipped
    with pytest.raises(UserError, match="fit parameter x: bounds"):
        FitParameter("x", 0.0, 1.0, log=True)


def test_the_distance_is_the_mean_squared_error_in_tolerances():
    targets = {
        "sd": FitTarget(10.0, 2.0),
        "kurt": FitTarget(3.0, 1.0),
        "gone": FitTarget(math.nan, 1.0),
    }
    days = [{"sd": 12.0, "kurt": 1.0}, {"sd": 14.0, "kurt": math.nan}]
    # sd: mean 13 -> (3/2)^2 = 2.25; kurt: nan-mean 1 -> (2/1)^2 = 4; gone: left out
    assert objective(days, targets) == pytest.approx((2.25 + 4.0) / 2)
    with pytest.raises(UserError, match="no fact is available"):
        objective([{"x": 1.0}], {"sd": FitTarget(1.0, 1.0)})


def test_set_path_walks_tables_and_lists():
    table = {"traders": [{"type": "Noise"}, {"type": "ZeroIntelligence", "rate": 1.0}]}
    set_path(table, "traders.1.rate", 0.5)
    assert table["traders"][1]["rate"] == 0.5


def test_cma_finds_the_known_optimum_from_every_restart():
    result = fit(SPACE, bowl, start={"a": 8.0, "traders.1.rate": 0.5}, budget=600, restarts=3)
    assert result.distance < 1e-4
    assert result.parameters["a"] == pytest.approx(3.0, abs=0.02)
    assert result.parameters["traders.1.rate"] == pytest.approx(0.02, rel=0.02)
    assert len(result.restarts) == 3
    mean, sd = result.spread()["a"]
    assert mean == pytest.approx(3.0, abs=0.02) and sd < 0.02  # identified: no spread


def test_an_unidentified_parameter_spreads_over_restarts():
    space = [FitParameter("a", 0.0, 10.0), FitParameter("b", 0.0, 10.0)]
    result = fit(space, lambda cs: [(c["a"] - 3.0) ** 2 for c in cs], budget=300, restarts=3)
    assert result.spread()["a"][1] < 0.05
    assert result.spread()["b"][1] > 0.3  # b does not matter: the restarts end apart


def test_an_interrupted_fit_resumes_from_its_memory(tmp_path):
    memory = tmp_path / "evaluations.jsonl"
    first = fit(SPACE, bowl, budget=160, restarts=2, memory=memory)
    calls = []
    again = fit(SPACE, lambda cs: bowl(cs, calls), budget=160, restarts=2, memory=memory)
    assert sum(calls) == 0  # every candidate was asked again and found in the memory
    assert again.parameters == first.parameters and again.distance == first.distance
    assert len(memory.read_text().splitlines()) == first.evaluations


def test_a_budget_in_seconds_stops_early_with_the_best_so_far():
    with pytest.raises(UserError, match="before any candidate was evaluated"):
        fit(SPACE, bowl, budget=10_000, restarts=1, seconds=0.0)

    def slow_bowl(candidates):
        time.sleep(0.05)
        return bowl(candidates)

    slow = fit(SPACE, slow_bowl, budget=10_000, restarts=2, seconds=0.3)
    assert slow.stopped_early and np.isfinite(slow.distance) and slow.evaluations < 10_000


def test_a_one_parameter_space_is_searched_too():
    result = fit([FitParameter("a", 0.0, 10.0)], lambda cs: [(c["a"] - 7.0) ** 2 for c in cs])
    assert result.parameters["a"] == pytest.approx(7.0, abs=0.01)


@pytest.mark.parametrize(
    ("stem", "name"), [("my day", "my_day"), ("../up", "_up"), ("..", "market"), ("amzn", "amzn")]
)
def test_a_written_experiment_is_named_by_a_plain_file_name(stem, name):
    """The experiment `fit` and `learn` write is named by its file's stem made a plain file
    name, so that `run` takes what they wrote."""
    assert experiment_table(stem, {})["name"] == name
    assert is_file_name(name)
