"""Queue models for a seat's order in a replayed L2 feed: when a hand-built Binance recording
cancels volume at the seat's level without saying whose, each model moves the seat up the
queue by its rule, and the seat's order fills at the trade the model says."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from recordings import MIDNIGHT_NS, at, depth, snapshot, trade, write

from tradearena.envs import OrderBook
from tradearena.envs.data.convert import convert
from tradearena.envs.data.tapes import Tape
from tradearena.envs.simulator.replayer import QUEUE_MODELS, Replayer
from tradearena.envs.simulator.traders import MarketReplay
from tradearena.envs.spec import MarketSpec, SpecError

SEAT, REPLAY = 0, 1
BID = 10_000  # ticks: 100.00 at a tick of 0.01


@pytest.fixture(scope="module")
def tape(tmp_path_factory) -> Tape:
    """30 lots bid at 100.00; the seat joins behind them (after message 1); 10 lots join
    behind the seat; 8 lots leave the level, no one says whose; then one 1-lot trade on the
    bids a second from 10 s on."""
    lines = [
        snapshot(at(1), 1, [("100.00", "30")], [("100.10", "50")]),
        depth(at(2), 2_000, 2, 2, [("100.00", "40")], []),
        depth(at(3), 3_000, 3, 3, [("100.00", "32")], []),
        *(trade(at(10 + k), 10_000 + 1_000 * k, "100.00", "1", True) for k in range(40)),
    ]
    path = write(tmp_path_factory.mktemp("queue") / "feed.txt", lines)
    return convert("binance", [path], tick="0.01", lot="1").tape


def fill_time(tape: Tape, **queue) -> float:
    """Seconds after midnight of the trade that fills the seat's 1-lot bid."""
    replay = MarketReplay(tape, **queue)
    book = OrderBook()
    replay.start(book, REPLAY)
    for i in range(len(tape)):
        fills = replay.handle(book, i)
        if i == 1:
            book.limit(1, BID, 1, SEAT)
        if any(fill.maker_owner == SEAT for fill in fills):
            return float(tape.messages["time"][i])
    raise AssertionError("the seat's order never filled")


def trade_time(k: int) -> float:
    """The time of trade k (0-based)."""
    return (at(10 + k) - MIDNIGHT_NS) / 1e9


@pytest.mark.parametrize(
    ("queue", "ahead"),
    [
        # only trades advance the seat: the 8 lots leave from behind it, 30 stay ahead
        ({"queue": "risk_averse"}, 30),
        # a share 30^2 / (30^2 + 10^2) = 0.9 of the 8 lots leaves from ahead: 7.2 -> 7
        ({"queue": "power"}, 23),
        # with power 1: 30 / 40 of 8 = 6 from ahead
        ({"queue": "power", "queue_power": 1.0}, 24),
        # log(31) / (log(31) + log(11)) = 0.589 of 8 = 4.71 -> 5 from ahead
        ({"queue": "log"}, 25),
        # every lot that leaves leaves from ahead: 30 - 8
        ({"queue": "optimistic"}, 22),
    ],
)
def test_each_model_fills_the_seat_at_the_known_trade(tape: Tape, queue: dict, ahead: int):
    assert fill_time(tape, **queue) == trade_time(ahead)


@pytest.mark.parametrize(
    ("name", "queue"),
    [
        ("risk_averse", [(REPLAY, 30), (SEAT, 1), (REPLAY, 2)]),
        ("power", [(REPLAY, 23), (SEAT, 1), (REPLAY, 9)]),
        ("log", [(REPLAY, 25), (SEAT, 1), (REPLAY, 7)]),
        ("optimistic", [(REPLAY, 22), (SEAT, 1), (REPLAY, 10)]),
    ],
)
def test_the_cancel_is_shared_out_around_the_seat(tape: Tape, name: str, queue: list):
    replay = MarketReplay(tape, queue=name)
    book = OrderBook()
    replay.start(book, REPLAY)
    for i in range(2):
        replay.handle(book, i)
    book.limit(1, BID, 1, SEAT)
    for i in (2, 3):  # 10 lots join, 8 leave
        replay.handle(book, i)
    assert [(owner, qty) for _, qty, owner in book.orders_at(1, BID)] == queue
    assert book.volume_at(1, BID) == 32 + 1  # the feed's level, and the seat's lot


def test_without_another_owner_at_the_level_every_model_cancels_newest_first(tape: Tape):
    books = []
    for name in QUEUE_MODELS:
        replay = MarketReplay(tape, queue=name)
        book = OrderBook()
        replay.start(book, REPLAY)
        for i in range(4):
            replay.handle(book, i)
        books.append([qty for _, qty, _ in book.orders_at(1, BID)])
    assert books == [[30, 2]] * len(QUEUE_MODELS)  # the 10 that joined last lost 8


def test_the_model_travels_with_the_replayer(tape: Tape):
    replayer = Replayer(*tape.columns, queue="power", queue_power=3.0)
    assert pickle.loads(pickle.dumps(replayer)).queue == ("power", 3.0)
    assert replayer.copy().queue == ("power", 3.0)
    with pytest.raises(ValueError, match="queue must be one of"):
        Replayer(*tape.columns, queue="fifo")


def test_the_spec_names_the_model(tape: Tape, tmp_path: Path):
    market = MarketSpec(tape=tape, queue="log", n_steps=1).market(1)
    assert market.traders[0].replayer.queue == ("log", 2.0)
    assert MarketSpec(tape=tape).market(1).traders[0].replayer.queue == ("risk_averse", 2.0)
    with pytest.raises(SpecError, match="queue: must be one of"):
        MarketSpec(queue="fifo")
    with pytest.raises(SpecError, match="queue_power: must be in \\(0, 100\\]"):
        MarketSpec(queue="power", queue_power=0.0)
