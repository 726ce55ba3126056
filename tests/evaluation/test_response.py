"""The response to a market order (``tradearena response``): the measure's known answers on a
hand-built tape, and a known flow's answer to a seat's market orders against its answer to its
own: the same when it hears the seat's trade ("causal"), not when it does not ("book")."""

from __future__ import annotations

import math
import re
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from reference_flow import OPEN, known_model  # tests/reference_flow.py

from tradearena.envs.data.events import EventKind
from tradearena.envs.data.tapes import EMPTY_ASK, MESSAGE_DTYPE, Tape, write_lobster
from tradearena.envs.simulator.learned_flow.exciters import Exciter
from tradearena.envs.simulator.recording import synthetic_tape
from tradearena.envs.simulator.response_estimate import size_edges
from tradearena.envs.simulator.traders.learned import LearnedFlow
from tradearena.envs.spec import MarketSpec
from tradearena.evaluation.analysis.response import COLUMNS, response_table
from tradearena.evaluation.cli.main import main
from tradearena.evaluation.market.response import seat_responses, tape_responses

HOURS = 2


def test_a_market_orders_move_and_refill_are_read_from_the_book_after_it():
    """A 3-lot sell empties the 200 bid (mid 201 -> 200): the mid has moved 1 tick in the
    order's direction 0.1 s on, 1.5 a second on (the ask comes down to 201), 0.5 ten seconds
    on (the bid back at 200 two seconds after the order: refilled within 10 s, not within 1 s).
    A 1-lot buy that leaves a lot at the ask empties nothing: no move, its refill NaN."""
    rows = [
        (OPEN, 1, 1, 3, 200, 1),  # bid 3 @ 200
        (OPEN, 1, 2, 2, 202, -1),  # ask 2 @ 202
        (OPEN, 1, 3, 1, 198, 1),  # bid 1 @ 198
        (OPEN + 10.0, 4, 1, 3, 200, 1),  # a sell takes the 200 bid
        (OPEN + 10.5, 3, 2, 2, 202, -1),  # the ask leaves 202 ...
        (OPEN + 10.5, 1, 4, 2, 201, -1),  # ... for 201
        (OPEN + 12.0, 1, 5, 1, 200, 1),  # a bid at 200 again
        (OPEN + 13.0, 4, 4, 1, 201, -1),  # a 1-lot buy at the ask
    ]
    book = [
        (EMPTY_ASK, 0, 200, 3),
        (202, 2, 200, 3),
        (202, 2, 200, 3),
        (202, 2, 198, 1),
        (EMPTY_ASK, 0, 198, 1),
        (201, 2, 198, 1),
        (201, 2, 200, 1),
        (201, 1, 200, 1),
    ]
    tape = Tape(np.array(rows, MESSAGE_DTYPE), np.array(book, np.int64))
    found = tape_responses(tape, OPEN, OPEN + 60)
    assert found["size"].tolist() == [3, 1]
    assert found["emptied"].tolist() == [True, False]
    assert found["move_0.1"].tolist() == [1.0, 0.0]
    assert found["move_1"].tolist() == [1.5, 0.0]
    assert found["move_10"].tolist() == [0.5, 0.0]
    assert found["refill_0.1"].iloc[0] == 0.0 and found["refill_1"].iloc[0] == 0.0
    assert found["refill_10"].iloc[0] == 1.0 and np.isnan(found["refill_10"].iloc[1])


def test_sizes_are_bucketed_by_the_tapes_terciles_with_intervals():
    """Nine orders of 1 to 9 lots: buckets 1-3, 4-6, 7+; a bucket's mean move and its
    normal interval, a share with its Wilson interval; too few orders give NaN."""
    frame = pd.DataFrame(
        {
            "size": np.repeat(np.arange(1, 10), 10),
            "emptied": True,
            "move_1": np.tile([0.0, 1.0], 45),
            "refill_1": np.tile([1.0, 0.0, 0.0], 30),
        }
    )
    edges = size_edges(frame["size"].to_numpy())
    table = response_table({"tape": frame}, edges, horizons=(1.0,))
    assert list(table.columns) == list(COLUMNS)
    assert table.sizes.unique().tolist() == ["1-3", "4-6", "7+"]
    move = table[(table.what == "move") & (table.sizes == "1-3")].iloc[0]
    half = 1.96 * np.std(np.tile([0.0, 1.0], 15), ddof=1) / np.sqrt(30)
    assert (move.n, move.value) == (30, 0.5)
    assert move.high - move.value == pytest.approx(half)
    refill = table[(table.what == "refill") & (table.sizes == "1-3")].iloc[0]
    assert refill.value == pytest.approx(1 / 3) and refill.low < 1 / 3 < refill.high
    small = response_table({"tape": frame.head(20)}, edges, horizons=(1.0,))
    assert small.value.isna().all()  # 20 orders: fewer than MIN_ORDERS in every bucket


def refilling_model():
    """The known flow with a strong answer to an emptied queue: a market order that empties
    its level calls a limit order inside the spread on its side (0.6 of one, at 50 per
    second), which puts the price back."""
    model = known_model()
    alpha = model.alpha.copy()
    alpha[0, EventKind.LIMIT_INSIDE, Exciter.MARKET_EMPTIED] = 0.6
    return replace(model, alpha=alpha)


def known_spec(model, reaction: str = "causal") -> MarketSpec:
    return MarketSpec(
        traders=(LearnedFlow(model, reaction=reaction),),
        tick_size=0.01,
        open_time=OPEN,
        n_steps=HOURS * 60,
        warmup_seconds=0.0,
        initial_price=10_000,
    )


@pytest.fixture(scope="module")
def own_tape():
    return synthetic_tape(
        0,
        traders=[LearnedFlow(refilling_model())],
        levels=1,
        n_steps=HOURS * 60,
        open_time=OPEN,
        warmup_seconds=0.0,
        tick_size=0.01,
        initial_price=10_000,
    )


def test_a_flow_that_hears_a_seat_refills_what_the_seat_emptied_as_it_refills_its_own(own_tape):
    """The known flow's answer to its own market orders (the tape) against its answer to a
    seat's market orders of the same sizes: the share of emptied levels quoted again within
    0.1 s is the tape's (95% intervals meet) when the flow hears the seat's trade, and far
    below it (under a quarter of it) when it does not. For orders of up to 3 lots: larger
    ones can take both of the flow's levels, which its own market orders (a share of the best
    queue) never do, and the depth rule then puts the side back at once."""
    own = tape_responses(own_tape, OPEN, OPEN + HOURS * 3600)
    sizes = own["size"].to_numpy()
    responses = {"tape": own}
    for reaction in ("causal", "book"):
        spec = known_spec(refilling_model(), reaction)
        responses[reaction] = seat_responses(spec, sizes, 6, start=OPEN, end=OPEN + HOURS * 3600)
    table = response_table(responses, size_edges(sizes))
    refill = table[(table.what == "refill") & (table.horizon == 0.1)].set_index(["source", "sizes"])
    for sizes_ in ("1-2", "3-3"):
        tape, causal, book = (refill.loc[(s, sizes_)] for s in ("tape", "causal", "book"))
        assert tape.value > 0.3 and min(causal.n, book.n) >= 100, sizes_
        assert causal.low <= tape.high and tape.low <= causal.high, (sizes_, causal, tape)
        assert book.value < tape.value / 4, (sizes_, book, tape)


def test_response_prints_its_verdict_and_writes_its_table(own_tape, tmp_path, capsys):
    """`tradearena response TAPE MARKET --until HH:MM --out DIR`: the verdict first, naming
    the market and how many of its figures meet the tape's; response.csv equal to what the
    functions give; response.png written. A tape given as the market is one line, exit 2,
    nothing written."""
    messages = tmp_path / "day_34200000_57600000_message_1.csv"
    write_lobster(own_tape, messages, tmp_path / "day_34200000_57600000_orderbook_1.csv")
    refilling_model().save(tmp_path / "flow.json")
    market = tmp_path / "known.toml"
    market.write_text(
        "[market]\ntick_size = 0.01\ninitial_price = 10000\nwarmup_seconds = 0.0\n"
        f"n_steps = {HOURS * 60}\n"
        'traders = [{type = "LearnedFlow", model = "flow.json"}]\n'
    )
    out = tmp_path / "out"
    until = f"{9 + HOURS}:30"
    argv = ["response", str(messages), str(market), "--until", until, "--days", "2"]
    assert main([*argv, "--out", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert (
        printed[0]
        == f"The response to a market order, day_34200000_57600000_message_1 09:30-{until}:"
    )
    verdict = re.fullmatch(
        r"  known: (\d+) of (\d+) figures within the tape's 95% interval, (\d+) to pass: "
        r"(passes|fails) \(a seat's market orders of the tape's sizes\)",
        printed[1],
    )
    met, cells, needed = (int(verdict.group(i)) for i in (1, 2, 3))
    assert needed == math.ceil(0.9 * cells) and cells > 0
    assert verdict.group(4) == ("passes" if met >= needed else "fails")
    measures = {line.split()[0] for line in printed[3:] if line[:1].isalpha()}
    assert {"move,", "refill,"} <= measures and "move, ticks" in "\n".join(printed)
    written = pd.read_csv(out / "response.csv")
    assert list(written.columns) == list(COLUMNS) and set(written.source) == {
        "day_34200000_57600000_message_1",
        "known",
    }
    assert (out / "response.png").stat().st_size > 10_000
    bad = tmp_path / "bad"
    assert main(["response", str(messages), str(messages), "--out", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"tradearena: error: {messages}: a tape, not a market (an experiment file or a "
        "Gymnasium id)\n"
    )
    assert not bad.exists()


def test_a_market_whose_seat_trades_too_little_is_refused(tmp_path, capsys):
    """A market of one noise trader, where a seat's market orders find almost nothing to
    trade with: `response` refuses it naming the market and its count of orders (it printed
    "0 of 0 figures" before), as it refuses such a tape; nothing written."""
    tape = synthetic_tape(3, n_steps=60, levels=1)
    messages = tmp_path / "day_message_1.csv"
    write_lobster(tape, messages, tmp_path / "day_orderbook_1.csv")
    thin = tmp_path / "thin.toml"
    thin.write_text('[market]\ntask = "making"\ntraders = [{type = "Noise", n_agents = 1}]\n')
    out = tmp_path / "out"
    assert main(["response", str(messages), str(thin), "--days", "1", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert re.fullmatch(
        rf"tradearena: error: {re.escape(str(thin))}: \d market orders of a seat traded from "
        r"09:25:01 to 10:29:59, too few to read a response from \(at least 30\)\n",
        err,
    ), err
    assert not out.exists()
