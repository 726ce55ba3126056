"""evaluation.experiment.store: exact round trips, job bookkeeping, WAL, and resuming after ``kill
-9``."""

from __future__ import annotations

import math
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tradearena.envs.errors import UserError
from tradearena.evaluation.experiment.store import _SCHEMA, EpisodeRecord, JobResult, Store

CONFIG = '[experiment]\nname = "store-test"\n'
JOB_COUNT = 8  # jobs in the crash test
CRASH_EPISODES = 625  # per (seat, phase, condition): 5000 rows a job, tens of ms to commit
KILL_AFTER = 4  # jobs the child reports recorded before it is killed

SEATS = (0, 1)
PHASES = ("train", "test")
CONDITIONS = ("clean", "spread_shock")

REPO = Path(__file__).resolve().parents[2]

# Records JOB_COUNT jobs one by one, printing each job id once committed, then waits to be killed.
# The results are built first so that the kill most likely lands inside a transaction.
CHILD = f"""
import sys, time
sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})
from test_store import CONFIG, CRASH_EPISODES, JOB_COUNT, make_result
from tradearena.evaluation.experiment.store import Store

results = [make_result(index, CRASH_EPISODES) for index in range(JOB_COUNT)]
store = Store(sys.argv[1])
store.start_run(CONFIG, resume=False)
for result in results:
    store.record(result)
    print(result.job_id, flush=True)
time.sleep(60)
"""


def make_result(index: int, episodes: int = 3) -> JobResult:
    """Job ``index``: every seat, phase and condition with ``episodes`` episodes each."""
    records = tuple(
        EpisodeRecord(
            seat=seat,
            agent=("raql", "zero_intelligence")[seat],
            phase=phase,
            condition=condition,
            episode=episode,
            reward=(index + 1) * (episode - 1.5) / 3.0,
            pnl=-(10.0**index) / 7.0 + episode * 0.1,
            trades=index * 1000 + episode,
            inventory=(-1) ** episode * (seat + 1) * 100,
            exposure=episode * 12.5,
            steps=390,
            value=None if phase == "train" else index - episode / 4.0,
            arrival=None if seat else 100.0 + index / 8.0,
        )
        for seat in SEATS
        for phase in PHASES
        for condition in CONDITIONS
        for episode in range(episodes)
    )
    return JobResult(job_id=f"job-{index:03d}", seed=1000 + index, records=records, seconds=0.5)


def expected_rows(result: JobResult) -> pd.DataFrame:
    """The rows ``Store.episodes`` should return for ``result`` alone, in key order."""
    frame = pd.DataFrame(
        [
            {"job_id": result.job_id, "seed": result.seed, **vars(record)}
            for record in result.records
        ]
    )
    keys = ["job_id", "seat", "phase", "condition", "episode"]
    return frame.sort_values(keys, ignore_index=True).astype(
        {"job_id": "str", "agent": "str", "phase": "str", "condition": "str", "value": "float64"}
        | {"arrival": "float64"}
    )


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "results.sqlite") as opened:
        opened.start_run(CONFIG, resume=False)
        yield opened


def test_round_trip_is_exact_with_sensible_dtypes(store: Store) -> None:
    result = make_result(2)
    store.record(result)

    frame = store.episodes()
    pd.testing.assert_frame_equal(frame, expected_rows(result))
    assert list(frame.columns) == [
        "job_id",
        "seed",
        "seat",
        "agent",
        "phase",
        "condition",
        "episode",
        "reward",
        "pnl",
        "trades",
        "inventory",
        "exposure",
        "steps",
        "value",
        "arrival",
    ]
    for column in ("seed", "seat", "episode", "trades", "inventory", "steps"):
        assert frame[column].dtype == "int64"
    for column in ("reward", "pnl", "value", "arrival"):
        assert frame[column].dtype == "float64"
    for column in ("job_id", "agent", "phase", "condition"):
        assert pd.api.types.is_string_dtype(frame[column])

    test = store.episodes(phase="test")
    assert len(test) == len(result.records) // 2
    assert set(test["phase"]) == {"test"}


def test_empty_store_gives_typed_empty_frames(store: Store) -> None:
    episodes = store.episodes()
    assert episodes.empty
    assert episodes["reward"].dtype == "float64"
    assert episodes["steps"].dtype == "int64" and episodes["exposure"].dtype == "float64"
    assert list(store.jobs().columns) == [
        "job_id",
        "status",
        "seed",
        "seconds",
        "error",
        "finished",
    ]


@settings(max_examples=30, deadline=None)
@given(
    records=st.lists(
        st.builds(
            EpisodeRecord,
            seat=st.integers(0, 63),
            agent=st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=12),
            phase=st.sampled_from(PHASES),
            condition=st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=12),
            episode=st.integers(0, 2**31),
            reward=st.floats(allow_nan=False),
            pnl=st.floats(allow_nan=False),
            trades=st.integers(0, 2**62),
            inventory=st.integers(-(2**62), 2**62),
            exposure=st.floats(min_value=0, allow_nan=False),
            steps=st.integers(0, 2**31),
            value=st.none() | st.floats(allow_nan=False),
            arrival=st.none() | st.floats(min_value=0, allow_nan=False),
        ),
        max_size=20,
        unique_by=lambda r: (r.agent, r.seat, r.phase, r.condition, r.episode),
    )
)
def test_any_records_round_trip_exactly(records: list[EpisodeRecord]) -> None:
    with tempfile.TemporaryDirectory() as directory, Store(Path(directory) / "r.sqlite") as store:
        store.record(JobResult("job", seed=7, records=tuple(records), seconds=1.25))
        stored = store.episodes().drop(columns=["job_id", "seed"])
    back = [
        EpisodeRecord(**row | {k: None for k in ("value", "arrival") if math.isnan(row[k])})
        for row in stored.to_dict("records")
    ]
    assert sorted(back, key=lambda r: (r.agent, r.seat, r.phase, r.condition, r.episode)) == back
    assert set(back) == set(records)
    assert len(back) == len(records)


def test_finished_and_failed(store: Store) -> None:
    store.record(make_result(0))
    store.record(JobResult("job-001", seed=1001, records=(), seconds=0.1, error="Traceback: boom"))
    store.record(make_result(2))

    assert store.finished() == {"job-000", "job-002"}
    assert store.failed() == {"job-001": "Traceback: boom"}
    jobs = store.jobs()
    assert list(jobs["job_id"]) == ["job-000", "job-001", "job-002"]
    assert list(jobs["status"]) == ["done", "failed", "done"]
    assert list(jobs["seed"]) == [1000, 1001, 1002]
    assert list(jobs["seconds"]) == [0.5, 0.1, 0.5]
    assert set(store.episodes()["job_id"]) == {"job-000", "job-002"}


def test_rerun_of_a_failed_job_replaces_it(store: Store) -> None:
    store.record(JobResult("job-003", seed=1003, records=(), seconds=0.1, error="first"))
    store.record(JobResult("job-003", seed=1003, records=(), seconds=0.2, error="second"))
    assert store.failed() == {"job-003": "second"}

    result = make_result(3)
    store.record(result)
    assert store.failed() == {}
    assert store.finished() == {"job-003"}
    jobs = store.jobs()
    assert len(jobs) == 1
    assert jobs.loc[0, "status"] == "done"
    assert pd.isna(jobs.loc[0, "error"])
    assert jobs.loc[0, "seconds"] == 0.5
    pd.testing.assert_frame_equal(store.episodes(), expected_rows(result))


def test_done_job_is_never_written_twice(store: Store) -> None:
    store.record(make_result(0))
    before = store.episodes()

    with pytest.raises(ValueError, match="job-000 is already recorded as done"):
        store.record(make_result(0))
    with pytest.raises(ValueError, match="job-000 is already recorded as done"):
        store.record(JobResult("job-000", seed=1000, records=(), seconds=0.1, error="late"))

    assert store.failed() == {}
    pd.testing.assert_frame_equal(store.episodes(), before)


def test_a_job_that_cannot_be_written_leaves_nothing(store: Store) -> None:
    result = make_result(5)
    duplicated = JobResult(result.job_id, result.seed, result.records * 2, result.seconds)

    with pytest.raises(sqlite3.IntegrityError):
        store.record(duplicated)

    assert store.jobs().empty
    assert store.episodes().empty
    store.record(result)
    assert len(store.episodes()) == len(result.records)


def test_failed_job_must_not_carry_records(store: Store) -> None:
    result = make_result(0)
    with pytest.raises(ValueError, match="failed but carries episode records"):
        store.record(JobResult(result.job_id, result.seed, result.records, 1.0, error="boom"))
    assert store.jobs().empty


def test_wal_mode_is_on(tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite"
    Store(path).close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_resume_checks_the_config(tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite"
    with Store(path) as store:
        first = store.start_run(CONFIG, resume=False)
        store.record(make_result(0))

    with Store(path) as store:
        with pytest.raises(ValueError, match="config changed.*new run directory or drop --resume"):
            store.start_run(CONFIG + "seeds = 5\n", resume=True)
        with pytest.raises(ValueError, match="already holds a run: pass --resume"):
            store.start_run(CONFIG, resume=False)
        assert store.start_run(CONFIG, resume=True) > first
        assert store.finished() == {"job-000"}


def test_killed_run_resumes_to_the_same_tables(tmp_path: Path) -> None:
    path = tmp_path / "killed" / "results.sqlite"
    path.parent.mkdir()
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    reported: list[str] = []
    try:
        assert child.stdout is not None
        for line in child.stdout:
            reported.append(line.strip())
            if len(reported) == KILL_AFTER:
                os.kill(child.pid, signal.SIGKILL)
                break
    finally:
        child.kill()
        _, stderr = child.communicate()
    assert len(reported) == KILL_AFTER, stderr
    assert child.returncode == -signal.SIGKILL

    everything = {make_result(index, 0).job_id for index in range(JOB_COUNT)}
    per_job = len(SEATS) * len(PHASES) * len(CONDITIONS) * CRASH_EPISODES
    with Store(path) as store:
        finished = store.finished()
        assert set(reported) <= finished < everything
        assert store.failed() == {}
        counts = store.episodes().groupby("job_id").size()
        assert set(counts.index) == finished
        assert (counts == per_job).all()

        store.start_run(CONFIG, resume=True)
        for index in range(JOB_COUNT):
            result = make_result(index, CRASH_EPISODES)
            if result.job_id not in store.finished():
                store.record(result)
        resumed_episodes, resumed_jobs = store.episodes(), store.jobs()

    with Store(tmp_path / "uninterrupted.sqlite") as store:
        store.start_run(CONFIG, resume=False)
        for index in range(JOB_COUNT):
            store.record(make_result(index, CRASH_EPISODES))
        reference_episodes, reference_jobs = store.episodes(), store.jobs()

    assert len(resumed_episodes) == JOB_COUNT * per_job
    pd.testing.assert_frame_equal(resumed_episodes, reference_episodes)
    pd.testing.assert_frame_equal(
        resumed_jobs.drop(columns="finished"), reference_jobs.drop(columns="finished")
    )


@pytest.mark.parametrize("column", ["exposure REAL NOT NULL", "arrival REAL"])
def test_a_store_of_an_older_layout_is_refused_by_name(tmp_path, column):
    """A results file without a column this version records: a user error naming it."""
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:
        db.executescript(_SCHEMA.replace(f"    {column},\n", ""))
    name = column.split()[0]
    with pytest.raises(
        UserError, match=rf"older tradearena \(its episodes have no {name}\): start a new run"
    ):
        Store(path)
