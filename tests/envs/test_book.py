"""Tests for envs.simulator.book: hand-computed unit cases, property tests against a FIFO model,
doctest."""

import doctest
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference_book import OrderBook as ReferenceBook  # tests/envs/reference_book.py

import tradearena.envs.simulator.book
from tradearena.envs.data.decimals import MAX_LOTS
from tradearena.envs.simulator.book import MAX_QTY, Fill, OrderBook, Side
from tradearena.envs.simulator.orders import Kind, Orders

BUY, SELL = Side.BUY, Side.SELL


# ------------------------------------------------------------------------------ unit tests
def test_resting_limit_and_queries():
    """Non-crossing limits rest; every query reports them exactly."""
    book = OrderBook()
    assert book.best_bid() is None and book.best_ask() is None and book.mid() is None
    assert book.limit(BUY, 100, 10, owner=1) == (1, [])
    assert book.best_bid() == (100, 10)
    assert book.best_ask() is None
    assert book.mid() is None
    assert book.limit(SELL, 103, 5, owner=2) == (2, [])
    assert book.limit(BUY, 99, 7, owner=3) == (3, [])
    assert book.limit(BUY, 100, 4, owner=4) == (4, [])
    assert book.limit(SELL, 105, 2, owner=5) == (5, [])

    assert book.best_bid() == (100, 14)
    assert book.best_ask() == (103, 5)
    assert book.mid() == 101.5
    assert book.depth() == ([(100, 14), (99, 7)], [(103, 5), (105, 2)])
    assert book.depth(1) == ([(100, 14)], [(103, 5)])
    assert book.volume_at(BUY, 100) == 14
    assert book.volume_at(BUY, 99) == 7
    assert book.volume_at(SELL, 100) == 0
    assert book.volume_at(BUY, 98) == 0
    assert book.resting(1) == 10
    assert book.resting(3) == 7
    assert book.resting(99) == 0
    assert book.order(1) == (1, 100, 10, 1)
    assert book.order(2) == (-1, 103, 5, 2)
    assert book.order(99) is None
    assert book.orders_at(BUY, 100) == [(1, 10, 1), (4, 4, 4)]
    assert book.orders_at(SELL, 103) == [(2, 5, 2)]
    assert book.orders_at(SELL, 104) == []
    assert len(book) == 5


def test_marketable_buy_walks_two_levels_and_rests_remainder():
    """A buy limit at 102 takes 101 then 102 (FIFO) at the makers' prices, and rests 3."""
    book = OrderBook()
    book.limit(SELL, 101, 5, owner=1)  # oid 1
    book.limit(SELL, 102, 3, owner=2)  # oid 2
    book.limit(SELL, 102, 4, owner=3)  # oid 3
    book.limit(SELL, 104, 10, owner=4)  # oid 4
    oid, fills = book.limit(BUY, 102, 15, owner=9)
    assert oid == 5
    assert fills == [
        Fill(price=101, qty=5, maker_order=1, maker_owner=1, taker_owner=9, taker_side=1),
        Fill(price=102, qty=3, maker_order=2, maker_owner=2, taker_owner=9, taker_side=1),
        Fill(price=102, qty=4, maker_order=3, maker_owner=3, taker_owner=9, taker_side=1),
    ]
    assert [f.price for f in fills] == [101, 102, 102]  # makers' prices, not the limit
    assert book.best_bid() == (102, 3)
    assert book.best_ask() == (104, 10)
    assert book.resting(5) == 3
    assert book.order(5) == (1, 102, 3, 9)
    assert [book.resting(i) for i in (1, 2, 3, 4)] == [0, 0, 0, 10]
    assert book.depth() == ([(102, 3)], [(104, 10)])
    assert len(book) == 2


def test_marketable_sell_walks_two_levels_and_rests_remainder():
    """The mirror case: a sell limit at 99 takes 100 then 99, partially fills, and rests."""
    book = OrderBook()
    book.limit(BUY, 100, 2, owner=1)  # oid 1
    book.limit(BUY, 99, 6, owner=2)  # oid 2
    book.limit(BUY, 98, 5, owner=3)  # oid 3
    oid, fills = book.limit(SELL, 99, 10, owner=8)
    assert oid == 4
    assert fills == [Fill(100, 2, 1, 1, 8, -1), Fill(99, 6, 2, 2, 8, -1)]
    assert book.depth() == ([(98, 5)], [(99, 2)])
    assert book.order(4) == (-1, 99, 2, 8)

    oid, fills = book.limit(SELL, 98, 3, owner=7)  # partially fills oid 3, nothing rests
    assert oid == 5
    assert fills == [Fill(98, 3, 3, 3, 7, -1)]
    assert book.resting(5) == 0 and book.order(5) is None
    assert book.best_bid() == (98, 2)


def test_market_order_against_empty_side():
    """A market order with nothing opposite returns [] and leaves the book alone."""
    book = OrderBook()
    assert book.market(BUY, 10, owner=1) == []
    assert book.market(SELL, 10, owner=1) == []
    book.limit(BUY, 100, 5, owner=2)
    assert book.market(BUY, 10, owner=3) == []  # only bids: a buy finds nothing
    assert book.depth() == ([(100, 5)], [])
    assert len(book) == 1


def test_market_order_larger_than_side_fills_what_exists():
    """A market buy of 20 against 8 shares fills all 8 best price first; nothing rests."""
    book = OrderBook()
    book.limit(SELL, 101, 3, owner=2)  # oid 1
    book.limit(SELL, 100, 5, owner=1)  # oid 2
    fills = book.market(BUY, 20, owner=7)
    assert fills == [Fill(100, 5, 2, 1, 7, 1), Fill(101, 3, 1, 2, 7, 1)]
    assert 20 - sum(f.qty for f in fills) == 12
    assert book.best_ask() is None and book.best_bid() is None
    assert len(book) == 0
    assert book.depth() == ([], [])


def test_partial_cancel_keeps_queue_priority():
    """After a partial cancel the order is still first in its queue and fills first."""
    book = OrderBook()
    book.limit(SELL, 100, 10, owner=1)  # oid 1
    book.limit(SELL, 100, 10, owner=2)  # oid 2
    assert book.cancel(1, 4) == 4
    assert book.resting(1) == 6
    assert book.volume_at(SELL, 100) == 16
    assert book.orders_at(SELL, 100) == [(1, 6, 1), (2, 10, 2)]
    fills = book.market(BUY, 8, owner=5)
    assert fills == [Fill(100, 6, 1, 1, 5, 1), Fill(100, 2, 2, 2, 5, 1)]
    assert book.orders_at(SELL, 100) == [(2, 8, 2)]
    assert book.cancel(2, 100) == 8  # more than remains: cancels what remains
    assert book.best_ask() is None and len(book) == 0


def test_cancel_unknown_filled_or_cancelled_returns_zero():
    """Cancels of ids that do not rest cancel nothing; a zero-share cancel changes nothing."""
    book = OrderBook()
    assert book.cancel(999) == 0
    book.limit(SELL, 100, 5, owner=1)  # oid 1
    book.limit(BUY, 90, 5, owner=1)  # oid 2
    book.market(BUY, 5)  # fills oid 1
    assert book.cancel(1) == 0
    assert book.cancel(2, 0) == 0
    assert book.cancel(2, -3) == 0
    assert book.resting(2) == 5
    assert book.cancel(2) == 5
    assert book.cancel(2) == 0
    assert book.best_bid() is None and len(book) == 0


def test_cancel_whole_order_in_middle_of_queue():
    """Cancelling a middle order (lazy deletion) does not disturb the others' order or fills."""
    book = OrderBook()
    for owner in (1, 2, 3):
        book.limit(BUY, 100, 4, owner=owner)  # oids 1, 2, 3
    assert book.cancel(2) == 4
    assert book.orders_at(BUY, 100) == [(1, 4, 1), (3, 4, 3)]
    assert book.volume_at(BUY, 100) == 8
    assert book.market(SELL, 6, owner=9) == [Fill(100, 4, 1, 1, 9, -1), Fill(100, 2, 3, 3, 9, -1)]
    assert book.best_bid() == (100, 2)


def test_immediate_or_cancel_never_rests():
    """IOC trades up to its limit price and drops the rest."""
    book = OrderBook()
    book.limit(SELL, 101, 5, owner=1)  # oid 1
    book.limit(SELL, 103, 5, owner=2)  # oid 2
    assert book.immediate(BUY, 100, 8, owner=3) == []  # does not cross
    assert book.best_bid() is None and len(book) == 2
    assert book.immediate(BUY, 102, 8, owner=3) == [Fill(101, 5, 1, 1, 3, 1)]
    assert book.best_bid() is None
    assert book.depth() == ([], [(103, 5)])
    assert len(book) == 1
    book.limit(BUY, 99, 4, owner=4)  # oid 3
    assert book.immediate(SELL, 99, 10, owner=5) == [Fill(99, 4, 3, 4, 5, -1)]
    assert book.depth() == ([], [(103, 5)])


def test_reduce_newest_first_and_owner_filter():
    """reduce removes shares from the back of the queue and only from the given owner."""
    book = OrderBook()
    for owner in (1, 2, 1, 2):
        book.limit(BUY, 100, 5, owner=owner)  # oids 1..4
    assert book.reduce(BUY, 100, 7) == 7  # all of oid 4, then 2 of oid 3
    assert book.orders_at(BUY, 100) == [(1, 5, 1), (2, 5, 2), (3, 3, 1)]
    assert book.volume_at(BUY, 100) == 13
    assert book.reduce(BUY, 100, 6, owner=2) == 5  # owner 2 has only oid 2 left
    assert book.orders_at(BUY, 100) == [(1, 5, 1), (3, 3, 1)]
    assert book.reduce(BUY, 100, 4, owner=3) == 0
    assert book.reduce(BUY, 101, 5) == 0  # no such level
    assert book.reduce(SELL, 100, 5) == 0  # wrong side
    assert book.reduce(BUY, 100, 0) == 0
    assert book.volume_at(BUY, 100) == 8
    assert book.reduce(BUY, 100, 100) == 8
    assert book.best_bid() is None and len(book) == 0


def test_quote_keeps_queue_priority_and_moves_to_the_back_when_repriced():
    """quote: the owner's order at the quoted price keeps its place (and remaining size); a
    new price cancels it and queues behind; other owners and the other side are untouched."""
    book = OrderBook()
    assert book.quote(BUY, 100, 50, owner=3) == (1, 0, [])  # oid 1
    book.limit(BUY, 100, 20, owner=4)  # oid 2, behind it
    book.limit(SELL, 103, 10, owner=3)  # oid 3: the other side
    assert book.quote(BUY, 100, 70, owner=3) == (0, 0, [])  # same price: nothing changes
    assert book.orders_at(BUY, 100) == [(1, 50, 3), (2, 20, 4)]
    book.market(SELL, 30, owner=9)  # fills 30 of oid 1
    assert book.quote(BUY, 100, 50, owner=3) == (0, 0, [])  # still first, 20 left
    assert book.orders_at(BUY, 100) == [(1, 20, 3), (2, 20, 4)]
    assert book.quote(BUY, 99, 50, owner=3) == (1, 1, [])  # repriced: cancel, then oid 4
    assert book.owned(3) == [(3, SELL, 103, 10), (4, BUY, 99, 50)]
    book.limit(BUY, 99, 5, owner=5)
    assert book.quote(BUY, 100, 50, owner=3)[:2] == (1, 1)  # back at 100, behind owner 4
    assert book.orders_at(BUY, 100) == [(2, 20, 4), (6, 50, 3)]
    assert book.quote(BUY, 100, 0, owner=3) == (0, 1, [])  # qty 0: cancel that side
    assert book.owned(3) == [(3, SELL, 103, 10)] and book.orders_at(BUY, 99) == [(5, 5, 5)]


def test_quote_that_crosses_trades_as_a_limit_order():
    book = OrderBook()
    book.limit(SELL, 101, 10, owner=1)
    placed, cancelled, fills = book.quote(BUY, 101, 15, owner=2)
    assert (placed, cancelled) == (1, 0)
    assert [(f.price, f.qty, f.maker_owner) for f in fills] == [(101, 10, 1)]
    assert book.owned(2) == [(2, BUY, 101, 5)] and book.account(2)[:2] == (10, -1010)
    with pytest.raises(ValueError):
        book.quote(BUY, 100, -1, owner=2)
    with pytest.raises(ValueError):
        book.quote(0, 100, 1, owner=2)


def test_quote_rows_in_a_batch():
    """A QUOTE row of `run` is `quote`: counted as an order placed and cancels."""
    book = OrderBook()
    rows = Orders.build(np.array([0.0, 1.0]), Kind.QUOTE, 1, np.array([100, 101]), 5, 7)
    fills, orders, cancels = book.run(*rows, {})
    assert (fills, orders, cancels) == ([], 2, 1)
    assert book.owned(7) == [(2, BUY, 101, 5)]


@pytest.mark.parametrize("qty", [0, -1, MAX_QTY + 1])
def test_non_positive_qty_raises(qty):
    """limit, market and immediate reject qty <= 0 (and beyond MAX_QTY = 2**53 - 1, the largest
    a book holds) and leave the book unchanged."""
    book = OrderBook()
    book.limit(SELL, 100, 5)
    with pytest.raises(ValueError):
        book.limit(BUY, 100, qty)
    with pytest.raises(ValueError):
        book.market(BUY, qty)
    with pytest.raises(ValueError):
        book.immediate(BUY, 100, qty)
    assert book.depth() == ([], [(100, 5)])
    assert book.limit(BUY, 99, 1) == (2, [])  # the rejected order consumed no id


@pytest.mark.parametrize("owner", [2**20, 2**31, -(2**31)])
def test_owners_out_of_range_are_refused(owner):
    """Owners below 2**20 (accounts are kept by owner); a taker's owner is checked too."""
    book = OrderBook()
    with pytest.raises(ValueError, match="owners must be in"):
        book.limit(BUY, 100, 5, owner=owner)
    book.limit(SELL, 100, 5, owner=1)
    with pytest.raises(ValueError, match="owners must be in"):
        book.market(BUY, 5, owner=owner)
    assert book.depth() == ([], [(100, 5)]) and book.account(1) == (0, 0, 0, 0)


def test_module_doctest():
    """The example in the module's docstrings runs as written."""
    result = doctest.testmod(tradearena.envs.simulator.book)
    assert result.attempted > 0
    assert result.failed == 0


# -------------------------------------------------------------------------- property tests
class RefBook:
    """A naive reference: per (side, price) a FIFO list of [order id, remaining, owner]."""

    def __init__(self):
        self.levels = {1: {}, -1: {}}
        self.live = {}  # order id -> (side, price, entry) of resting orders
        self.next_id = 1

    def match(self, side, limit, qty, owner):
        """Trade against the opposite side best price first, FIFO within a price."""
        fills = []
        opposite = self.levels[-side]
        while qty and opposite:
            price = min(opposite) if side == 1 else max(opposite)
            if limit is not None and (price > limit if side == 1 else price < limit):
                break
            queue = opposite[price]
            while qty and queue:
                entry = queue[0]
                size = min(qty, entry[1])
                fills.append(Fill(price, size, entry[0], entry[2], owner, side))
                entry[1] -= size
                qty -= size
                if not entry[1]:
                    del self.live[queue.pop(0)[0]]
            if not queue:
                del opposite[price]
        return fills, qty

    def limit(self, side, price, qty, owner):
        oid = self.next_id
        self.next_id += 1
        fills, left = self.match(side, price, qty, owner)
        if left:
            entry = [oid, left, owner]
            self.levels[side].setdefault(price, []).append(entry)
            self.live[oid] = (side, price, entry)
        return oid, fills

    def cancel(self, oid, qty):
        if oid not in self.live:
            return 0
        side, price, entry = self.live[oid]
        if qty is None or qty >= entry[1]:
            qty = entry[1]
        elif qty <= 0:
            return 0
        entry[1] -= qty
        if not entry[1]:
            del self.live[oid]
            queue = self.levels[side][price]
            queue.remove(entry)
            if not queue:
                del self.levels[side][price]
        return qty

    def reduce(self, side, price, qty, owner):
        queue = self.levels[side].get(price, [])
        done = 0
        for entry in reversed(list(queue)):
            if done >= qty:
                break
            if owner is None or entry[2] == owner:
                done += self.cancel(entry[0], qty - done)
        return done

    def resting(self, oid):
        return self.live[oid][2][1] if oid in self.live else 0

    def depth(self):
        bids = sorted(self.levels[1].items(), reverse=True)
        asks = sorted(self.levels[-1].items())
        return (
            [(p, sum(e[1] for e in q)) for p, q in bids],
            [(p, sum(e[1] for e in q)) for p, q in asks],
        )


prices = st.integers(95, 105)
quantities = st.integers(1, 50)
owners = st.integers(0, 3)
sides = st.sampled_from([BUY, SELL])
# cancel and reduce name an order by how far back it was submitted: back = 1 is the newest
# order id, back = 0 the next (never used) id, and ids below 1 are unknown too
backs = st.integers(0, 12)

operation_kinds = {
    "limit": st.tuples(st.just("limit"), sides, prices, quantities, owners),
    "market": st.tuples(st.just("market"), sides, quantities, owners),
    "immediate": st.tuples(st.just("immediate"), sides, prices, quantities, owners),
    "cancel": st.tuples(st.just("cancel"), backs, st.none() | st.integers(-1, 30)),
    "reduce": st.tuples(
        st.just("reduce"), backs, sides, prices, st.integers(-1, 60), st.none() | owners
    ),
}
# weighted so that the book holds several orders per level often enough to test priority
weighted_kinds = ["limit"] * 4 + ["cancel"] * 2 + ["reduce"] * 2 + ["market", "immediate"]
operations = st.sampled_from(weighted_kinds).flatmap(operation_kinds.__getitem__)


def check_fills(fills, side, owner, limit, submitted):
    """Fills are best price first, within the limit, at the makers' prices, with right owners."""
    for f in fills:
        maker_side, maker_price, maker_owner = submitted[f.maker_order]
        assert f.qty > 0
        assert f.price == maker_price
        assert maker_side == -side
        assert f.maker_owner == maker_owner
        assert f.taker_owner == owner
        assert f.taker_side == side
        if limit is not None:
            assert f.price <= limit if side == BUY else f.price >= limit
    order = [f.price for f in fills]
    assert order == sorted(order, reverse=side == SELL)


def check_priority(book, fills, submitted):
    """A maker filled at (side, price) has no earlier-arrived order still resting there."""
    for f in fills:
        maker_side = submitted[f.maker_order][0]
        earlier = [oid for oid, _, _ in book.orders_at(maker_side, f.price) if oid < f.maker_order]
        assert earlier == []


def check_book(book, ref, accounts):
    """The book is uncrossed, matches the reference and conserves every limit order's shares."""
    bid, ask = book.best_bid(), book.best_ask()
    if bid is not None and ask is not None:
        assert bid[0] < ask[0]
        assert book.mid() == (bid[0] + ask[0]) / 2
    else:
        assert book.mid() is None
    bids, asks = book.depth(levels=1000)
    assert (bids, asks) == ref.depth()
    assert bid == (bids[0] if bids else None)
    assert ask == (asks[0] if asks else None)

    total_resting = 0
    for oid, acc in accounts.items():
        resting = book.resting(oid)
        assert resting == ref.resting(oid)
        total_resting += resting
        assert acc["submitted"] == resting + acc["taker"] + acc["maker"] + acc["cancelled"]
    assert sum(v for _, v in bids) + sum(v for _, v in asks) == total_resting
    assert len(book) == sum(1 for oid in accounts if book.resting(oid))

    for side, levels in ((BUY, bids), (SELL, asks)):
        for price, volume in levels:
            queue = book.orders_at(side, price)
            assert queue, "a listed level has live orders"
            assert [oid for oid, _, _ in queue] == sorted(oid for oid, _, _ in queue)
            assert sum(q for _, q, _ in queue) == volume == book.volume_at(side, price)
            for oid, qty, owner in queue:
                assert book.order(oid) == (side, price, qty, owner)


@settings(max_examples=200, deadline=None)
@given(st.lists(operations, min_size=15, max_size=50))
def test_random_operations_keep_invariants(ops):
    """After every operation the book agrees with the FIFO model and all invariants hold."""
    book, ref = OrderBook(), RefBook()
    submitted = {}  # order id -> (side, price, owner) of every limit order
    accounts = {}  # order id -> shares submitted / traded as taker / as maker / cancelled

    for op in ops:
        kind = op[0]
        before = {oid: book.resting(oid) for oid in accounts}
        if kind == "limit":
            _, side, price, qty, owner = op
            oid, fills = book.limit(side, price, qty, owner)
            assert (oid, fills) == ref.limit(side, price, qty, owner)
            submitted[oid] = (side, price, owner)
            taken = sum(f.qty for f in fills)
            accounts[oid] = {"submitted": qty, "taker": taken, "maker": 0, "cancelled": 0}
            assert book.resting(oid) == qty - taken
            check_fills(fills, side, owner, price, submitted)
        elif kind in ("market", "immediate"):
            if kind == "market":
                _, side, qty, owner = op
                limit = None
                fills = book.market(side, qty, owner)
            else:
                _, side, limit, qty, owner = op
                fills = book.immediate(side, limit, qty, owner)
            assert fills == ref.match(side, limit, qty, owner)[0]
            assert sum(f.qty for f in fills) <= qty
            check_fills(fills, side, owner, limit, submitted)
        elif kind == "cancel":
            _, back, qty = op
            oid = len(submitted) + 1 - back
            done = book.cancel(oid, qty)
            assert done == ref.cancel(oid, qty)
            assert done == before.get(oid, 0) - book.resting(oid)
            if oid in accounts:
                accounts[oid]["cancelled"] += done
            fills = []
        else:
            # at the level of the order named by back if there is one, else at (side, price)
            _, back, side, price, qty, owner = op
            side, price = submitted.get(len(submitted) + 1 - back, (side, price))[:2]
            done = book.reduce(side, price, qty, owner)
            assert done == ref.reduce(side, price, qty, owner)
            removed = {oid: before[oid] - book.resting(oid) for oid in accounts}
            assert sum(removed.values()) == done
            for oid, shares in removed.items():
                if shares:
                    assert submitted[oid][:2] == (side, price)
                    assert owner is None or submitted[oid][2] == owner
                accounts[oid]["cancelled"] += shares
            fills = []

        for f in fills:
            accounts[f.maker_order]["maker"] += f.qty
            assert before[f.maker_order] - book.resting(f.maker_order) >= f.qty
        check_priority(book, fills, submitted)
        check_book(book, ref, accounts)


# ------------------------------------------------------------ compiled book == reference book
@st.composite
def operations(draw):
    """A random operation sequence: (op, side, price, qty, owner, pick) tuples."""
    n = draw(st.integers(10, 60))
    return [
        (
            draw(
                st.sampled_from(
                    ["limit", "limit", "market", "immediate", "cancel", "reduce", "quote"]
                    + ["cancel_owner"]
                )
            ),
            draw(st.sampled_from([-1, 1])),
            draw(st.integers(95, 105)),
            draw(st.integers(1, 50)),
            draw(st.integers(0, 3)),
            draw(st.integers(0, 1_000)),
        )
        for _ in range(n)
    ]


@settings(max_examples=200, deadline=None)
@given(operations())
def test_compiled_book_agrees_with_the_reference_book(ops):
    """envs.simulator.book (C++) and tests/envs/reference_book.py (plain Python) give the same ids,
    fills, cancelled quantities, depth and every owner's resting orders after every
    operation."""
    fast, slow = OrderBook(), ReferenceBook()
    ids: list[int] = []
    for op, side, price, qty, owner, pick in ops:
        if op == "limit":
            a, b = fast.limit(side, price, qty, owner), slow.limit(side, price, qty, owner)
            assert a[0] == b[0] and list(a[1]) == list(b[1])
            ids.append(a[0])
        elif op == "market":
            assert fast.market(side, qty, owner) == slow.market(side, qty, owner)
        elif op == "immediate":
            assert fast.immediate(side, price, qty, owner) == slow.immediate(
                side, price, qty, owner
            )
        elif op == "cancel" and ids:
            oid = ids[pick % len(ids)]
            part = None if pick % 2 else qty
            assert fast.cancel(oid, part) == slow.cancel(oid, part)
        elif op == "reduce":
            assert fast.reduce(side, price, qty, owner) == slow.reduce(side, price, qty, owner)
        elif op == "quote":
            size = qty * (pick % 2)  # half of them cancel the side
            placed, cancelled, fills = fast.quote(side, price, size, owner)
            assert (placed, cancelled, list(fills)) == slow.quote(side, price, size, owner)
            ids += [oid for oid, *_ in fast.owned(owner) if oid not in ids]
        elif op == "cancel_owner":
            assert fast.cancel_owner(owner) == slow.cancel_owner(owner)
        assert fast.depth(1000) == slow.depth(1000)
        assert len(fast) == len(slow)
        assert all(fast.owned(o) == slow.owned(o) for o in range(4))


@settings(max_examples=200, deadline=None)
@given(operations())
def test_recycling_book_is_the_same_market_with_reused_slots(ops):
    """A book that reuses the slots of gone orders gives the same fills, cancels, queues,
    depth and accounts as one whose ids count up, with ids mapped one to one; a gone order's
    id finds nothing even after its slot holds another order; slots never exceed the most
    orders resting at once, plus one."""
    counting, recycling = OrderBook(), OrderBook(recycle=True)
    ids: list[tuple[int, int]] = []  # (counting id, recycling id) of every limit order
    to_counting: dict[int, int] = {}
    peak = 0

    def same_fills(a, b):
        assert [f._replace(maker_order=to_counting[f.maker_order]) for f in b] == a

    for op, side, price, qty, owner, pick in ops:
        if op == "limit":
            (a, fills_a), (b, fills_b) = (
                book.limit(side, price, qty, owner) for book in (counting, recycling)
            )
            same_fills(fills_a, fills_b)
            ids.append((a, b))
            to_counting[b] = a
        elif op in ("market", "immediate"):
            args = (side, qty, owner) if op == "market" else (side, price, qty, owner)
            same_fills(getattr(counting, op)(*args), getattr(recycling, op)(*args))
        elif op == "cancel" and ids:
            a, b = ids[pick % len(ids)]
            part = None if pick % 2 else qty
            assert counting.cancel(a, part) == recycling.cancel(b, part)
        elif op == "reduce":
            assert counting.reduce(side, price, qty, owner) == recycling.reduce(
                side, price, qty, owner
            )
        elif op == "quote":
            placed_a, cancelled_a, fills_a = counting.quote(side, price, qty * (pick % 2), owner)
            placed_b, cancelled_b, fills_b = recycling.quote(side, price, qty * (pick % 2), owner)
            assert (placed_a, cancelled_a) == (placed_b, cancelled_b)
            same_fills(fills_a, fills_b)
        peak = max(peak, len(recycling))
        assert counting.depth(1000) == recycling.depth(1000)
        for a, b in ids:
            assert counting.resting(a) == recycling.resting(b)
            assert counting.order(a) == recycling.order(b)
            assert (b & 0xFFFFFFFF) <= peak + 1  # one more for an order that trades in full
        for owner in range(4):
            assert counting.account(owner) == recycling.account(owner)
            mine_a, mine_b = counting.owned(owner), recycling.owned(owner)
            assert [rest for _, *rest in mine_a] == [rest for _, *rest in mine_b]
            to_counting.update((b[0], a[0]) for a, b in zip(mine_a, mine_b))  # quotes' ids
    restored = pickle.loads(pickle.dumps(recycling))
    assert restored.depth(1000) == recycling.depth(1000)
    assert all(restored.owned(owner) == recycling.owned(owner) for owner in range(4))
    assert restored.limit(1, 1, 1, owner=9)[0] == recycling.limit(1, 1, 1, owner=9)[0]


def test_a_recording_book_does_not_recycle():
    with pytest.raises(ValueError, match="record and recycle"):
        OrderBook(record=True, recycle=True)


@pytest.mark.parametrize("owner", [3, -5])
def test_an_owners_orders_are_found_for_any_owner_id(owner):
    """Owners below zero (no account) keep their orders as the usual ones do (quote, owned,
    cancel_owner)."""
    book = OrderBook(recycle=True)
    first, _ = book.limit(SELL, 101, 5, owner=owner)
    book.limit(SELL, 102, 5, owner=owner)
    assert book.quote(BUY, 99, 4, owner)[:2] == (1, 0)
    assert [o[1:] for o in book.owned(owner)] == [(SELL, 101, 5), (SELL, 102, 5), (BUY, 99, 4)]
    assert book.quote(SELL, 101, 5, owner)[:2] == (0, 1)  # keeps 101, cancels 102
    assert book.owned(owner)[0][0] == first
    assert book.cancel_owner(owner) == 2 and len(book) == 0 and book.owned(owner) == []


def apply(book: OrderBook, op: tuple, ids: list[int]) -> object:
    """Carry out one operation of `operations` on ``book``; what it returns."""
    kind, side, price, qty, owner, pick = op
    if kind == "limit":
        oid, fills = book.limit(side, price, qty, owner)
        ids.append(oid)
        return oid, list(fills)
    if kind == "cancel":
        return book.cancel(ids[pick % len(ids)], None if pick % 2 else qty) if ids else 0
    if kind == "quote":
        return book.quote(side, price, qty * (pick % 2), owner)
    if kind == "cancel_owner":
        return book.cancel_owner(owner)
    args = (side, qty, owner) if kind == "market" else (side, price, qty, owner)
    return getattr(book, kind)(*args)


@settings(max_examples=150, deadline=None)
@given(operations(), operations(), st.booleans())
def test_a_copy_goes_on_as_the_book_and_alone(before, after, recycle):
    """`copy` is the same book: the same answers to every later operation, the same depth,
    owners' orders and accounts; and an independent one: the original's later operations
    leave the copy as it was."""
    book, ids = OrderBook(recycle=recycle), []
    for op in before:
        apply(book, op, ids)
    copy, untouched, kept = book.copy(), book.copy(), pickle.loads(pickle.dumps(book))
    copy_ids = list(ids)
    for op in after:
        assert apply(copy, op, copy_ids) == apply(book, op, ids)
        assert copy.depth(1000) == book.depth(1000) and len(copy) == len(book)
    assert all(copy.owned(o) == book.owned(o) for o in range(4))
    assert [copy.account(o) for o in range(4)] == [book.account(o) for o in range(4)]
    assert untouched.depth(1000) == kept.depth(1000) and len(untouched) == len(kept)
    assert all(untouched.owned(o) == kept.owned(o) for o in range(4))
    assert [untouched.account(o) for o in range(4)] == [kept.account(o) for o in range(4)]


def test_sizes_are_64_bit():
    """An order of more than 2**31 - 1 shares (125.30623107 coins in lots of 1E-8) rests,
    trades and cancels to the share; the book's most is the readers' most (MAX_LOTS)."""
    assert MAX_QTY == MAX_LOTS == 2**53 - 1
    book = OrderBook()
    oid, _ = book.limit(SELL, 100, 12_530_623_107, owner=1)
    book.limit(SELL, 100, MAX_QTY, owner=2)
    assert book.depth() == ([], [(100, 12_530_623_107 + MAX_QTY)])
    fills = book.market(BUY, 12_530_623_100, owner=3)
    assert [(f.qty, f.maker_owner) for f in fills] == [(12_530_623_100, 1)]
    assert book.account(3) == (12_530_623_100, -1_253_062_310_000, 12_530_623_100, 1)
    assert book.cancel(oid, 3) == 3 and book.resting(oid) == 4
    assert book.orders_at(SELL, 100) == [(oid, 4, 1), (2, MAX_QTY, 2)]
