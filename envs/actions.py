"""Discrete action sets: what an action index asks the market to do for a seat."""

from __future__ import annotations

from typing import TYPE_CHECKING

from envs.orders import Kind

if TYPE_CHECKING:
    from envs.market import Market
    from envs.orders import SeatOrder

__all__ = ["ActionSet", "QuoteActions", "TradeActions", "make_actions"]


class ActionSet:
    """A discrete action set: ``names[i]`` describes action i; `orders` turns it into the
    seat's orders given the market's current state."""

    names: tuple[str, ...] = ()
    hold: int = 0  # the action that does nothing

    @property
    def n(self) -> int:
        return len(self.names)

    def orders(self, action: int, market: Market, seat: int) -> list[SeatOrder]:
        raise NotImplementedError


class TradeActions(ActionSet):
    """Market orders: 0 sell ``size`` shares, 1 hold, 2 buy ``size`` shares."""

    def __init__(self, size: int = 100) -> None:
        if size <= 0:
            raise ValueError(f"trade size must be a positive number of shares, got {size}")
        self.size = size
        self.names = (f"sell {size}", "hold", f"buy {size}")
        self.hold = 1

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


def make_actions(name: str, size: int) -> ActionSet:
    """The action set called ``name`` ("trade" or "quote") with orders of ``size`` shares."""
    if name not in ACTION_SETS:
        raise ValueError(f"actions must be one of {sorted(ACTION_SETS)}, got {name!r}")
    return ACTION_SETS[name](size)


ACTION_SETS = {"trade": TradeActions, "quote": QuoteActions}
"""Action sets by name."""
