"""Recorded days written as LOBSTER pairs, for the tests of the judges and the fit."""

from __future__ import annotations

from pathlib import Path


def lobster_day(
    directory: Path, name: str, steps: int, *, seed: int = 11, levels: int = 1, book: bool = True
) -> tuple[Path, object]:
    """A day of the light population (``steps`` one-minute steps, seed ``seed``) written as
    ``directory/<name>_message_<levels>.csv`` with its orderbook file beside it (elsewhere
    when not ``book``): (the message file, the tape)."""
    from tradearena.envs.data.tapes import write_lobster
    from tradearena.envs.simulator.recording import synthetic_tape
    from tradearena.envs.simulator.traders import light

    tape = synthetic_tape(seed, traders=light(), levels=levels, n_steps=steps)
    messages = directory / f"{name}_message_{levels}.csv"
    orderbook = directory / (f"{name}_orderbook_{levels}.csv" if book else "elsewhere.csv")
    write_lobster(tape, messages, orderbook)
    return messages, tape
