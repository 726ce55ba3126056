"""Results of one run directory, kept in ``results.sqlite``.

Every finished Job is written in one SQLite transaction: its row in ``jobs`` and all its rows in
``episodes`` appear together or not at all, so a run killed at any moment (even ``kill -9``) leaves
only whole jobs behind, and ``--resume`` recomputes exactly the jobs that are not ``done``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

import pandas as pd

from tradearena.envs.errors import UserError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    started TEXT NOT NULL,
    config TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS jobs (
    job_id TEXT PRIMARY KEY,
    status TEXT NOT NULL CHECK (status IN ('done', 'failed')),
    seed INTEGER NOT NULL,
    seconds REAL NOT NULL,
    error TEXT,
    finished TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS episodes (
    job_id TEXT NOT NULL REFERENCES jobs (job_id),
    seat INTEGER NOT NULL,
    agent TEXT NOT NULL,
    phase TEXT NOT NULL,
    condition TEXT NOT NULL,
    episode INTEGER NOT NULL,
    reward REAL NOT NULL,
    pnl REAL NOT NULL,
    trades INTEGER NOT NULL,
    inventory INTEGER NOT NULL,
    exposure REAL NOT NULL,
    steps INTEGER NOT NULL,
    value REAL,
    arrival REAL,
    PRIMARY KEY (job_id, agent, seat, phase, condition, episode)
);
"""

_EPISODE_COLUMNS = {
    "job_id": "str",
    "seed": "int64",
    "seat": "int64",
    "agent": "str",
    "phase": "str",
    "condition": "str",
    "episode": "int64",
    "reward": "float64",
    "pnl": "float64",
    "trades": "int64",
    "inventory": "int64",
    "exposure": "float64",
    "steps": "int64",
    "value": "float64",
    "arrival": "float64",
}

# ``error`` is absent (None) for done jobs, so it keeps the dtype pandas infers.
_JOB_COLUMNS = {
    "job_id": "str",
    "status": "str",
    "seed": "int64",
    "seconds": "float64",
    "error": None,
    "finished": "str",
}


@dataclass(frozen=True)
class EpisodeRecord:
    """One episode of one seat in one job."""

    seat: int  # seat index in the market
    agent: str  # the agent's label in the experiment (e.g. "raql")
    phase: str  # "train", "test", or "eval" (greedy checkpoints during training)
    condition: str  # market condition: "clean" or a perturbation name
    episode: int  # 0-based within (seat, phase, condition); eval: see rollout.episodes
    reward: float  # sum of the seat's rewards (agent units: dollars x reward_scale)
    pnl: float  # change of marked-to-market value over the episode, dollars
    trades: int  # fills
    inventory: int  # final inventory, shares
    exposure: float  # |inventory| after each step, averaged over the steps, shares
    steps: int  # decision steps
    value: float | None = None  # the agent's greedy value estimate at the episode's
    # opening observation (agent units, as ``reward``): test and eval episodes of agents
    # with ``values``; None otherwise (NULL in the store, NaN in its frames)
    arrival: float | None = None  # the arrival price (the opening mid), dollars per share;
    # None where no market gave one (NULL in the store, NaN in its frames)


@dataclass(frozen=True)
class JobResult:
    """What one Job produced: its episode records, or the traceback that stopped it."""

    job_id: str
    seed: int
    records: tuple[EpisodeRecord, ...]
    seconds: float  # wall time of the job, seconds
    error: str | None = None  # traceback text when the job failed (records then empty)


class Store:
    """Results of one run directory: ``results.sqlite`` in WAL mode, one transaction per job.

    ``journal_mode=WAL`` with ``synchronous=NORMAL`` is durable enough here: a commit is in the
    WAL file once ``record`` returns, so a killed process (even ``kill -9``) loses nothing that
    was recorded, and an interrupted transaction is rolled back on the next open. Only a power
    loss or OS crash can drop the last committed jobs, never part of one, and ``--resume``
    recomputes whatever is missing.
    """

    def __init__(self, path: str | Path) -> None:
        """Open (creating if missing) the database file at ``path``."""
        self.path = Path(path)
        # Autocommit mode: transactions are opened explicitly in ``_transaction``.
        self._db = sqlite3.connect(self.path, isolation_level=None)
        try:
            with self._readable():
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.execute("PRAGMA foreign_keys=ON")
                self._db.executescript(f"BEGIN IMMEDIATE; {_SCHEMA} COMMIT;")
                columns = {row[1] for row in self._db.execute("PRAGMA table_info(episodes)")}
        except UserError:
            self._db.close()
            raise
        missing = sorted(set(_EPISODE_COLUMNS) - {"seed"} - columns)
        if missing:
            raise UserError(
                f"{self.path} was written by an older tradearena (its episodes have no "
                f"{', '.join(missing)}): start a new run directory"
            )

    def start_run(self, config_text: str, *, resume: bool) -> int:
        """Add a row to ``runs`` and return its id.

        A fresh run needs an empty store; a resumed run needs the config of the stored run.
        """
        with self._transaction():
            last = self._db.execute("SELECT config FROM runs ORDER BY id DESC LIMIT 1").fetchone()
            if last is not None and not resume:
                raise UserError(
                    f"{self.path} already holds a run: pass --resume to continue it, "
                    "or start a new run directory"
                )
            if last is not None and last[0] != config_text:
                raise UserError(
                    f"the config changed since the run in {self.path} started: "
                    "start a new run directory or drop --resume"
                )
            cursor = self._db.execute(
                "INSERT INTO runs (started, config) VALUES (?, ?)", (_now(), config_text)
            )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def finished(self) -> set[str]:
        """Ids of the jobs recorded as done."""
        with self._readable():
            rows = self._db.execute("SELECT job_id FROM jobs WHERE status = 'done'").fetchall()
        return {job_id for (job_id,) in rows}

    def failed(self) -> dict[str, str]:
        """Traceback text of each failed job, by job id."""
        with self._readable():
            rows = self._db.execute("SELECT job_id, error FROM jobs WHERE status = 'failed'")
            return dict(rows.fetchall())

    def record(self, result: JobResult) -> None:
        """Write one finished job and its episodes in a single transaction.

        A failed job may be recorded again (a rerun replaces its row); a done job may not.
        """
        if result.error is not None and result.records:
            raise ValueError(f"job {result.job_id} failed but carries episode records")
        status = "done" if result.error is None else "failed"
        episodes = [
            (
                result.job_id,
                int(r.seat),
                str(r.agent),
                str(r.phase),
                str(r.condition),
                int(r.episode),
                float(r.reward),
                float(r.pnl),
                int(r.trades),
                int(r.inventory),
                float(r.exposure),
                int(r.steps),
                None if r.value is None else float(r.value),
                None if r.arrival is None else float(r.arrival),
            )
            for r in result.records
        ]
        with self._transaction():
            row = self._db.execute(
                "SELECT status FROM jobs WHERE job_id = ?", (result.job_id,)
            ).fetchone()
            if row is not None and row[0] == "done":
                raise ValueError(f"job {result.job_id} is already recorded as done")
            self._db.execute(
                """
                INSERT INTO jobs (job_id, status, seed, seconds, error, finished)
                VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (job_id) DO UPDATE SET
                    status = excluded.status, seed = excluded.seed, seconds = excluded.seconds,
                    error = excluded.error, finished = excluded.finished
                """,
                (
                    result.job_id,
                    status,
                    int(result.seed),
                    float(result.seconds),
                    result.error,
                    _now(),
                ),
            )
            self._db.executemany(
                "INSERT INTO episodes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", episodes
            )

    def episodes(self, *, phase: str | None = None) -> pd.DataFrame:
        """Episode rows (all, or one phase) with their job's seed, in key order."""
        where, params = ("WHERE e.phase = ?", (phase,)) if phase is not None else ("", ())
        with self._readable():
            rows = self._rows(
                f"""
            SELECT e.job_id, j.seed, e.seat, e.agent, e.phase, e.condition, e.episode,
                   e.reward, e.pnl, e.trades, e.inventory, e.exposure, e.steps, e.value,
                   e.arrival
            FROM episodes AS e JOIN jobs AS j USING (job_id)
            {where}
            ORDER BY e.job_id, e.agent, e.seat, e.phase, e.condition, e.episode
            """,
                params,
            )
        return _frame(rows, _EPISODE_COLUMNS)

    def jobs(self) -> pd.DataFrame:
        """One row per recorded job (seconds of wall time, ISO-8601 UTC finish time), by id."""
        with self._readable():
            rows = self._rows(
                "SELECT job_id, status, seed, seconds, error, finished FROM jobs ORDER BY job_id"
            )
        return _frame(rows, _JOB_COLUMNS)

    def close(self) -> None:
        """Close the database connection."""
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        return self._db.execute(sql, params).fetchall()

    @contextmanager
    def _readable(self) -> Iterator[None]:
        """SQLite's error for a file that is not a database, or a damaged one, as a
        `UserError` naming the file (its subclasses, such as a lock or a constraint, pass
        through)."""
        try:
            yield
        except sqlite3.DatabaseError as error:
            if type(error) is not sqlite3.DatabaseError:
                raise
            raise UserError(
                f"{self.path}: not a readable results database ({error}): the file is damaged "
                "or is not one tradearena wrote; start a new run directory"
            ) from None

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """Commit the enclosed statements together, or roll all of them back."""
        with self._readable():
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")


def _now() -> str:
    """The current time, ISO 8601 in UTC, to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def _frame(rows: list[tuple], columns: dict[str, str | None]) -> pd.DataFrame:
    """A frame of ``rows`` with the given dtypes (None: inferred), also when empty."""
    frame = pd.DataFrame.from_records(rows, columns=list(columns))
    return frame.astype({name: dtype for name, dtype in columns.items() if dtype is not None})
