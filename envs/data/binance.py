"""Binance recordings: the combined streams of one symbol as a collector writes them.

One message per line: the local receive time in ns since the epoch, one space, the JSON:

- ``{"stream": "<sym>@depth@100ms", "data": {"e": "depthUpdate", "E": ms, "s": sym, "U":
  first, "u": last, "b": [[price, qty], ...], "a": [...]}}``: the levels that changed (qty
  "0" deletes the level);
- ``{"stream": "<sym>@trade", "data": {"e": "trade", "p": price, "q": qty, "T": ms, "m":
  buyer_is_maker, ...}}``;
- ``{"stream": "<sym>@bookTicker", "data": {"u": id, "b": .., "B": .., "a": .., "A": ..}}``:
  read and checked, not applied (the depth stream is the book's one source);
- a REST depth snapshot ``{"lastUpdateId": N, "bids": [[p, q], ...], "asks": [...]}``.

The book is kept as Binance documents: depth updates wait for a snapshot; those with u <=
lastUpdateId are dropped, the first applied has U <= lastUpdateId + 1 <= u, and each later one
starts at most one past the last applied u. A later start is a gap (counted, with its file and
line): the updates go on being applied (each names the levels' new quantities) and the book is
replaced at the next snapshot, after which the updates received since the gap that the snapshot
does not cover are applied again. A snapshot that arrives while the book is in step is not
needed (``snapshots_skipped``). Several files read as one recording, in the order given.

Trades are placed among the depth updates by exchange time (a trade at T goes before the first
update whose E >= T, which already shows it), so a level never loses a trade's volume twice; the
tape's times are the receive times, made never to decrease. Each depth update's deletions go
first, so that a level that moved does not seem to cross one that left.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from decimal import Decimal

import numpy as np

from tradearena.envs.data import text
from tradearena.envs.data.decimals import Decimals, to_steps
from tradearena.envs.data.feed import Feed, interleave, level_events, receive_order
from tradearena.envs.data.files import FeedError, Source, read_sources

__all__ = ["read"]


def read(
    paths: Sequence[str | os.PathLike], tick: Decimal | None = None, lot: Decimal | None = None
) -> Feed:
    """The `Feed` of a Binance recording in one or more consecutive files (gzip or plain)."""
    sources = read_sources(paths)
    scans = []
    for source in sources:
        try:
            scans.append(text.scan_binance(source.data))
        except text.ScanError as error:
            raise source.error(error) from None
    symbols = {s["symbol"] for s in scans if s["symbol"] is not None}
    if len(symbols) > 1:
        raise FeedError(f"{', '.join(sorted(s.decode() for s in symbols))}: one symbol per tape")
    m = _join(scans)
    ops, counts, gaps = _synchronise(m, sources)
    trades = np.flatnonzero(m["kind"] == text.BINANCE_TRADE)
    counts["depth_levels"] = len(m["side"]) - len(trades)
    counts["trades"] = len(trades)
    counts["tickers"] = int(np.count_nonzero(m["kind"] == text.BINANCE_TICKER))
    counts["other_messages"] = int(np.count_nonzero(m["kind"] == text.BINANCE_OTHER))
    late = trades > ops[0]
    counts["trades_before_book"] = int(np.count_nonzero(~late))
    trades = trades[late]
    is_depth = m["kind"][ops] == text.BINANCE_DEPTH
    # a snapshot takes the exchange time of the update before it
    order = interleave(np.where(is_depth, m["time"][ops], -1), m["time"][trades], first=1)
    messages = np.concatenate([ops, trades])[order]

    prices = Decimals(m["price_m"], m["price_d"], m["level_source"], m["level_row"])
    quantities = Decimals(m["qty_m"], m["qty_d"], m["level_source"], m["level_row"])
    traded = np.zeros(len(prices), bool)
    traded[m["start"][trades]] = True
    steps = to_steps(prices, quantities, traded, tick, lot, sources)
    kind = m["kind"][messages]
    events = level_events(
        m["start"][messages],
        m["stop"][messages],
        kind == text.BINANCE_SNAPSHOT,
        kind == text.BINANCE_TRADE,
        receive_order(m["recv"][messages]),
        m["side"],
        steps.price,
        steps.qty,
        steps.off_grid,
    )
    counts["off_grid_quotes"] = int(np.count_nonzero(steps.off_grid))
    symbol = symbols.pop().decode() if symbols else None
    inputs = tuple(s.path for s in sources)
    return Feed("binance", inputs, symbol, steps.tick, steps.lot, events, False, counts, gaps)


def _join(scans: list[dict]) -> dict[str, np.ndarray]:
    """The files' messages as one recording: level rows renumbered, each message and level
    knowing its file (``source``, ``level_source``) and line (``row``, ``level_row``)."""
    out: dict[str, list] = {}
    offset = 0
    for index, scan in enumerate(scans):
        n_levels = len(scan["side"])
        for name, values in scan.items():
            if name == "symbol":
                continue
            if name in ("start", "stop"):
                values = values + offset
            out.setdefault(name, []).append(values)
        out.setdefault("source", []).append(np.full(len(scan["kind"]), index))
        owner = np.repeat(np.arange(len(scan["kind"])), scan["stop"] - scan["start"])
        out.setdefault("level_source", []).append(np.full(n_levels, index))
        out.setdefault("level_row", []).append(scan["row"][owner])
        offset += n_levels
    return {name: np.concatenate(parts) for name, parts in out.items()}


def _synchronise(
    m: dict[str, np.ndarray], sources: list[Source]
) -> tuple[np.ndarray, dict[str, int], list[str]]:
    """The snapshots and depth updates applied, in order (message indexes; an update may come
    twice, see the module docstring), the sync counts and the gaps."""
    kind, first, last = m["kind"], m["first"].tolist(), m["last"].tolist()
    book = np.flatnonzero((kind == text.BINANCE_DEPTH) | (kind == text.BINANCE_SNAPSHOT))
    applied: list[int] = []
    buffer: list[int] = []
    gaps: list[str] = []
    state = {"started": False, "synced": False, "last": 0, "skipped": 0, "stale": 0}

    def where(i: int) -> str:
        return sources[int(m["source"][i])].where(int(m["row"][i]))

    def update(i: int) -> None:
        if not state["started"]:
            buffer.append(i)
            return
        if state["synced"]:
            if last[i] <= state["last"]:
                state["stale"] += 1
                return
            if first[i] > state["last"] + 1:
                gaps.append(f"{where(i)}: update ids {state['last'] + 1} to {first[i] - 1} missing")
                state["synced"] = False
        if not state["synced"]:
            buffer.append(i)
        applied.append(i)
        state["last"] = last[i]

    for i in book.tolist():
        if kind[i] == text.BINANCE_DEPTH:
            update(i)
        elif state["synced"]:
            state["skipped"] += 1
        else:
            if state["started"] and gaps:
                gaps[-1] += f"; in step again at the snapshot of {where(i)}"
            applied.append(i)
            state.update(started=True, synced=True, last=last[i])
            waiting = buffer[:]
            buffer.clear()
            for j in waiting:
                update(j)
    snapshots = int(np.count_nonzero(kind == text.BINANCE_SNAPSHOT))
    if not snapshots:
        names = ", ".join(s.path for s in sources)
        raise FeedError(
            f'{names}: no depth snapshot (a {{"lastUpdateId": ...}} line) to start the book from'
        )
    depth = int(np.count_nonzero(kind == text.BINANCE_DEPTH))
    used = len(set(applied)) - (snapshots - state["skipped"])
    counts = {
        "depth_updates": depth,
        "depth_updates_applied": used,
        "depth_updates_dropped": depth - used,
        "snapshots": snapshots,
        "snapshots_skipped": state["skipped"],
        "gaps": len(gaps),
    }
    return np.array(applied, dtype=np.int64), counts, gaps
