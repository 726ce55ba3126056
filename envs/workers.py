"""`Sharded`: a batched market's sessions split over processes, stepped in parallel.

This process holds the first share of the sessions and each worker process one of the others,
each share a `envs.batch.Restarting`. The actions and every answer travel through memory
the processes share (a `Board` of arrays), and each side waits for the other's counter by
spinning briefly, then sleeping until it is rung (a `Link`): a step costs no pickling and,
while both sides are busy, no system call. A step posts the workers' actions, steps this
process's share meanwhile, then reads the workers' answers. Session i is the same session
whichever process holds it: its seeds are those of session i.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import time
from collections.abc import Sequence
from multiprocessing.connection import Connection

import numpy as np
from gymnasium.vector import AutoresetMode

from tradearena.envs.batch import Restarting, session_seeds
from tradearena.envs.spec import MarketSpec

__all__ = ["Board", "Link", "Sharded"]

SPIN_SECONDS = 0.002  # a side waiting for the other spins this long, then sleeps
NAP_SECONDS = 0.001  # a sleeping side looks at the counter at least this often

# a worker's control slots (int64): what this process writes, then what the worker writes,
# each group on its own cache line
POSTED, OPCODE, PARENT_SLEEPS = 0, 1, 2
ANSWERED, FAILED, FINAL, WORKER_SLEEPS = 8, 9, 10, 11
CONTROL_SLOTS = 16
STEP, RESET, CLOSE = 0, 1, 2  # opcodes


class Board:
    """Named arrays laid out in one shared buffer: ``fields`` maps names to (dtype, shape).
    Pickles to a spawned process with its buffer, where it shows the same memory."""

    def __init__(self, fields: dict[str, tuple[np.dtype, tuple[int, ...]]], buffer=None) -> None:
        self.fields, self.offsets, size = fields, {}, 0
        for name, (dtype, shape) in fields.items():
            self.offsets[name] = size
            size += -(-np.dtype(dtype).itemsize * int(np.prod(shape)) // 64) * 64
        if buffer is None:
            buffer = mp.get_context("spawn").RawArray("b", max(size, 64))
        self.buffer = buffer
        memory = np.frombuffer(buffer, dtype=np.uint8)
        self.arrays = {
            name: memory[self.offsets[name] :][: np.dtype(dtype).itemsize * int(np.prod(shape))]
            .view(dtype)
            .reshape(shape)
            for name, (dtype, shape) in fields.items()
        }

    def __getitem__(self, name: str) -> np.ndarray:
        return self.arrays[name]

    def __reduce__(self):
        return Board, (self.fields, self.buffer)


class Link:
    """One side's end of a worker's control slots (int64 (CONTROL_SLOTS,) in a `Board`) and
    bell (a `Connection`): `post` sets a counter and rings the other side if it sleeps;
    `wait` spins ``spin`` seconds for the other side's counter to move, then sleeps on the
    bell, looking again every `NAP_SECONDS` (so a ring lost to a race costs at most that).
    Raises EOFError or OSError when the other side is gone."""

    def __init__(self, control: np.ndarray, bell: Connection, spin: float) -> None:
        self.control, self.bell, self.spin = control, bell, spin

    def post(self, slot: int, value: int, sleeper: int) -> None:
        self.control[slot] = value
        if self.control[sleeper]:
            self.bell.send_bytes(b"")

    def wait(self, slot: int, old: int, sleeper: int) -> int:
        """The counter in ``slot`` once it is no longer ``old``."""
        control = self.control
        deadline = time.perf_counter() + self.spin
        while control[slot] == old:
            if time.perf_counter() > deadline:
                break
        else:
            return int(control[slot])
        control[sleeper] = 1
        try:
            while control[slot] == old:
                if self.bell.poll(NAP_SECONDS):
                    self.bell.recv_bytes()
        finally:
            control[sleeper] = 0
        return int(control[slot])


def _serve(
    conn: Connection,
    bell: Connection,
    board: Board,
    index: int,
    share: slice,
    spin: float,
    spec: MarketSpec,
    kinds: Sequence[str],
    mode: str,
    opposes: dict[int, int] | None,
) -> None:
    """Worker ``index`` (from 0): the sessions of ``share``, answering the opcodes posted on
    its control slots (a reset's seeds come through ``conn``, as do the errors it raises)."""
    sessions = Restarting.of(spec, share.stop - share.start, kinds, mode, opposes)
    control = board["control"][index]
    link = Link(control, bell, spin)
    seen = 0
    while True:
        try:
            seen = link.wait(POSTED, seen, WORKER_SLEEPS)
        except (EOFError, OSError):  # this process is gone
            return
        if control[OPCODE] == CLOSE:
            return
        try:
            if control[OPCODE] == RESET:
                _write(board, share, sessions.reset(conn.recv()))
            else:
                obs, rewards, terminated, final = sessions.step(board["actions"][share])
                _write(board, share, obs, rewards, terminated, final)
                control[FINAL] = final is not None
            control[FAILED] = 0
        except Exception as error:  # handed to this process, which raises it
            control[FAILED] = 1
            conn.send(error)
        link.post(ANSWERED, seen, PARENT_SLEEPS)


def _write(
    board: Board,
    share: slice,
    obs: list[np.ndarray],
    rewards: np.ndarray | None = None,
    terminated: np.ndarray | None = None,
    final: list[np.ndarray] | None = None,
) -> None:
    """A share's answer into ``board``'s rows of ``share``."""
    for seat, x in enumerate(obs):
        board[f"obs{seat}"][share] = x
    if rewards is not None:
        board["rewards"][share] = rewards
        board["terminated"][share] = terminated
    for seat, x in enumerate(final or ()):
        board[f"final{seat}"][share] = x


class Sharded:
    """``n_sessions`` sessions of ``spec`` with outside seats of ``kinds`` (and ``opposes``),
    split as evenly as they go over ``workers`` processes: this one and ``workers - 1`` worker
    processes (numbered from 1); `reset` and `step` answer as `Restarting` does for all of
    them. `close` stops the workers. Waiting sides spin only when every process can have a
    core of its own."""

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
        batch = self.local.batch
        fields = {
            "control": (np.int64, (workers - 1, CONTROL_SLOTS)),
            "actions": (np.int64, (n_sessions, len(kinds))),
            "rewards": (np.float64, (n_sessions, batch.n_seats)),
            "terminated": (np.bool_, (n_sessions,)),
        }
        for seat, space in enumerate(batch.observation_spaces):
            for name in ("obs", "final"):
                fields[f"{name}{seat}"] = (np.dtype(space.dtype), (n_sessions, *space.shape))
        self.board = Board(fields)
        spin = SPIN_SECONDS if workers <= len(os.sched_getaffinity(0)) else 0.0
        self.posted = 0  # commands posted to the workers
        self.heard = [0] * (workers - 1)  # each worker's answer counter before the last post
        self.broken = False  # a command was interrupted with answers unheard
        context = mp.get_context("spawn")  # no fork of a process holding threads (torch, Ray)
        self.conns, self.links, self.processes = [], [], []
        for k, share in enumerate(self.slices[1:]):
            parent, child = context.Pipe()
            bell, child_bell = context.Pipe()
            process = context.Process(
                target=_serve,
                args=(child, child_bell, self.board, k, share, spin, spec, tuple(kinds)),
                kwargs={"mode": mode.value, "opposes": opposes},
                daemon=True,
            )
            process.start()
            child.close()
            child_bell.close()
            self.conns.append(parent)
            self.links.append(Link(self.board["control"][k], bell, spin))
            self.processes.append(process)

    def reset(self, seed: int | Sequence[int | None] | None) -> list[np.ndarray]:
        """Restart every session (session i reseeded with seed + i, or the i-th of a
        sequence; None keeps the generators); every seat's observations."""
        seeds = session_seeds(seed, self.n_sessions)
        return self._gather(self._ask(RESET, [seeds[share] for share in self.slices]))

    def step(
        self, actions: np.ndarray
    ) -> tuple[list[np.ndarray], np.ndarray, np.ndarray, list[np.ndarray] | None]:
        """One step of every session, ``actions`` (N, seats); as `Restarting.step`."""
        obs, rewards, terminated, final = self._ask(STEP, [actions[s] for s in self.slices])
        rest = slice(self.slices[0].stop, None)
        rewards = np.concatenate([rewards, self.board["rewards"][rest]])
        terminated = np.concatenate([terminated, self.board["terminated"][rest]])
        ended = [bool(link.control[FINAL]) for link in self.links]
        if final is not None or any(ended):  # a share with no ending gives its obs
            final = self._gather(final if final is not None else obs, ended)
        return self._gather(obs), rewards, terminated, final

    def _gather(self, local: list[np.ndarray], finals: Sequence[bool] = ()) -> list[np.ndarray]:
        """Every seat's observations of all sessions: ``local``'s, then each worker's from the
        board, its final ones where ``finals`` says so."""
        finals = list(finals) or [False] * len(self.links)
        return [
            np.concatenate(
                [x]
                + [
                    self.board[f"final{seat}" if ending else f"obs{seat}"][share]
                    for ending, share in zip(finals, self.slices[1:])
                ]
            )
            for seat, x in enumerate(local)
        ]

    def _ask(self, opcode: int, arguments: list) -> object:
        """This process's share's answer to ``opcode`` with its argument, the workers' in the
        board: the workers' shares are posted first, this process's is answered while they
        work. Whatever fails, every worker that was posted is heard before the error goes on,
        so no answer is left for the next command; one interrupted while hearing them leaves
        the shares out of step, and every later command says so."""
        if self.broken:
            raise RuntimeError(
                "an earlier step was interrupted while the worker processes were answering, so "
                "the sessions are out of step: close this environment and make a new one"
            )
        asked: list[int] = []
        self.broken = True
        self.posted += 1
        try:
            for k, argument in enumerate(arguments[1:]):
                share = self.slices[k + 1]
                try:
                    if opcode == RESET:
                        self.conns[k].send(argument)
                    else:
                        self.board["actions"][share] = argument
                    link = self.links[k]
                    link.control[OPCODE] = opcode
                    self.heard[k] = int(link.control[ANSWERED])
                    link.post(POSTED, self.posted, WORKER_SLEEPS)
                except OSError:
                    self._stopped(k)
                asked.append(k)
            local = (self.local.reset if opcode == RESET else self.local.step)(arguments[0])
        finally:
            answers = [self._answer(k) for k in asked]
            self.broken = False
        for k, (ok, error) in zip(asked, answers):
            if ok is None:
                self._stopped(k)
            if not ok:
                raise error
        return local

    def _answer(self, k: int) -> tuple[bool | None, BaseException | None]:
        """Wait for the ``k``-th worker's answer: (True, None) once it is on the board,
        (False, the error it raised), or (None, None) when the worker is gone."""
        link = self.links[k]
        try:
            link.wait(ANSWERED, self.heard[k], PARENT_SLEEPS)
            if link.control[FAILED]:
                return False, self.conns[k].recv()
        except (EOFError, OSError):
            return None, None
        return True, None

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
        self.posted += 1
        for link, process in zip(self.links, self.processes):
            if process.is_alive():
                link.control[OPCODE] = CLOSE
                with contextlib.suppress(OSError):  # gone since
                    link.post(POSTED, self.posted, WORKER_SLEEPS)
            process.join(timeout=5)
        self.conns, self.links, self.processes = [], [], []
