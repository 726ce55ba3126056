"""The named tasks: defaults a task gives a spec, the market maker's resting quotes (levels,
skew, queue priority kept), the inventory penalty, and the Gymnasium ids."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

from tradearena import envs  # noqa: F401 (registers the ids)
from tradearena.envs.multi_agent import MarketParallelEnv
from tradearena.envs.seats import SeatedMarket
from tradearena.envs.simulator.actions import MakeActions, make_actions
from tradearena.envs.simulator.market import Market
from tradearena.envs.simulator.orders import Kind
from tradearena.envs.spec import MarketSpec, SpecError
from tradearena.envs.tasks import TASKS

MAKING = MarketSpec(
    task="making", population="light", n_steps=20, position_limit=500, inventory_penalty=0.0
)
ACTIONS = MakeActions(100)
BID_0_ASK_0 = ACTIONS.quotes.index((0, 0))
BID_2_ASK_1 = ACTIONS.quotes.index((2, 1))


def test_a_task_gives_the_defaults_and_the_spec_may_override_them():
    assert MAKING.action_set == "make" and MAKING.action_space.n == 17
    assert MAKING.observation_space("tabular").n == 60
    assert MarketSpec().action_set == "trade" and MarketSpec().observation_space("tabular").n == 54
    assert MarketSpec(task="making", actions="quote").action_space.n == 7
    with pytest.raises(SpecError, match="^task: must be one of"):
        MarketSpec(task="makeing")


def test_every_task_has_a_gymnasium_id():
    for task in TASKS.values():
        env = gymnasium.make(task.gym_id, population="light", n_steps=5)
        spec = env.unwrapped.market_spec
        assert spec.task == task.name and spec.action_set == task.actions


def seated(action: int) -> SeatedMarket:
    market = SeatedMarket(MAKING, [lambda obs: action])
    market.reset(3)
    return market


def test_an_unchanged_quote_keeps_its_order_and_place():
    """Quoting the same level step after step: while a side's price is unchanged it is the
    very same order (same id, so the same place in the queue); a new price is a new order."""
    market = seated(BID_0_ASK_0)
    book = market.market.book
    kept = moved = 0
    for _ in range(15):
        before = {side: (oid, price) for oid, side, price, _ in book.owned(0)}
        market.step()
        after = {side: (oid, price) for oid, side, price, _ in book.owned(0)}
        for side in set(before) & set(after):
            same_price = before[side][1] == after[side][1]
            assert (before[side][0] == after[side][0]) == same_price
            kept += same_price
            moved += not same_price
    assert kept > 0 and moved > 0


def test_levels_are_ticks_behind_the_others_best_and_never_cross():
    market = seated(BID_2_ASK_1)
    book = market.market.book
    for _ in range(8):
        market.step()
        mine = {side: price for _, side, price, _ in book.owned(0)}
        if 1 in mine:
            assert mine[1] < book.best_ask()[0]
        if -1 in mine:
            assert mine[-1] > book.best_bid()[0]
    # exactly: two ticks behind the best bid of the others, one behind their best ask
    market = SeatedMarket(MAKING, [lambda obs: 1])  # no quotes
    market.reset(5)
    market.step()
    book = market.market.book
    (bid, _), (ask, _) = book.best_bid(), book.best_ask()
    orders = ACTIONS.orders(BID_2_ASK_1, market.market, 0)
    assert orders == [(Kind.QUOTE, 1, bid - 2, 100), (Kind.QUOTE, -1, ask + 1, 100)]
    # the seat's own quote alone at the touch is not "the others' best"
    market.market.book.quote(1, bid + 1, 100, 0)
    assert ACTIONS.orders(BID_0_ASK_0, market.market, 0)[0] == (Kind.QUOTE, 1, bid, 100)


def test_hold_rests_nothing_and_reduce_trades_towards_flat():
    market = seated(1)
    while not market.market.done:
        market.step()
    assert market.market.book.owned(0) == [] and market.market.account(0).trades == 0
    market = seated(ACTIONS.quotes.index((0, None)))  # bid only: gets long
    for _ in range(20):
        if market.market.account(0).inventory > 0:
            break
        market.step()
    inventory = market.market.account(0).inventory
    assert inventory > 0
    orders = ACTIONS.orders(0, market.market, 0)
    assert (
        orders[0][0] == Kind.CANCEL_ALL
        and orders[1][:2] == (Kind.MARKET, -1)
        and orders[1][3] == min(100, inventory)
    )


def test_the_inventory_penalty_is_subtracted_from_the_reward_not_the_pnl():
    """reward = (change of value - phi * inventory^2) * reward_scale, step by step."""
    phi, scale = 1e-4, 0.5
    penalised = MarketSpec(
        task="making",
        population="light",
        n_steps=20,
        position_limit=500,
        inventory_penalty=phi,
        reward_scale=scale,
    )
    plain = SeatedMarket(MAKING, [lambda obs: BID_0_ASK_0])
    market = SeatedMarket(penalised, [lambda obs: BID_0_ASK_0])
    plain.reset(7)
    market.reset(7)
    held = 0
    while not market.market.done:
        _, reward, _ = market.step()
        _, change, _ = plain.step()
        inventory = market.market.account(0).inventory
        held += inventory != 0
        dollars = change[0] / MAKING.reward_scale
        assert reward[0] == pytest.approx((dollars - phi * inventory**2) * scale, abs=1e-12)
    assert held > 0
    assert market.market.value(0) == plain.market.value(0)


def test_misspelt_task_keyword_in_an_env_is_named():
    with pytest.raises(SpecError, match="did you mean 'task'"):
        gymnasium.make("tradearena/MarketMaking-v0", tsak="making")


def test_the_pettingzoo_variant_takes_the_task():
    env = MarketParallelEnv(2, task="making", population="light", n_steps=5)
    assert all(env.action_space(a).n == 17 for a in env.possible_agents)


EXECUTION = MarketSpec(task="execution", n_steps=20, reward_scale=1.0)


def test_execution_needs_a_parent_order_within_the_limit():
    assert (EXECUTION.parent_order, EXECUTION.position_limit) == (1000, 1000)  # the task's
    with pytest.raises(SpecError, match="^parent_order: must be non-zero"):
        MarketSpec(task="execution", parent_order=0)
    with pytest.raises(SpecError, match="^parent_order: must be within position_limit"):
        MarketSpec(task="execution", parent_order=-2000, position_limit=1000)
    env = gymnasium.make("tradearena/Execution-v0", population="light", n_steps=5)
    assert env.unwrapped.market_spec.parent_order == 1000 and env.action_space.n == 5


@pytest.mark.parametrize("action", range(5))
def test_rewards_add_up_to_minus_the_shortfall_with_its_opportunity_cost(action):
    """Whatever the child orders, the last step sends what remains at market; the rewards
    add up to the score: the fills valued at the opening mid, plus what is still missing
    valued at the close's move (the opportunity cost): minus the implementation shortfall.
    Always buying at market (2-4) or resting a lot (0) gets it all done here; waiting to the
    last step (1) gets only what the thin book holds then."""
    market = SeatedMarket(EXECUTION, [lambda obs: action])
    market.reset(11)
    total, done = 0.0, False
    while not done:
        _, reward, done = market.step()
        total += reward[0]
    account, mids = market.market.account(0), market.market.mids()
    missing = 1000 - account.inventory
    shortfall = -(account.cash + account.inventory * mids[0] - missing * (mids[-1] - mids[0]))
    assert total == pytest.approx(market.score(0)) == pytest.approx(-shortfall * 0.01)
    assert (missing == 0) == (action != 1)


def test_a_passive_child_order_rests_at_the_others_best_bid():
    market = SeatedMarket(EXECUTION, [lambda obs: 1])
    market.reset(2)
    market.step()
    bid = market.market.book.best_bid()[0]
    assert make_actions("execute", 100, 1000).orders(0, market.market, 0) == [
        (Kind.QUOTE, 1, bid, 100)
    ]
    selling = make_actions("execute", 100, -300)
    assert selling.orders(4, market.market, 0) == [
        (Kind.CANCEL_ALL, 0, 0, 0),
        (Kind.MARKET, -1, 0, 300),
    ]


INFORMED = MarketSpec(task="informed", population="light", n_steps=10, signal_noise=1e-6)


def test_the_informed_seat_sees_the_fundamental_forecast_to_the_close():
    """With (almost) no noise the signal is the zero-intelligence traders' fundamental now,
    forecast to the close as they forecast it, over the mid in bp; the same seed gives the
    same signals."""
    market = SeatedMarket(INFORMED, ["features"])
    assert market.observation_spaces[0].shape == (9,)
    first = [market.reset(4)[0][-1]]
    informant = market.informant
    for _ in range(5):
        observations, _, _ = market.step([1])
        m = market.market
        forecast = informant.forecast_close(informant.value_at(m.t), m.t, m.close_time)
        assert observations[0][-1] == pytest.approx(
            1e4 * (forecast - m.last_mid) / m.last_mid, abs=1e-3
        )
        first.append(observations[0][-1])
    again = [market.reset(4)[0][-1]] + [market.step([1])[0][0][-1] for _ in range(5)]
    assert first == again


def test_an_informed_task_needs_zero_intelligence_traders():
    with pytest.raises(SpecError, match="^task: 'informed' signals the fundamental"):
        SeatedMarket(MarketSpec(task="informed", population="none", n_steps=5), ["features"])


def test_compiled_quotes_equal_the_action_sets_orders():
    """`MakeActions.orders_batch` (compiled) gives each market's `orders` for every action:
    markets mid-session with the seat's quotes resting (alone at the touch or not), inventory
    either way, and books with an empty side."""
    rng = np.random.default_rng(4)
    markets = []
    for seed in range(12):
        table = SeatedMarket(MAKING, [lambda obs: int(rng.integers(17))])
        table.reset(seed)
        for _ in range(int(rng.integers(0, 15))):
            table.step()
        markets.append(table.market)
    bare = Market(n_seats=1, n_steps=2)  # no background: an empty book, then one side
    bare.reset(0)
    markets.append(bare)
    one_sided = Market(n_seats=1, n_steps=2)
    one_sided.reset(0)
    one_sided.book.limit(-1, 10_005, 30, owner=0)
    one_sided.book.limit(-1, 10_006, 40, owner=5)
    markets.append(one_sided)
    assert {m.account(0).inventory != 0 for m in markets} == {True, False}
    assert any(m.book.owned(0) for m in markets)
    for action in range(ACTIONS.n):
        actions = np.full(len(markets), action)
        expected = [ACTIONS.orders(action, m, 0) for m in markets]
        assert ACTIONS.orders_batch(actions, markets, 0) == expected, action
    mixed = rng.integers(0, ACTIONS.n, size=len(markets))
    expected = [ACTIONS.orders(int(a), m, 0) for a, m in zip(mixed, markets)]
    assert ACTIONS.orders_batch(mixed, markets, 0) == expected


def test_compiled_quotes_refuse_what_orders_refuses():
    market = seated(BID_0_ASK_0).market
    with pytest.raises(ValueError, match="action 17 of market 0 is not in"):
        ACTIONS.orders_batch(np.array([17]), [market], 0)
    with pytest.raises(TypeError, match=r"markets\[1\] is None"):
        ACTIONS.orders_batch(np.array([2, 2]), [market, None], 0)


def test_every_task_has_its_registered_id():
    """envs/__init__.py registers each id literally: each task's id is there with the task's
    keywords (the taker's id is also the plain market's, whose default task is the taker),
    beside the replayed and the model markets, and no other."""
    ids = {i for i in gymnasium.registry if i.startswith("tradearena/")}
    extra = {"tradearena/ReplayMarket-v0", "tradearena/AlmgrenChriss-v0"}
    assert ids == {task.gym_id for task in TASKS.values()} | extra
    for task in TASKS.values():
        kwargs = gymnasium.registry[task.gym_id].kwargs
        assert MarketSpec(**kwargs).task == task.name
        assert kwargs in ({}, task.gym_keywords())
