"""Order flow learned from a tape as a population of the market: `LearnedFlow`, whose events
are drawn one at a time (`learned_flow.sampler`) from a `learned_flow.model.EventModel` or
its neural variant, reacting to the book as it is (the seats' orders included)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tradearena.envs.errors import ParameterError
from tradearena.envs.simulator.learned_flow import neural
from tradearena.envs.simulator.learned_flow.model import EventModel, check
from tradearena.envs.simulator.learned_flow.neural import NeuralModel, is_neural
from tradearena.envs.simulator.learned_flow.parameters import LearnedFlowError
from tradearena.envs.simulator.learned_flow.sampler import EventSampler, NeuralSampler, Sampler
from tradearena.envs.simulator.orders import Orders, Program, Rule
from tradearena.envs.simulator.traders.base import Trader

if TYPE_CHECKING:
    from tradearena.envs.simulator.book import OrderBook
    from tradearena.envs.simulator.market import Market


class LearnedFlow(Trader):
    """The order flow of ``model`` (an `EventModel` or a `NeuralModel`, or the path of its
    parameter file written by ``tradearena learn``), as one
    population with two owners: the bid side's resting orders are the first's, the ask
    side's the second's.

    At reset it places the model's opening book around the market's initial price (its
    offsets from the mid, its queues), fills both sides to the model's depth and draws its
    first candidate from the session's start; the compiled flow then carries its events out.
    The market must run at the tape's tick of one lot (``tick_size``: the tape's tick times
    its lot, as a market of a converted recording counts them): another is an error naming
    both."""

    n_owners = 2

    def __init__(self, model: EventModel | NeuralModel | str | Path) -> None:
        try:
            if isinstance(model, str | Path):
                model = (NeuralModel.load if is_neural(model) else EventModel.load)(model)
            elif isinstance(model, NeuralModel):
                neural.check(model)
            elif isinstance(model, EventModel):
                check(model)
            else:
                reason = f"must be an EventModel, a NeuralModel or its file, got {model!r}"
                raise ParameterError("model", reason)
        except LearnedFlowError as error:
            raise ParameterError("model", str(error)) from None
        self.model = model

    def reset(self, market: Market, owners: range, rng: np.random.Generator) -> None:
        super().reset(market, owners, rng)
        model = self.model.base if isinstance(self.model, NeuralModel) else self.model
        tick = model.tick_size * model.lot_size  # dollars a tick of one lot
        if not math.isclose(market.tick_size, tick, rel_tol=1e-9):
            raise ParameterError(
                "model",
                f"was learned at a tick of ${tick:g} a lot; this market's tick is "
                f"${market.tick_size:g}: run it at the tape's (tick_size = {tick:g})",
            )
        self.sampler = sampler(self.model, owners, rng, market.t)
        open_book(market.book, model, market.initial_price, owners)
        self.sampler.fill(market.book)

    def program(self) -> Program:
        return Program(Orders.empty(), Rule.LEARNED, sampler=self.sampler)

    def orders(self, market: Market, t0: float, t1: float, rng: np.random.Generator) -> Orders:
        raise TypeError(
            "a learned flow reacts to the book event by event, so it runs only in the compiled "
            "flow: every other population must have a program (the built-in ones all do)"
        )


def sampler(
    model: EventModel | NeuralModel, owners: range, rng: np.random.Generator, t0: float
) -> Sampler:
    """The compiled sampler of ``model`` for a population of ``owners`` (bid, ask), its first
    candidate drawn from ``t0`` seconds."""
    kind = NeuralSampler if isinstance(model, NeuralModel) else EventSampler
    return kind(model, owners[0], owners[1], rng, t0)


def open_book(book: OrderBook, model: EventModel, mid: float, owners: range) -> None:
    """Place ``model``'s opening book around ``mid`` (ticks): its levels' offsets and lots,
    asks above the mid and bids below it."""
    for ask_offset, ask_lots, bid_offset, bid_lots in model.book.tolist():
        if ask_lots > 0:
            book.limit(-1, int(math.ceil(mid + max(ask_offset, 0.5))), int(ask_lots), owners[1])
        if bid_lots > 0:
            book.limit(1, int(math.floor(mid + min(bid_offset, -0.5))), int(bid_lots), owners[0])
