"""evaluation.analysis.payoffs: construction, validation, round trips, matrix games, records."""

import math

import numpy as np
import pandas as pd
import pytest

from tradearena.evaluation.analysis.payoffs import PayoffTable, profile_key

NAN = np.nan
# p = 3 players, two strategies (docs/algorithms.md#payoff-tables-and-replicator-dynamics)
COUNTS3 = [[3, 0], [2, 1], [1, 2], [0, 3]]
PAYOFFS3 = [[1.0, NAN], [2.0, 0.0], [3.0, 1.0], [NAN, 2.0]]


def test_profiles_order_and_count():
    assert list(PayoffTable.profiles(2, 3)) == [
        (2, 0, 0),
        (1, 1, 0),
        (1, 0, 1),
        (0, 2, 0),
        (0, 1, 1),
        (0, 0, 2),
    ]
    for p, k in [(1, 1), (3, 2), (8, 4), (5, 5)]:
        profiles = list(PayoffTable.profiles(p, k))
        assert len(profiles) == len(set(profiles)) == math.comb(p + k - 1, k - 1)
        assert all(sum(n) == p and len(n) == k for n in profiles)


def test_from_arrays_properties_and_absent_cells():
    # the payoff of an absent strategy is ignored: stored as NaN
    payoffs = np.array(PAYOFFS3)
    payoffs[0, 1] = 99.0
    table = PayoffTable.from_arrays(COUNTS3, payoffs, strategies=["A", "B"])
    assert (table.p, table.k, len(table), table.complete) == (3, 2, 4, True)
    assert table.strategies == ("A", "B")
    assert np.isnan(table.payoffs[0, 1]) and np.isnan(table.payoffs[3, 0])
    assert table.payoffs[1].tolist() == [2.0, 0.0]
    assert table.row((1, 2)) == 2 and table.row((4, 0)) is None
    assert table.samples is None and table.stderr is None
    assert not table.counts.flags.writeable
    assert PayoffTable.from_arrays(COUNTS3[:3], PAYOFFS3[:3]).complete is False
    assert PayoffTable.from_arrays(COUNTS3, PAYOFFS3).strategies == ("s0", "s1")


@pytest.mark.parametrize(
    ("counts", "payoffs", "kwargs", "match"),
    [
        ([[3, 0], [2, 2]], [[1, NAN], [1, 1]], {}, "counts: every row must sum"),
        ([[3, 0], [4, -1]], [[1, NAN], [1, 1]], {}, "counts: negative"),
        ([[3, 0], [3, 0]], [[1, NAN], [1, NAN]], {}, "counts: duplicate profiles"),
        ([3, 0], [1, NAN], {}, r"counts: expected a \(rows, k\)"),
        ([[1.5, 1.5]], [[1, 1]], {}, "counts: expected integers"),
        (COUNTS3, [[1, 2]] * 3, {}, "payoffs: shape"),
        (COUNTS3, [[1, NAN], [NAN, 0], [3, 1], [NAN, 2]], {}, "payoffs: missing"),
        (COUNTS3, PAYOFFS3, {"samples": np.ones((4, 3))}, "samples: shape"),
        (COUNTS3, PAYOFFS3, {"stderr": np.ones((3, 2))}, "stderr: shape"),
        (COUNTS3, PAYOFFS3, {"stderr": -np.ones((4, 2))}, "stderr: negative"),
        (COUNTS3, PAYOFFS3, {"strategies": ["A", "A"]}, "strategies: expected 2 distinct"),
    ],
)
def test_validation_names_the_problem(counts, payoffs, kwargs, match):
    with pytest.raises(ValueError, match=match):
        PayoffTable.from_arrays(counts, payoffs, **kwargs)


def _with_errors() -> PayoffTable:
    samples = [[4, 0], [6, 3], [3, 6], [0, 4]]
    stderr = [[0.1, NAN], [0.2, 0.3], [NAN, 0.5], [NAN, 0.25]]
    return PayoffTable.from_arrays(
        COUNTS3, PAYOFFS3, samples=samples, stderr=stderr, strategies=["hold", "ra2q"]
    )


def _same(a: PayoffTable, b: PayoffTable) -> None:
    assert a.strategies == b.strategies
    np.testing.assert_array_equal(a.counts, b.counts)
    for name in ("payoffs", "samples", "stderr"):
        left, right = getattr(a, name), getattr(b, name)
        assert (left is None) == (right is None)
        if left is not None:
            np.testing.assert_array_equal(left, right)


def test_frame_and_csv_round_trip(tmp_path):
    table = _with_errors()
    frame = table.to_frame()
    assert list(frame.columns) == [
        "n_hold", "n_ra2q", "u_hold", "u_ra2q",
        "samples_hold", "samples_ra2q", "stderr_hold", "stderr_ra2q",
    ]  # fmt: skip
    _same(PayoffTable.from_frame(frame), table)
    path = table.to_csv(tmp_path / "payoffs.csv")
    _same(PayoffTable.read_csv(path), table)
    bare = PayoffTable.from_arrays(COUNTS3, np.array(PAYOFFS3) / 7.0)  # no samples/stderr
    _same(PayoffTable.read_csv(bare.to_csv(tmp_path / "bare.csv")), bare)
    with pytest.raises(ValueError, match="frame: needs"):
        PayoffTable.from_frame(frame.drop(columns="u_ra2q"))


def test_from_matrix_two_players():
    table = PayoffTable.from_matrix([[3, 0], [5, 1]])
    assert table.counts.tolist() == [[2, 0], [1, 1], [0, 2]]
    np.testing.assert_array_equal(table.payoffs, [[3, NAN], [0, 5], [NAN, 1]])


def test_from_matrix_pairwise_average_for_more_players():
    # p = 3, profile (1, 2): strategy 0 meets two 1s: (A01 + A01) / 2 = 0;
    # strategy 1 meets one 0 and one 1: (A10 + A11) / 2 = (5 + 1) / 2 = 3
    table = PayoffTable.from_matrix([[3, 0], [5, 1]], p=3)
    assert table.payoffs[table.row((1, 2))].tolist() == [0.0, 3.0]
    assert table.payoffs[table.row((2, 1))].tolist() == [1.5, 5.0]
    with pytest.raises(ValueError, match="matrix: expected a finite square"):
        PayoffTable.from_matrix([[1, 2, 3]])
    with pytest.raises(ValueError, match="p: expected an integer >= 2"):
        PayoffTable.from_matrix(np.eye(2), p=1)


def test_restrict_to_a_face():
    table = PayoffTable.from_matrix(np.arange(16.0).reshape(4, 4), p=3)
    face = table.restrict(["s1", "s3"])
    assert face.strategies == ("s1", "s3") and face.complete and face.p == 3
    # (0, 2, 0, 1) in the full table is (2, 1) on the face
    np.testing.assert_array_equal(
        face.payoffs[face.row((2, 1))], table.payoffs[table.row((0, 2, 0, 1))][[1, 3]]
    )
    assert [columns for columns, _ in table.faces(3)] == [
        (0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)
    ]  # fmt: skip
    with pytest.raises(ValueError, match="strategies: expected distinct"):
        table.restrict([1, 1])


def _records() -> pd.DataFrame:
    rows = []
    # profile (2, 1): two seats of A and one of B, two repetitions
    for repetition, (a1, a2, b) in enumerate([(1.0, 3.0, 0.5), (2.0, 6.0, 1.5)]):
        rows += [("2-1", "A", repetition, a1), ("2-1", "A", repetition, a2)]
        rows += [("2-1", "B", repetition, b)]
    rows += [((0, 3), "B", 0, 4.0), ((0, 3), "B", 0, 4.0), ((0, 3), "B", 0, 4.0)]
    rows += [("(3, 0)", "A", 0, 7.0)] * 2 + [("(3, 0)", "A", 0, 9.0)]
    return pd.DataFrame(rows, columns=["profile", "strategy", "repetition", "sharpe"])


def test_from_records_means_samples_and_stderr():
    table = PayoffTable.from_records(_records(), strategies=["A", "B"], value="sharpe")
    assert table.counts.tolist() == [[3, 0], [2, 1], [0, 3]]
    row = table.row((2, 1))
    # A: values 1, 3, 2, 6 -> mean 3; deviations -2, 0, -1, 3 -> squares 14 -> var 14/3
    # stderr = sqrt(14 / 3) / 2 = 1.0801234
    assert table.payoffs[row, 0] == 3.0 and table.samples[row, 0] == 4
    assert table.stderr[row, 0] == pytest.approx(math.sqrt(14 / 3) / 2)
    # B: values 0.5, 1.5 -> mean 1, std(ddof=1) = sqrt(0.5), stderr = sqrt(0.5) / sqrt(2) = 0.5
    assert table.payoffs[row, 1] == 1.0 and table.stderr[row, 1] == pytest.approx(0.5)
    # (3, 0): 7, 7, 9 -> mean 23 / 3; (0, 3): no spread -> stderr 0
    assert table.payoffs[table.row((3, 0)), 0] == pytest.approx(23 / 3)
    assert table.stderr[table.row((0, 3)), 1] == 0.0
    assert table.samples[table.row((0, 3))].tolist() == [0, 3]


def test_from_records_single_sample_has_nan_stderr_and_errors():
    one = pd.DataFrame(
        {"profile": ["1-1", "1-1"], "strategy": ["A", "B"], "repetition": 0, "payoff": [1.0, 2.0]}
    )
    table = PayoffTable.from_records(one, strategies=["A", "B"])
    assert np.isnan(table.stderr).all() and table.samples.tolist() == [[1, 1]]
    assert profile_key((1, 1)) == "1-1"
    with pytest.raises(ValueError, match="records: missing columns"):
        PayoffTable.from_records(one.drop(columns="repetition"), strategies=["A", "B"])
    with pytest.raises(ValueError, match=r"records: strategies \['C'\]"):
        PayoffTable.from_records(one.assign(strategy=["A", "C"]), strategies=["A", "B"])
    with pytest.raises(ValueError, match="records: strategy 'B' has values in profile"):
        PayoffTable.from_records(one.assign(profile="2-0"), strategies=["A", "B"])
    with pytest.raises(ValueError, match="records: profile"):
        PayoffTable.from_records(one.assign(profile="1-1-0"), strategies=["A", "B"])
    with pytest.raises(ValueError, match="payoffs: missing"):
        PayoffTable.from_records(one.iloc[:1], strategies=["A", "B"])
