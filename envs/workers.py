"""`Sharded`: a batched market's sessions split over processes, stepped in parallel.

This process holds the first share of the sessions and each worker process one of the others,
each share a `envs.batch.BatchedMarket` with its `envs.batch.Restarting`. A step sends every
worker its slice of the actions, steps this process's share meanwhile, then collects the
workers' answers, so no core waits on the messages while another could step. Session i is
the same session whichever process holds it: its seeds are those of session i.
"""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Sequence
from multiprocessing.connection import Connection

import numpy as np
from gymnasium.vector import AutoresetMode

from envs.batch import Restarting, session_seeds
from envs.spec import MarketSpec

__all__ = ["Sharded"]


def _serve(
    conn: Connection,
    spec: MarketSpec,
    n: int,
    kinds: Sequence[str],
    mode: str,
    opposes: dict[int, int] | None,
) -> None:
    """A worker: ``n`` sessions, answering ("reset", seeds), ("step", actions), ("close",)."""
    sessions = Restarting.of(spec, n, kinds, mode, opposes)
    while True:
        command, argument = conn.recv()
        if command == "close":
            conn.close()
            return
        try:
            if command == "reset":
                conn.send((True, sessions.reset(argument)))
            else:
                conn.send((True, sessions.step(argument)))
        except Exception as error:  # handed to the parent, which raises it
            conn.send((False, error))


class Sharded:
    """``n_sessions`` sessions of ``spec`` with outside seats of ``kinds`` (and ``opposes``),
    split as evenly as they go over ``workers`` processes: this one and ``workers - 1`` worker
    processes (numbered from 1); `reset` and `step` answer as `Restarting` does for all of
    them. `close` stops the workers."""

    def __init__(
        self,
        spec: MarketSpec,
        n_sessions: int,
        kinds: Sequence[str],
        mode: AutoresetMode,
        workers: int,
        opposes: dict[int, int] | None = None,
    ) -> None:
        if not 1 <= workers <= n_sessions:
            raise ValueError(f"workers must be in [1, {n_sessions}] (the sessions), got {workers}")
        self.n_sessions = n_sessions
        bounds = np.linspace(0, n_sessions, workers + 1).round().astype(int)
        self.slices = [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:])]
        self.local = Restarting.of(spec, self.slices[0].stop, kinds, mode, opposes)
        self.broken = False  # a command was interrupted with answers unheard
        context = mp.get_context("spawn")  # no fork of a process holding threads (torch, Ray)
        self.conns, self.processes = [], []
        for share in self.slices[1:]:
            parent, child = context.Pipe()
            n = share.stop - share.start
            process = context.Process(
                target=_serve,
                args=(child, spec, n, tuple(kinds), mode.value, opposes),
                daemon=True,
            )
            process.start()
            child.close()
            self.conns.append(parent)
            self.processes.append(process)

    def reset(self, seed: int | Sequence[int | None] | None) -> list[np.ndarray]:
        """Restart every session (session i reseeded with seed + i, or the i-th of a
        sequence; None keeps the generators); every seat's observations."""
        seeds = session_seeds(seed, self.n_sessions)
        answers = self._ask("reset", [seeds[share] for share in self.slices])
        return [np.concatenate(parts) for parts in zip(*answers)]

    def step(
        self, actions: np.ndarray
    ) -> tuple[list[np.ndarray], np.ndarray, np.ndarray, list[np.ndarray] | None]:
        """One step of every session, ``actions`` (N, seats); as `Restarting.step`."""
        answers = self._ask("step", [actions[share] for share in self.slices])
        obs = [np.concatenate(parts) for parts in zip(*(a[0] for a in answers))]
        rewards = np.concatenate([a[1] for a in answers])
        terminated = np.concatenate([a[2] for a in answers])
        final = None
        if any(a[3] is not None for a in answers):  # a share with no ending gives its obs
            finals = [a[3] if a[3] is not None else a[0] for a in answers]
            final = [np.concatenate(parts) for parts in zip(*finals)]
        return obs, rewards, terminated, final

    def _ask(self, command: str, arguments: list) -> list:
        """Every share's answer to ``command`` with its argument: the workers' shares are
        asked first, this process's is answered while they work. Whatever fails, every worker
        that was asked is heard before the error goes on, so no answer is left for the next
        command; one interrupted while hearing them leaves the shares out of step, and every
        later command says so."""
        if self.broken:
            raise RuntimeError(
                "an earlier step was interrupted while the worker processes were answering, so "
                "the sessions are out of step: close this environment and make a new one"
            )
        asked: list[int] = []
        self.broken = True
        try:
            for k, (conn, argument) in enumerate(zip(self.conns, arguments[1:])):
                try:
                    conn.send((command, argument))
                except OSError:
                    self._stopped(k)
                asked.append(k)
            local = getattr(self.local, command)(arguments[0])
        finally:
            answers = [self._answer(k) for k in asked]
            self.broken = False
        for k, (ok, answer) in zip(asked, answers):
            if ok is None:
                self._stopped(k)
            if not ok:
                raise answer
        return [local] + [answer for _, answer in answers]

    def _answer(self, k: int) -> tuple[bool | None, object]:
        """The ``k``-th worker's answer: (True, result), (False, the error it raised), or
        (None, None) when it is gone."""
        try:
            return self.conns[k].recv()
        except (EOFError, OSError):
            return None, None

    def _stopped(self, k: int) -> None:
        """The ``k``-th worker process is gone: say which, and the usual cause."""
        process, share = self.processes[k], self.slices[k + 1]
        process.join(timeout=1)
        raise RuntimeError(
            f"worker process {k + 1} (sessions {share.start}-{share.stop - 1}) stopped (exit code "
            f"{process.exitcode}); workers are spawned, so a script that makes them needs an "
            "`if __name__ == '__main__':` guard"
        ) from None

    def close(self) -> None:
        for conn, process in zip(self.conns, self.processes):
            if process.is_alive():
                conn.send(("close", None))
            process.join(timeout=5)
        self.conns, self.processes = [], []
