"""Small exchange recordings written by hand, line by line, in the formats of `envs.data`:
the tests' own data (no real recording is read)."""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from pathlib import Path

from tradearena.envs.data.tapes import Tape
from tradearena.envs.simulator.traders.replay import replay_fidelity

MIDNIGHT_NS = 1_723_075_200 * 10**9
"""2024-08-08 00:00:00 UTC, in ns since the epoch."""

Levels = Sequence[tuple[str, str]]


def at(seconds: float) -> int:
    """ns since the epoch of ``seconds`` after MIDNIGHT_NS (to the microsecond)."""
    return MIDNIGHT_NS + round(seconds * 1e6) * 1000


def depth(recv: int, E: int, U: int, u: int, bids: Levels, asks: Levels) -> str:
    data = {"e": "depthUpdate", "E": E, "s": "BTCUSDT", "U": U, "u": u, "b": bids, "a": asks}
    return _line(recv, {"stream": "btcusdt@depth@100ms", "data": data})


def trade(recv: int, T: int, price: str, qty: str, buyer_is_maker: bool) -> str:
    data = {"e": "trade", "E": T, "s": "BTCUSDT", "t": 1, "p": price, "q": qty, "T": T}
    data |= {"m": buyer_is_maker, "M": True}
    return _line(recv, {"stream": "btcusdt@trade", "data": data})


def ticker(recv: int, u: int, bid: str, bid_qty: str, ask: str, ask_qty: str) -> str:
    data = {"u": u, "s": "BTCUSDT", "b": bid, "B": bid_qty, "a": ask, "A": ask_qty}
    return _line(recv, {"stream": "btcusdt@bookTicker", "data": data})


def snapshot(recv: int, last: int, bids: Levels, asks: Levels) -> str:
    return _line(recv, {"lastUpdateId": last, "bids": bids, "asks": asks})


def _line(recv: int, message: dict) -> str:
    return f"{recv} {json.dumps(message, separators=(',', ':'))}"


def write(path: Path, lines: Sequence[str], compress: bool = False) -> Path:
    """``lines`` as a text file (gzip when ``compress``), one per line."""
    text = "".join(line + "\n" for line in lines).encode()
    path.write_bytes(gzip.compress(text) if compress else text)
    return path


def write_csv(path: Path, header: str, rows: Sequence[Sequence], compress: bool = False) -> Path:
    return write(path, [header, *(",".join(map(str, row)) for row in rows)], compress)


def rows_of(tape: Tape) -> list[tuple]:
    """The tape's messages as (type, order id, size, price, direction) tuples."""
    names = tape.messages.dtype.names[1:]
    return list(zip(*(tape.messages[name].tolist() for name in names)))


def replays_exactly(tape: Tape) -> bool:
    """Whether a replay of the tape, from its messages alone and reconciled, shows every book
    row, changing nothing to do so."""
    reports = [replay_fidelity(tape, reconcile=reconcile) for reconcile in (False, True)]
    return all((r.fidelity, r.added, r.removed, r.skipped) == (1.0, 0, 0, 0) for r in reports)
