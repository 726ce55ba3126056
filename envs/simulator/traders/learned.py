"""Order flow learned from a tape as a population of the market: `LearnedFlow`, whose events
are drawn one at a time (`learned_flow.sampler`) from a `learned_flow.model.EventModel` or
its neural variant, reacting to the book as it is (the seats' orders included)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tradearena.envs.data.load import TapeIdentity
from tradearena.envs.data.tapes import tick_dollars
from tradearena.envs.errors import ParameterError, not_one_of
from tradearena.envs.simulator.learned_flow import neural, parameters
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
    both.

    ``reaction``: how the flow answers the seats. "causal" (the default): its rates and the
    prices it quotes from read its own book, so that a seat's resting quote does not move
    them (a rate estimated from a tape is what goes with a state there, not a response to
    it), while what the seats trade with it excites it as the tape's market orders excite
    the tape's flow and leaves the book it then reads; "book": its rates read the whole
    book, the seats' quotes included, and it hears no trade of theirs."""

    n_owners = 2
    REACTIONS = ("causal", "book")
    """The ways a learned flow answers the seats (see the class docstring)."""
    file_parameters = ("model",)

    @classmethod
    def file_parts(cls, parameter: str, path: Path) -> list[Path]:
        """A parameter file (JSON) and the files it names beside it
        (`learned_flow.parameters.parts`), else `ParameterError` naming the file."""
        try:
            return parameters.parts(path)
        except LearnedFlowError as error:
            raise ParameterError(parameter, str(error)) from None

    def __init__(
        self, model: EventModel | NeuralModel | str | Path, reaction: str = "causal"
    ) -> None:
        if reaction not in self.REACTIONS:
            raise ParameterError("reaction", not_one_of(reaction, self.REACTIONS))
        self.reaction = reaction
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

    @property
    def event_model(self) -> EventModel:
        """The `EventModel` of its flow: ``model``, or a neural model's base."""
        return self.model.base if isinstance(self.model, NeuralModel) else self.model

    @property
    def learned_window(self) -> tuple[float, float, tuple[TapeIdentity, ...]] | None:
        """(first, last, tapes): the hours its model was learned from, seconds after midnight,
        of the days ``tapes``, as ``tradearena learn`` wrote them in its ``meta`` (no tapes:
        not said); None when the model names no hours."""
        meta = self.event_model.meta
        if "window" not in meta:
            return None
        first, last = meta["window"]
        return float(first), float(last), tuple(map(TapeIdentity.read, meta.get("tapes", ())))

    def reset(self, market: Market, owners: range, rng: np.random.Generator) -> None:
        super().reset(market, owners, rng)
        model = self.event_model
        tick = tick_dollars(model.tick_size, model.lot_size)
        if not math.isclose(market.tick_size, tick, rel_tol=1e-9):
            raise ParameterError(
                "model",
                f"was learned at a tick of ${tick:g} a lot; this market's tick is "
                f"${market.tick_size:g}: run it at the tape's (tick_size = {tick:g})",
            )
        self.sampler = sampler(self.model, owners, rng, market.t, self.reaction == "causal")
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
    model: EventModel | NeuralModel,
    owners: range,
    rng: np.random.Generator,
    t0: float,
    causal: bool = True,
) -> Sampler:
    """The compiled sampler of ``model`` for a population of ``owners`` (bid, ask), its first
    candidate drawn from ``t0`` seconds; ``causal``: see `LearnedFlow`'s ``reaction``."""
    kind = NeuralSampler if isinstance(model, NeuralModel) else EventSampler
    return kind(model, owners[0], owners[1], rng, t0, causal)


def open_book(book: OrderBook, model: EventModel, mid: float, owners: range) -> None:
    """Place ``model``'s opening book around ``mid`` (ticks): its levels' offsets and lots,
    asks above the mid and bids below it."""
    for ask_offset, ask_lots, bid_offset, bid_lots in model.book.tolist():
        if ask_lots > 0:
            book.limit(-1, int(math.ceil(mid + max(ask_offset, 0.5))), int(ask_lots), owners[1])
        if bid_lots > 0:
            book.limit(1, int(math.floor(mid + min(bid_offset, -0.5))), int(bid_lots), owners[0])
