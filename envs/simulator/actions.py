"""Discrete action sets: what an action index asks the market to do for a seat."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from tradearena.envs.errors import not_one_of
from tradearena.envs.simulator.flow import make_orders
from tradearena.envs.simulator.orders import Kind

if TYPE_CHECKING:
    from tradearena.envs.simulator.market import Market
    from tradearena.envs.simulator.orders import SeatOrder

__all__ = [
    "ACTION_SETS",
    "ActionSet",
    "MakeActions",
    "QuoteActions",
    "TradeActions",
    "make_actions",
]


class ActionSet:
    """A discrete action set: ``names[i]`` describes action i; `orders` turns it into the
    seat's orders given the market's current state. In every set action 1 (``HOLD``) rests
    nothing and trades nothing, so that one "hold" baseline fits them all. A set whose orders
    never depend on the market also lists them by action in ``fixed_orders`` (else None),
    which batched sessions read instead of calling `orders`; batched sessions of the others
    call `orders_batch`."""

    names: tuple[str, ...] = ()
    fixed_orders: tuple[list[SeatOrder], ...] | None = None

    @property
    def n(self) -> int:
        return len(self.names)

    def orders(self, action: int, market: Market, seat: int) -> list[SeatOrder]:
        raise NotImplementedError

    def orders_batch(
        self, actions: np.ndarray, markets: Sequence[Market], seat: int
    ) -> list[list[SeatOrder]]:
        """`orders` of ``seat`` in each of ``markets`` for its action in ``actions`` (N,):
        one call per market unless a subclass does them at once."""
        return [self.orders(a, m, seat) for a, m in zip(actions.tolist(), markets)]


class TradeActions(ActionSet):
    """Market orders: 0 sell ``size`` shares, 1 hold, 2 buy ``size`` shares."""

    def __init__(self, size: int = 100) -> None:
        if size <= 0:
            raise ValueError(f"trade size must be a positive number of shares, got {size}")
        self.size = size
        self.names = (f"sell {size}", "hold", f"buy {size}")
        self.fixed_orders = tuple(self.orders(action, None, 0) for action in range(3))

    def orders(self, action: int, market: Market, seat: int) -> list[SeatOrder]:
        if action == 1:
            return []
        return [(Kind.MARKET, 1 if action == 2 else -1, 0, self.size)]


class QuoteActions(ActionSet):
    """Quotes of ``size`` shares at the best prices, each replacing the seat's resting
    orders: 0 keep quotes, 1 cancel quotes, 2 bid, 3 ask, 4 bid and ask, 5 sell ``size`` at
    market, 6 buy ``size`` at market. A quote joins the best level of its side (or one tick
    from the mid when that side is empty)."""

    names = ("keep", "cancel", "bid", "ask", "bid+ask", "sell", "buy")

    def __init__(self, size: int = 100) -> None:
        if size <= 0:
            raise ValueError(f"quote size must be a positive number of shares, got {size}")
        self.size = size

    def orders(self, action: int, market: Market, seat: int) -> list[SeatOrder]:
        if action == 0:
            return []
        if action == 1:
            return [(Kind.CANCEL_ALL, 0, 0, 0)]
        if action >= 5:
            return [
                (Kind.CANCEL_ALL, 0, 0, 0),
                (Kind.MARKET, 1 if action == 6 else -1, 0, self.size),
            ]
        bid, ask = market.book.best_bid(), market.book.best_ask()
        mid = market.last_mid
        bid_price = bid[0] if bid else int(mid) - 1
        ask_price = ask[0] if ask else int(mid) + 1
        quotes: list[SeatOrder] = [(Kind.CANCEL_ALL, 0, 0, 0)]
        if action in (2, 4):
            quotes.append((Kind.LIMIT, 1, bid_price, self.size))
        if action in (3, 4):
            quotes.append((Kind.LIMIT, -1, ask_price, self.size))
        return quotes


class MakeActions(ActionSet):
    """A market maker's resting quotes of ``size`` shares.

    0 ``reduce``: cancel the quotes and trade ``size`` shares at market towards a flat
    inventory (nothing when flat); 1 ``no quotes``: cancel them; 2 .. 16: a bid and an ask
    (one of them may be off), each at a level ``0``, ``1`` or ``2`` ticks behind the best
    price the *other* traders show on its side (0 joins the touch; unequal levels skew the
    quotes). With that side empty, level 0 is one tick from the mid. A quote never crosses
    the others' opposite best. A quote whose price is unchanged keeps its place in the queue
    (`Kind.QUOTE`): only a repriced quote goes to the back.
    """

    LEVELS = (0, 1, 2)

    def __init__(self, size: int = 100) -> None:
        if size <= 0:
            raise ValueError(f"quote size must be a positive number of shares, got {size}")
        self.size = size
        sides = (None, *self.LEVELS)
        pairs = [(b, a) for b in sides for a in sides if (b, a) != (None, None)]
        self.quotes = [(None, None)] * 2 + pairs  # 0 reduce, 1 no quotes: neither side quotes
        self.names = ("reduce", "no quotes", *(_quote_name(b, a) for b, a in self.quotes[2:]))
        off = -1  # a side that does not quote, in the compiled table
        self.levels = np.array(
            [[off if level is None else level for level in pair] for pair in self.quotes],
            dtype=np.int64,
        )

    def orders(self, action: int, market: Market, seat: int) -> list[SeatOrder]:
        """The seat's orders for ``action`` (0: cancel and flatten up to ``size`` shares; 1: no
        quotes; else a bid and an ask ``level`` ticks behind the others' best, kept off the
        opposite side). The reference of the compiled `envs.simulator.flow.make_orders`
        (`orders_batch`); tests/envs/test_tasks.py
        (``test_compiled_quotes_equal_the_action_sets_orders``) holds the two equal."""
        if action == 0:
            inventory = market.account(seat).inventory
            cancel: list[SeatOrder] = [(Kind.CANCEL_ALL, 0, 0, 0)]
            if inventory == 0:
                return cancel
            return cancel + [
                (Kind.MARKET, -1 if inventory > 0 else 1, 0, min(self.size, abs(inventory)))
            ]
        bid_level, ask_level = self.quotes[action]
        book = market.book
        mine = {side: (price, qty) for _, side, price, qty in book.owned(seat)}
        bids, asks = book.depth(3)
        best_bid, best_ask = _others_best(bids, mine.get(1)), _others_best(asks, mine.get(-1))
        mid = market.last_mid
        top_bid = best_bid if best_bid is not None else math.ceil(mid) - 1
        top_ask = best_ask if best_ask is not None else math.floor(mid) + 1
        orders: list[SeatOrder] = []
        for side, level, top, opposite in (
            (1, bid_level, top_bid, best_ask),
            (-1, ask_level, top_ask, best_bid),
        ):
            if level is None:
                orders.append((Kind.QUOTE, side, 0, 0))
                continue
            price = top - side * level
            if opposite is not None and side * (price - opposite) >= 0:
                price = opposite - side
            orders.append((Kind.QUOTE, side, price, self.size))
        return orders

    def orders_batch(
        self, actions: np.ndarray, markets: Sequence[Market], seat: int
    ) -> list[list[SeatOrder]]:
        """`orders` for many markets in one compiled call (`envs.simulator.flow.make_orders`)."""
        actions = np.ascontiguousarray(actions, dtype=np.int64)
        return make_orders(list(markets), actions, seat, self.levels, self.size)


def _quote_name(bid: int | None, ask: int | None) -> str:
    return f"bid {'off' if bid is None else bid} / ask {'off' if ask is None else ask}"


def _others_best(levels: list[tuple[int, int]], mine: tuple[int, int] | None) -> int | None:
    """The best price of ``levels`` (price, volume), best first, not made by ``mine`` alone."""
    for price, volume in levels:
        if mine is None or price != mine[0] or volume > mine[1]:
            return price
    return None


class ExecuteActions(ActionSet):
    """Child orders of a parent order: acquire ``parent_order`` shares (negative: sell) by the
    close, in lots of ``size``.

    0 ``passive``: one lot resting at the others' best price on the parent's side (a bid
    when buying), kept in its queue while that price holds (`Kind.QUOTE`); 1 ``none``: cancel
    it, trade nothing; 2, 3, 4: cancel it and trade 1, 2 or 3 lots at market. Never more
    than what remains; at the last step whatever remains is traded at market.
    """

    names = ("passive", "none", "1 lot", "2 lots", "3 lots")

    def __init__(self, size: int = 100, parent_order: int = 0) -> None:
        if size <= 0:
            raise ValueError(f"lot size must be a positive number of shares, got {size}")
        if parent_order == 0:
            raise ValueError("the execute action set needs a parent order (shares, not 0)")
        self.size, self.parent_order = size, parent_order
        self.side = 1 if parent_order > 0 else -1

    def orders(self, action: int, market: Market, seat: int) -> list[SeatOrder]:
        remaining = self.side * (self.parent_order - market.account(seat).inventory)
        cancel: list[SeatOrder] = [(Kind.CANCEL_ALL, 0, 0, 0)]
        if remaining <= 0:
            return cancel
        if market.step_index == market.n_steps - 1:
            return cancel + [(Kind.MARKET, self.side, 0, remaining)]
        if action == 1:
            return cancel
        if action >= 2:
            return cancel + [(Kind.MARKET, self.side, 0, min((action - 1) * self.size, remaining))]
        book = market.book
        mine = {side: (price, qty) for _, side, price, qty in book.owned(seat)}
        levels = book.depth(3)[0 if self.side == 1 else 1]
        best = _others_best(levels, mine.get(self.side))
        if best is None:
            best = (
                math.ceil(market.last_mid) - 1
                if self.side == 1
                else math.floor(market.last_mid) + 1
            )
        return [(Kind.QUOTE, self.side, best, min(self.size, remaining))]


def make_actions(name: str, size: int, parent_order: int = 0) -> ActionSet:
    """The action set called ``name`` ("trade", "quote", "make" or "execute") with orders of
    ``size`` shares (and, for "execute", the ``parent_order``)."""
    if name not in ACTION_SETS:
        raise ValueError(f"actions {not_one_of(name, sorted(ACTION_SETS))}")
    if name == "execute":
        return ExecuteActions(size, parent_order)
    return ACTION_SETS[name](size)


ACTION_SETS = {
    "trade": TradeActions,
    "quote": QuoteActions,
    "make": MakeActions,
    "execute": ExecuteActions,
}
"""Action sets by name."""
