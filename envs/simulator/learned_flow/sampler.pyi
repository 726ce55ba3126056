# The names, parameters and types of sampler.pyx, for type checkers and the API reference;
# the docstrings are the compiled module's (docs/compiled_docstrings.py).
from typing import Any

import numpy as np

from tradearena.envs.simulator.book import OrderBook
from tradearena.envs.simulator.learned_flow.marks import By
from tradearena.envs.simulator.learned_flow.model import EventModel

def baseline_bound(mu: np.ndarray, n_spread: int, n_queue: int) -> float: ...

class MarkTables:
    def layout(self) -> dict[str, tuple[int, int, By]]: ...

class BookActor:
    marks: MarkTables
    """The model's marks, as the flow draws them."""
    depth: int
    """The levels a side of the flow's book is kept at (the model's depth)."""
    bid_owner: int
    """The owner of the flow's bid-side orders."""
    ask_owner: int
    """The owner of the flow's ask-side orders."""
    bid_deepest: int
    """The deepest bid price (ticks) the flow last held: a bid side swept bare is rebuilt
    behind it (0: none yet)."""
    ask_deepest: int
    """The deepest ask price (ticks) the flow last held (0: none yet)."""
    causal: bool
    """Whether the flow reads its own book (its best levels and lots) rather than the whole."""

    def __init__(
        self,
        model: EventModel,
        bid_owner: int,
        ask_owner: int,
        rng: np.random.Generator,
        causal: bool = True,
    ) -> None: ...

class Sampler:
    actor: BookActor
    """What carries the events out on the book."""
    next_time: float
    """The next candidate event's time, seconds."""
    end: float
    """No event at or after this time, seconds."""
    events: int
    """Events taken."""
    candidates: int
    """Candidate events drawn (those thinned away included)."""
    observed: int
    """Others' market orders heard."""

    def fire(self, book: OrderBook) -> tuple[int, int]: ...
    def fill(self, book: OrderBook) -> int: ...
    def rates(self, book: OrderBook, t: float) -> np.ndarray: ...
    def hear(self, book: OrderBook, t: float) -> int: ...

class EventSampler(Sampler):
    def __init__(
        self,
        model: EventModel,
        bid_owner: int,
        ask_owner: int,
        rng: np.random.Generator,
        t0: float,
        causal: bool = True,
    ) -> None: ...

class NeuralSampler(Sampler):
    def __init__(
        self,
        net: Any,
        bid_owner: int,
        ask_owner: int,
        rng: np.random.Generator,
        t0: float,
        causal: bool = True,
    ) -> None: ...
