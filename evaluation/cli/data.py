"""The ``tradearena data`` commands: ``check`` a tape (and its replay's fidelity), ``convert``
an exchange's recording."""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

from tradearena.envs.data.convert import META, ORDERBOOK, convert, load_converted, write_converted
from tradearena.envs.data.tapes import load_lobster


def data_check(args: argparse.Namespace) -> int:
    from tradearena.envs.data.load import (
        CrossedBook,
        PartialTape,
        ThinTape,
        crossed,
        orderbook_beside,
        partial,
        thin,
    )
    from tradearena.envs.simulator.traders.replay import replay_fidelity

    start = time.perf_counter()
    if Path(args.messages).with_name(META).exists():  # a converted recording
        tape = load_converted(args.messages, args.orderbook)
        units = f"tick {tape.tick_size:g}, lot {tape.lot_size:g}; "
    else:
        beside = orderbook_beside(args.messages)
        if args.orderbook is None and beside is not None and beside.exists():
            args.orderbook = str(beside)
        tape = load_lobster(args.messages, args.orderbook, tick_size=args.tick_size)
        units = ""
    times = tape.messages["time"]
    print(
        f"{args.messages}: {len(tape):,} messages, {times[0]:.3f} s to {times[-1]:.3f} s, "
        f"{units}valid (read in {time.perf_counter() - start:.2f} s)"
    )
    if (reason := thin(tape)) is not None:
        warnings.warn(ThinTape(reason), stacklevel=1)
    if (reason := partial(tape)) is not None:
        warnings.warn(PartialTape(reason), stacklevel=1)
    if tape.book is None:
        return 0
    if (reason := crossed(tape)) is not None:
        warnings.warn(CrossedBook(reason), stacklevel=1)
    verdict = "readable" if reason is not None else "valid"
    print(
        f"{args.orderbook or 'orderbook'}: {len(tape.book):,} rows of {tape.levels} level(s), "
        f"{verdict}"
    )
    for reconcile in (False, True):
        start = time.perf_counter()
        report = replay_fidelity(tape, reconcile=reconcile)
        label = "with reconciliation" if reconcile else "messages alone     "
        print(
            f"  replay fidelity, {label}: {report.fidelity:.4f} "
            f"({report.messages:,} events, {time.perf_counter() - start:.2f} s; "
            f"added {report.added:,} shares, removed {report.removed:,}, "
            f"unmatched cancels {report.skipped:,})"
        )
    return 0


def data_convert(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    conversion = convert(
        args.format, args.inputs, levels=args.levels, tick=args.tick, lot=args.lot, band=args.band
    )
    seconds = time.perf_counter() - start
    path = write_converted(conversion, args.out)
    meta = conversion.meta
    times = conversion.tape.messages["time"]
    print(
        f"{meta['format']} {meta['symbol'] or ''} {meta['date']}: {meta['messages']:,} messages, "
        f"{times[0]:.3f} s to {times[-1]:.3f} s after midnight UTC, tick {meta['tick_size']}, "
        f"lot {meta['lot_size']} (converted in {seconds:.2f} s)"
    )
    book, meta_file = path.with_name(ORDERBOOK), path.with_name(META)
    print(f"  wrote {path}, {book} ({args.levels} levels), {meta_file}")
    counts = ", ".join(f"{name} {value:,}" for name, value in meta["counts"].items())
    print(f"  counts: {counts}")
    for gap in meta["gaps"]:
        print(f"  gap: {gap}")
    return 0
