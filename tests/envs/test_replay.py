"""Tests for envs.simulator.traders.replay: exact books message by message on a hand-written LOBSTER
fixture, replay fidelity of recorded and damaged tapes, and learners trading against a replay."""

import pickle
from pathlib import Path

import numpy as np
import pytest

from tradearena.envs import OrderBook
from tradearena.envs.data.tapes import EMPTY_ASK, EMPTY_BID, Tape, load_lobster
from tradearena.envs.simulator.book import MAX_QTY
from tradearena.envs.simulator.flow import Flow
from tradearena.envs.simulator.market import Market
from tradearena.envs.simulator.orders import Kind, Rule
from tradearena.envs.simulator.recording import synthetic_tape
from tradearena.envs.simulator.replayer import Replayer
from tradearena.envs.simulator.traders import MarketReplay
from tradearena.envs.simulator.traders.base import Trader
from tradearena.envs.simulator.traders.replay import _WARM_UPS, replay_fidelity
from tradearena.envs.spec import MarketSpec

Levels = list[tuple[int, int]]

INITIAL_BIDS = [(9999, 100), (9998, 50)]
INITIAL_ASKS = [(10001, 80), (10002, 40)]

# (time, type, order id, size, price ticks, direction), and the whole book after it.
# Orders 900-903 were placed before the tape starts: the tape never names them as new.
FIXTURE: list[tuple[tuple, Levels, Levels]] = [
    # 2 partial cancel of unseen order 900
    ((34200.1, 2, 900, 20, 9999, 1), [(9999, 80), (9998, 50)], INITIAL_ASKS),
    # 1 new buy at a new best price
    ((34200.2, 1, 1, 30, 10000, 1), [(10000, 30), (9999, 80), (9998, 50)], INITIAL_ASKS),
    # 4 execution of unseen ask 901
    (
        (34200.3, 4, 901, 30, 10001, -1),
        [(10000, 30), (9999, 80), (9998, 50)],
        [(10001, 50), (10002, 40)],
    ),
    # 5 hidden execution between ticks (10000.5 ticks): no visible change
    (
        (34200.4, 5, 0, 10, 10000, 1),
        [(10000, 30), (9999, 80), (9998, 50)],
        [(10001, 50), (10002, 40)],
    ),
    # 3 delete of order 1
    ((34200.5, 3, 1, 30, 10000, 1), [(9999, 80), (9998, 50)], [(10001, 50), (10002, 40)]),
    # 7 trading halt (price code -1)
    ((34200.6, 7, 0, 0, -1, -1), [(9999, 80), (9998, 50)], [(10001, 50), (10002, 40)]),
    # 1 new sell joining the best ask
    ((34200.7, 1, 2, 25, 10001, -1), [(9999, 80), (9998, 50)], [(10001, 75), (10002, 40)]),
    # 4 execution of order 2: the replay takes the level's volume in time priority
    ((34200.8, 4, 2, 25, 10001, -1), [(9999, 80), (9998, 50)], [(10001, 50), (10002, 40)]),
    # 2 partial cancel of unseen 901: newest volume at the level goes first
    ((34200.9, 2, 901, 25, 10001, -1), [(9999, 80), (9998, 50)], [(10001, 25), (10002, 40)]),
    # 3 delete of unseen order 902: a whole level
    ((34201.0, 3, 902, 50, 9998, 1), [(9999, 80)], [(10001, 25), (10002, 40)]),
    # 2 cancel of unseen order 903 deeper than the file shows: nothing to remove (skipped)
    ((34201.1, 2, 903, 10, 9990, 1), [(9999, 80)], [(10001, 25), (10002, 40)]),
    # 6 cross trade: no visible change
    ((34201.2, 6, 0, 40, 10000, 1), [(9999, 80)], [(10001, 25), (10002, 40)]),
]
HIDDEN_PRICE_UNITS = 1_000_050  # 10000.5 ticks in LOBSTER units (dollars x 10000)


def row_text(bids: Levels, asks: Levels, levels: int) -> str:
    """One LOBSTER orderbook line in dollars x 10000 (tick 0.01 = 100 units)."""
    asks = [(p * 100, q) for p, q in asks[:levels]] + [(EMPTY_ASK, 0)] * (levels - len(asks))
    bids = [(p * 100, q) for p, q in bids[:levels]] + [(EMPTY_BID, 0)] * (levels - len(bids))
    return ",".join(f"{ap},{aq},{bp},{bq}" for (ap, aq), (bp, bq) in zip(asks, bids, strict=True))


def message_text(time, kind, order_id, size, price, direction) -> str:
    if kind == 7:
        units = price
    elif kind == 5:
        units = HIDDEN_PRICE_UNITS
    else:
        units = price * 100
    return f"{time:.9f},{kind},{order_id},{size},{units},{direction}"


def write_fixture(tmp_path: Path, levels: int = 2) -> tuple[Path, Path]:
    """The FIXTURE as LOBSTER message and orderbook files, written as plain text."""
    messages = tmp_path / "TEST_2020-01-02_34200_57600_message_2.csv"
    orderbook = tmp_path / "TEST_2020-01-02_34200_57600_orderbook_2.csv"
    messages.write_text("".join(message_text(*m) + "\n" for m, _, _ in FIXTURE))
    orderbook.write_text("".join(row_text(b, a, levels) + "\n" for _, b, a in FIXTURE))
    return messages, orderbook


@pytest.fixture
def fixture_tape(tmp_path: Path) -> Tape:
    return load_lobster(*write_fixture(tmp_path))


def test_fixture_loads_as_written(fixture_tape: Tape):
    """The text fixture reads back to the messages in ticks, halts' codes kept, hidden price
    rounded down, and the initial book rebuilt from the first row and message."""
    tape = fixture_tape
    assert len(tape) == len(FIXTURE) and tape.levels == 2
    assert tape.messages["type"].tolist() == [2, 1, 4, 5, 3, 7, 1, 4, 2, 3, 2, 6]
    assert tape.messages["price"].tolist() == [m[4] for m, _, _ in FIXTURE]
    assert tape.book[0].tolist() == [10001, 80, 9999, 80, 10002, 40, 9998, 50]
    assert tape.book[-1].tolist() == [10001, 25, 9999, 80, 10002, 40, EMPTY_BID, 0]
    assert tape.initial_book() == (INITIAL_BIDS, INITIAL_ASKS)


@pytest.mark.parametrize("reconcile", [False, True])
def test_exact_book_after_every_message(fixture_tape: Tape, reconcile: bool):
    """Replayed alone, the book equals the hand-computed book after every message, all of it
    owned by the replay; reconciliation has nothing to do on a consistent tape."""
    replay = MarketReplay(fixture_tape, reconcile=reconcile)
    assert replay.reconcile is reconcile
    book = OrderBook()
    replay.start(book, owner=7)
    assert book.depth(10) == (INITIAL_BIDS, INITIAL_ASKS)
    all_fills = []
    for i, (message, bids, asks) in enumerate(FIXTURE):
        fills = replay.handle(book, i)
        all_fills.append(fills)
        assert book.depth(10) == (bids, asks), f"after message {i + 1}: {message}"
        for side, levels in ((1, bids), (-1, asks)):
            for price, _ in levels:
                assert {owner for _, _, owner in book.orders_at(side, price)} == {7}
        if i == 7:  # order 2 still rests: the execution took the older initial volume
            queue = book.orders_at(-1, 10001)
            assert [qty for _, qty, _ in queue] == [25, 25]
            assert queue[1][0] == replay.ids[2]
        if i == 8:  # the cancel of unseen 901 removed the newest volume (order 2's)
            assert [qty for _, qty, _ in book.orders_at(-1, 10001)] == [25]
            assert book.resting(replay.ids[2]) == 0
    # the two visible executions trade against the replay's own resting volume
    assert [(f.price, f.qty, f.maker_owner, f.taker_owner, f.taker_side) for f in all_fills[2]] == [
        (10001, 30, 7, 7, 1)
    ]
    assert [(f.price, f.qty) for f in all_fills[7]] == [(10001, 25)]
    assert sum(len(f) for i, f in enumerate(all_fills) if i not in (2, 7)) == 0
    assert (replay.added, replay.removed, replay.skipped) == (0, 0, 10)
    assert 1 not in replay.ids  # deleted orders are forgotten


def test_fixture_fidelity(fixture_tape: Tape):
    """On the consistent fixture both fidelity figures are 1 with nothing reconciled."""
    for reconcile in (False, True):
        report = replay_fidelity(fixture_tape, reconcile=reconcile)
        assert (report.messages, report.fidelity) == (12, 1.0)
        assert (report.added, report.removed, report.skipped) == (0, 0, 10)


def test_reconciliation_reveals_deeper_levels(tmp_path: Path):
    """In a level-1 file a delete of the best bid reveals a level the messages never showed:
    messages alone leave the bid side empty, reconciliation adds exactly the row's volume."""
    messages = tmp_path / "m.csv"
    orderbook = tmp_path / "b.csv"
    rows = [
        ((34200.0, 3, 900, 100, 9999, 1), [(9998, 60)], [(10001, 80)]),
        ((34200.5, 1, 5, 20, 10000, -1), [(9998, 60)], [(10000, 20)]),
    ]
    messages.write_text("".join(message_text(*m) + "\n" for m, _, _ in rows))
    orderbook.write_text("".join(row_text(b, a, 1) + "\n" for _, b, a in rows))
    tape = load_lobster(messages, orderbook)
    assert tape.initial_book() == ([(9999, 100)], [(10001, 80)])

    alone = replay_fidelity(tape, reconcile=False)
    assert (alone.fidelity, alone.added, alone.removed) == (0.0, 0, 0)
    reconciled = replay_fidelity(tape, reconcile=True)
    assert (reconciled.fidelity, reconciled.added, reconciled.removed) == (1.0, 60, 0)

    replay = MarketReplay(tape)
    assert replay.reconcile  # the default with a book file
    book = OrderBook()
    replay.start(book, owner=1)
    replay.handle(book, 0)
    assert book.depth(5) == ([(9998, 60)], [(10001, 80)])
    replay.handle(book, 1)
    assert book.depth(5) == ([(9998, 60)], [(10000, 20), (10001, 80)])


@pytest.mark.parametrize("side", [-1, 1])
def test_reconciliation_trims_every_shown_level(tmp_path: Path, side: int):
    """In a level-2 file a new order the rows never show (at the second level, either side)
    is stale volume: reconciliation takes exactly it out, down to the row's deepest level, and
    the book equals every row."""
    bids, asks = [(9999, 100), (9998, 50)], [(10001, 80), (10002, 40)]
    price = 10002 if side < 0 else 9998
    rows = [
        ((34200.0, 5, 0, 10, 10000, 1), bids, asks),  # hidden: the initial book is the row
        ((34200.2, 1, 5, 30, price, side), bids, asks),  # the rows do not show it
        ((34200.5, 1, 6, 10, 10000, 1), [(10000, 10), (9999, 100)], asks),
    ]
    messages, orderbook = tmp_path / "m.csv", tmp_path / "b.csv"
    messages.write_text("".join(message_text(*m) + "\n" for m, _, _ in rows))
    orderbook.write_text("".join(row_text(b, a, 2) + "\n" for _, b, a in rows))
    tape = load_lobster(messages, orderbook)

    replay = MarketReplay(tape)
    book = OrderBook()
    replay.start(book, owner=3)
    replay.handle(book, 0)
    assert book.depth(10) == (bids, asks)
    replay.handle(book, 1)
    assert book.depth(10) == (bids, asks)
    assert (replay.added, replay.removed) == (0, 30)
    replay.handle(book, 2)
    assert book.depth(2) == ([(10000, 10), (9999, 100)], asks)
    assert (replay.added, replay.removed, replay.skipped) == (0, 30, 0)


def test_replayer_refuses_bad_columns_and_messages(fixture_tape: Tape):
    """Columns of other lengths, rows of another shape and a message past the tape are
    named errors."""
    columns = fixture_tape.columns
    with pytest.raises(ValueError, match="one length"):
        Replayer(*columns[:4], columns[4][:-1])
    with pytest.raises(ValueError, match="4 x levels"):
        Replayer(*columns, fixture_tape.book[:, :6])
    with pytest.raises(IndexError, match="message 12 of a tape of 12"):
        Replayer(*columns).handle(OrderBook(), 12)
    with pytest.raises(TypeError):
        Replayer(*columns).handle(None, 0)
    repeated = fixture_tape.book.copy()
    repeated[3, 4] = repeated[3, 0]  # the second ask level at the first's price
    with pytest.raises(ValueError, match="row 3 shows one ask price at two levels"):
        Replayer(*columns, repeated)
    kind, order_id, size, price, direction = (c.copy() for c in columns)
    direction[1] = 2**32 + 1  # a new order's side: never taken for a buy
    with pytest.raises(ValueError, match="side must be"):
        Replayer(kind, order_id, size, price, direction).handle(OrderBook(), 1)
    huge = fixture_tape.book.copy()
    huge[0, 3] = MAX_QTY + 1  # a row wanting more shares than an order holds
    with pytest.raises(ValueError, match="qty must be a positive number of shares"):
        Replayer(*columns, huge).handle(OrderBook(), 0)


def test_a_flow_refuses_replay_programs_it_cannot_carry_out(fixture_tape: Tape):
    """A REPLAY program needs a Replayer and refs among its messages; no other rule takes
    one."""
    replay = MarketReplay(fixture_tape)
    replay.start(OrderBook(), owner=1)
    good = replay.program()
    beyond = good.rows._replace(ref=good.rows.ref + 1)
    cases = [
        (good._replace(replayer=None), ValueError, "only one, has a replayer"),
        (good._replace(rule=Rule.FIXED), ValueError, "only one, has a replayer"),
        (good._replace(replayer=object()), TypeError, "must be a Replayer"),
        (good._replace(rows=beyond), ValueError, "refs must be messages of the replayer's 12"),
    ]
    for program, error, message in cases:
        with pytest.raises(error, match=message):
            Flow([program], {})


def test_replays_of_one_tape_share_their_rows(recorded: Tape):
    """Sessions of one tape share the message rows (one copy per tape and owner): a row per
    message, in time order, HANDLE rows of the replay's owner referring to their message."""
    first, second = (MarketSpec(tape=recorded, n_steps=5).market(1) for _ in range(2))
    for market in (first, second):
        market.reset(0)
    rows = [m.traders[0].program().rows for m in (first, second)]
    assert all(a is b for a, b in zip(*rows))
    assert rows[0].time.tolist() == recorded.messages["time"].tolist()
    assert set(rows[0].kind.tolist()) == {int(Kind.HANDLE)} and set(rows[0].owner.tolist()) == {1}
    assert rows[0].ref.tolist() == list(range(len(recorded)))


def test_a_replay_that_handles_messages_its_own_way_is_asked_for_each(recorded: Tape):
    """A subclass overriding `handle` gets every message on the compiled path too."""

    class Counting(MarketReplay):
        def handle(self, book, ref):
            self.seen.append(ref)
            return super().handle(book, ref)

    replay = Counting(recorded)
    replay.seen = []
    market = Market([replay], n_seats=1, n_steps=10, open_time=recorded.messages["time"][0])
    market.reset(0)
    while not market.done:
        market.step()
    assert market._compiled is not None
    assert replay.seen == list(range(len(replay.seen))) and len(replay.seen) > 100


def test_reconcile_needs_a_book(fixture_tape: Tape):
    """reconcile=True without orderbook rows, and fidelity without them, are refused."""
    bookless = Tape(fixture_tape.messages, None)
    with pytest.raises(ValueError, match="orderbook"):
        MarketReplay(bookless, reconcile=True)
    with pytest.raises(ValueError, match="orderbook"):
        replay_fidelity(bookless, reconcile=False)
    assert MarketReplay(bookless).reconcile is False


# --------------------------------------------------------------------- recorded synthetic
@pytest.fixture(scope="module")
def recorded() -> Tape:
    return synthetic_tape(0, n_steps=30)


def test_recorded_tape_replays_exactly(recorded: Tape):
    """A recorded tape names every order: messages alone reproduce every first level, and
    reconciliation has nothing to add or remove."""
    assert len(recorded) > 1000 and recorded.levels == 5
    # the market only cancels whole orders, so a recording has no partial cancels (type 2)
    assert set(recorded.messages["type"].tolist()) == {1, 3, 4}
    for reconcile in (False, True):
        report = replay_fidelity(recorded, reconcile=reconcile)
        assert report.messages == len(recorded)
        assert report.fidelity == 1.0
        assert (report.added, report.removed, report.skipped) == (0, 0, 0)


def test_recorded_tape_replays_every_level(recorded: Tape):
    """Beyond the first level: the replayed book's top 5 levels equal every book row."""
    replay = MarketReplay(recorded, reconcile=False)
    book = OrderBook()
    replay.start(book, owner=0)
    for i, row in enumerate(recorded.book.tolist()):
        replay.handle(book, i)
        bids, asks = book.depth(5)
        expected_asks = [(row[4 * k], row[4 * k + 1]) for k in range(5) if row[4 * k + 1]]
        expected_bids = [(row[4 * k + 2], row[4 * k + 3]) for k in range(5) if row[4 * k + 3]]
        assert (bids, asks) == (expected_bids, expected_asks), f"row {i}"


def test_level_one_tape_replays_exactly(recorded: Tape):
    """The same tape with its book cut to one level: fidelity 1 with and without
    reconciliation, nothing reconciled."""
    tape = Tape(recorded.messages, recorded.book[:, :4].copy(), recorded.tick_size)
    assert tape.levels == 1
    for reconcile in (False, True):
        report = replay_fidelity(tape, reconcile=reconcile)
        assert report.fidelity == 1.0
        assert (report.added, report.removed) == (0, 0)


def test_missing_cancels_are_repaired_by_reconciliation(recorded: Tape):
    """Dropping every 10th cancel/delete (and its book row) leaves stale volume: messages
    alone miss the file's first level after some messages; reconciliation removes the stale
    shares and matches every row."""
    kinds = recorded.messages["type"]
    cancels = np.flatnonzero((kinds == 2) | (kinds == 3))
    keep = np.setdiff1d(np.arange(len(recorded)), cancels[::10])
    tape = Tape(recorded.messages[keep].copy(), recorded.book[keep].copy(), recorded.tick_size)
    assert len(recorded) - len(tape) == len(cancels[::10]) > 10

    alone = replay_fidelity(tape, reconcile=False)
    assert alone.fidelity < 1.0
    assert (alone.added, alone.removed) == (0, 0)
    reconciled = replay_fidelity(tape, reconcile=True)
    assert reconciled.fidelity == 1.0
    assert reconciled.removed > 0
    assert reconciled.added + reconciled.removed > 0


def test_replay_pickled_mid_session_goes_on_the_same(recorded: Tape):
    """A replay market pickled mid-session (the replayer's ids and counters with it)
    continues exactly as the original; the messages are damaged so reconciliation works."""
    kinds = recorded.messages["type"]
    keep = np.setdiff1d(np.arange(len(recorded)), np.flatnonzero(kinds == 3)[::7])
    tape = Tape(recorded.messages[keep].copy(), recorded.book[keep].copy(), recorded.tick_size)
    market = MarketSpec(tape=tape, n_steps=30).market(1)
    market.reset(0)
    for _ in range(10):
        market.step([[(Kind.MARKET, 1, 0, 50)]])
    clone = pickle.loads(pickle.dumps(market))
    assert clone.traders[0].ids == market.traders[0].ids and clone.traders[0].ids
    while not market.done:
        market.step()
        clone.step()
    assert clone.book.depth(20) == market.book.depth(20)
    assert clone.mids().tolist() == market.mids().tolist()
    counters = [(r.added, r.removed, r.skipped) for r in (market.traders[0], clone.traders[0])]
    assert counters[0] == counters[1]
    replay = market.traders[0]
    assert replay.removed > 0


# ------------------------------------------------------------------------- with learners
class SeatLogBook(OrderBook):
    """A book that keeps the fills of the seats' orders (`OrderBook.submit`)."""

    def __init__(self, record: bool = False) -> None:
        self.seat_fills = []

    def submit(self, *args):
        fills = super().submit(*args)
        self.seat_fills.extend(fills)
        return fills


def test_learner_buys_against_replayed_asks(recorded: Tape):
    """A seat's market buy in a replay market walks the replayed asks: its inventory rises by
    the quantity and its cash falls by exactly sum(best-ask prices x shares taken); the
    makers are the replay."""
    market = MarketSpec(tape=recorded, n_steps=20).market(1)
    assert market.open_time == np.floor(recorded.messages["time"][0])
    assert market.tick_size == recorded.tick_size
    market.new_book = SeatLogBook  # the session's book logs the seats' fills
    market.reset(0)
    replay = market.traders[0]
    assert isinstance(replay, MarketReplay) and replay.owner == 1
    while market.book.best_ask() is None or len(market.book.depth(2)[1]) < 2:
        market.step()
    asks = market.book.depth(10)[1]
    qty = asks[0][1] + 10  # the whole best level and 10 shares of the next
    expected_cost = asks[0][0] * asks[0][1] + asks[1][0] * 10
    assert market.book.seat_fills == []
    market.step([[(Kind.MARKET, 1, 0, qty)]])

    account = market.account(0)
    assert account.inventory == qty
    assert account.cash == -expected_cost
    assert account.volume == qty
    seat_fills = market.book.seat_fills
    assert sum(f.qty for f in seat_fills) == qty
    assert {(f.taker_owner, f.maker_owner, f.taker_side) for f in seat_fills} == {(0, 1, 1)}
    assert [f.price for f in seat_fills] == sorted(f.price for f in seat_fills)
    assert {f.price for f in seat_fills} == {asks[0][0], asks[1][0]}

    while not market.done:  # the replay goes on around the seat's trade
        market.step()
    assert market.account(0).inventory == qty  # a market order never rests
    bid, ask = market.book.best_bid(), market.book.best_ask()
    assert bid is None or ask is None or bid[0] < ask[0]


@pytest.mark.filterwarnings("ignore::tradearena.envs.data.load.ThinTape")  # a short tape
def test_a_message_file_tape_loads_the_orderbook_file_beside_it(tmp_path: Path):
    """A LOBSTER message path given as the tape finds its orderbook file by LOBSTER's naming;
    the session opens at the first message's whole second at the tape's mid."""
    messages, _ = write_fixture(tmp_path)
    market = MarketSpec(tape=str(messages), n_steps=2, step_seconds=1.0).market(1)
    replay = market.traders[0]
    assert replay.tape.levels == 2 and replay.reconcile
    assert (market.open_time, market.warmup_seconds) == (34200.0, 0.0)
    assert market.initial_price == (9999 + 10001) // 2
    market.reset(0)
    assert market.book.depth(10) == (INITIAL_BIDS, INITIAL_ASKS)
    market.step()  # messages in [34200, 34201): the first nine
    assert market.book.depth(10) == (FIXTURE[8][1], FIXTURE[8][2])
    market.step()
    assert market.book.depth(10) == (FIXTURE[-1][1], FIXTURE[-1][2])
    assert (replay.added, replay.removed, replay.skipped) == (0, 0, 10)


def test_warm_ups_from_snapshots_are_the_sessions_run_in_full(recorded: Tape, monkeypatch):
    """Sessions of a replayed day whose windows repeat: those that start from the shared
    snapshot of their window's open equal the same sessions warmed up in full, to the book,
    accounts, mids, counts and the replay's ids and counters (a damaged tape, reconciled)."""
    kinds = recorded.messages["type"]
    keep = np.setdiff1d(np.arange(len(recorded)), np.flatnonzero(kinds == 3)[::6])
    tape = Tape(recorded.messages[keep].copy(), recorded.book[keep].copy(), recorded.tick_size)

    def sessions() -> list:
        market, out = MarketSpec(tape=tape, n_steps=10).market(1), []
        for seed in range(24):  # 21 windows: some open twice
            market.reset(seed)
            rng = np.random.default_rng(seed)
            while not market.done:
                side = int(rng.choice([-1, 1]))
                market.step([[(int(Kind.MARKET), side, 0, 60), (int(Kind.LIMIT), side, 0, 1)]])
            replay = market.traders[0]
            out.append(
                (market.summary(), market.book.depth(50), market.account(0), replay.ids)
                + (replay.added, replay.removed, replay.skipped, market.open_time)
            )
        return out

    snapshots = _WARM_UPS.setdefault(tape, {})
    restored = sessions()
    windows = {s[-1] for s in restored}
    # one snapshot a window (but the first: no warm-up), and some windows opened twice
    assert len(snapshots) == len(windows) - (min(windows) == tape.messages["time"][0] // 1)
    assert len(windows) < len(restored)
    assert any(s[4] or s[5] for s in restored)  # reconciliation worked
    monkeypatch.setattr(MarketReplay, "warm_up", Trader.warm_up)
    assert sessions() == restored
