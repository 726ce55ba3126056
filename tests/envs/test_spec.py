"""Tests for envs.spec.MarketSpec: one set of defaults, named errors, markets built alike."""

from __future__ import annotations

from dataclasses import replace

import gymnasium as gym
import numpy as np
import pytest

from tradearena import envs  # noqa: F401 (registers the ids)
from tradearena.envs.data.convert import Conversion, write_converted
from tradearena.envs.data.tapes import TapeError, write_lobster
from tradearena.envs.multi_agent import MarketParallelEnv
from tradearena.envs.simulator.recording import synthetic_tape
from tradearena.envs.simulator.traders import MarketMaker, Noise, light
from tradearena.envs.spec import SYNTHETIC, MarketSpec, SpecError, names_tape_file
from tradearena.envs.trading_env import TradingEnv


def test_both_environments_default_to_the_spec():
    assert TradingEnv().market_spec == MarketSpec()
    assert MarketParallelEnv().core.spec == MarketSpec()
    env = TradingEnv(MarketSpec(n_steps=7), fee_per_share=0.5)
    assert env.market_spec == MarketSpec(n_steps=7, fee_per_share=0.5)  # keywords replace
    assert (env.market.n_steps, env.market.fee_per_share) == (7, 0.5)


@pytest.mark.parametrize(
    "make, owner",
    [
        (lambda **kw: TradingEnv(**kw), "TradingEnv"),
        (lambda **kw: MarketParallelEnv(2, **kw), "MarketParallelEnv"),
        (lambda **kw: gym.make("tradearena/SyntheticMarket-v0", **kw), "TradingEnv"),
    ],
)
def test_a_misspelt_keyword_is_named_where_it_was_typed(make, owner):
    with pytest.raises(
        SpecError,
        match=rf"^n_step: {owner} takes no market keyword 'n_step' "
        r"\(did you mean 'n_steps'\?\)",
    ) as error:
        make(n_step=60)
    assert error.value.path == ("n_step",)


@pytest.mark.parametrize(
    "keywords, path",
    [
        ({"n_steps": 0}, ("n_steps",)),
        ({"population": "huge"}, ("population",)),
        ({"actions": "limit"}, ("actions",)),
        ({"reward_scale": float("nan")}, ("reward_scale",)),
        ({"windows": (1, 1)}, ("windows",)),
        ({"traders": ({"type": "Whale"},)}, ("traders", 0, "type")),
        ({"position_limit": -5}, ("position_limit",)),
        ({"window_steps": (5, 2)}, ("window_steps",)),
        ({"window_steps": (-1, 2)}, ("window_steps",)),
        ({"window_steps": (0, 1, 2)}, ("window_steps",)),
        ({"window_steps": (0, 1.5)}, ("window_steps",)),
    ],
)
def test_bad_values_name_their_field(keywords, path):
    with pytest.raises(SpecError) as error:
        MarketSpec(**keywords)
    assert error.value.path == path


@pytest.mark.parametrize("tick", [1e-300, 1e-13, 0.0, float("nan"), 1e7, 1e308, float("inf")])
def test_a_tick_beyond_the_listed_ones_is_refused(tick):
    """A tick of 1e-300 dollars made a PnL of 1e-297 (ticks below 1e-12 dollars are noise of
    floating point), one of 1e308 infinite rewards: a tick lies in [1e-12, 1e6] dollars."""
    with pytest.raises(SpecError, match=r"^tick_size: must be a number in \[1e-12, 1e\+06\] "):
        MarketSpec(tick_size=tick)
    assert MarketSpec(tick_size=1e-12).market(0).tick_size == 1e-12
    assert MarketSpec(tick_size=1e6).market(0).tick_size == 1e6


BOUNDS = {
    "reward_scale": (1e308, r"must be in \(0, 1e\+06\], got 1e\+308"),
    "inventory_penalty": (1e308, r"must be in \[0, 1e\+06\] dollars a share\^2, got 1e\+308"),
    "fee_per_share": (float("inf"), r"must be in \[0, 1e\+06\] dollars a share, got inf"),
    "signal_noise": (1e308, r"must be in \(0, 1,000,000,000\] ticks, got 1e\+308"),
    "queue_power": (1e308, r"must be in \(0, 100\], got 1e\+308"),
    "position_limit": (2**62, r"must be in \[1, 1,000,000,000\] shares, got 4611686018427387904"),
    "order_size": (2**62, r"must be in \[1, 1,000,000,000\] shares, got 4611686018427387904"),
    "depth_levels": (10**9, r"must be in \[1, 1,000\], got 1000000000"),
    "windows": ((1, 10**12), r"must be distinct step counts in \[1, 1,000,000\]"),
}
"""A field, a value beyond its bound, and the refusal (the bounds keep every reward a finite
float and every account inside 64-bit integers)."""


@pytest.mark.parametrize("field", list(BOUNDS))
def test_every_number_of_the_market_is_bounded(field):
    """Each field beyond its bound is refused naming it (1e308 of reward_scale, a penalty or
    a fee made infinite rewards, or an sqlite error after every job)."""
    value, message = BOUNDS[field]
    with pytest.raises(SpecError, match=f"^{field}: {message}"):
        MarketSpec(population="light", **{field: value})


@pytest.mark.parametrize(
    "make, hint",
    [
        (lambda: MarketSpec(task="makeing"), "task: must be one of ['taker', 'making', "),
        (lambda: MarketSpec(population="ligth"), "(did you mean 'light'?)"),
        (lambda: MarketSpec(actions="mkae"), "(did you mean 'make'?)"),
        (lambda: MarketSpec(traders=({"type": "ZeroInteligence"},)), "'ZeroIntelligence'?)"),
        (lambda: MarketSpec().observation_space("tabluar"), "(did you mean 'tabular'?)"),
        (lambda: TradingEnv(observation="featrues"), "(did you mean 'features'?)"),
        (lambda: MarketParallelEnv(2, opposes={"seat_3": "seat_0"}), "(did you mean 'seat_"),
    ],
)
def test_a_mistyped_choice_names_the_nearest(make, hint):
    with pytest.raises(ValueError) as error:
        make()
    assert hint in str(error.value)
    assert "did you mean" in str(error.value)


def test_trader_objects_are_copied_per_market():
    """Two markets of one spec never share a trader's state."""
    spec = MarketSpec(traders=(MarketMaker(1, levels=3), Noise(10)), n_steps=5)
    a, b = spec.market(1), spec.market(1)
    assert a.traders[0] is not b.traders[0] is not spec.traders[0]
    a.reset(0), b.reset(0)
    for _ in range(5):
        np.testing.assert_array_equal(a.step(), b.step())


def test_trader_tables_build_the_named_traders():
    spec = MarketSpec(
        traders=({"type": "Noise", "n_agents": 10}, {"type": "MarketMaker", "n_agents": 1})
    )
    assert [type(t).__name__ for t in spec.market(0).traders] == ["Noise", "MarketMaker"]


def test_a_tape_sets_its_own_clock_and_shorter_sessions_are_windows():
    tape = synthetic_tape(3, traders=light(), n_steps=40)
    day = MarketSpec(tape=tape).market(0)
    window = MarketSpec(tape=tape, n_steps=10).market(0)
    assert (day.n_steps, day.day_steps) == (45, None)  # 40 steps and the 5-minute warm-up
    assert (window.n_steps, window.day_steps) == (10, 45)
    assert day.tick_size == tape.tick_size and day.warmup_seconds == 0.0


def test_a_window_past_the_days_end_names_window_steps():
    """A 40-step day recorded with a 5-minute warm-up has 45 steps: 10-step sessions may open
    at steps 0 .. 35; a window reaching 36 is refused, naming the field and the last step."""
    tape = synthetic_tape(3, traders=light(), n_steps=40)
    assert MarketSpec(tape=tape, n_steps=10, window_steps=[20, 35]).market(0).window_steps == (
        20,
        35,
    )
    with pytest.raises(SpecError, match=r"^window_steps: .* the last step .* is 35$") as error:
        MarketSpec(tape=tape, n_steps=10, window_steps=[20, 36]).market(0)
    assert error.value.path == ("window_steps",)
    with pytest.raises(SpecError, match="the last step a session may open at is 0"):
        MarketSpec(population="light", n_steps=10, window_steps=[0, 1]).market(0)


def test_a_tick_beside_a_tape_must_be_the_tapes():
    """The tape's prices are in its own ticks: the tape's tick given again changes nothing,
    another one is an error naming the field and both values."""
    tape = synthetic_tape(3, traders=light(), n_steps=5)
    assert tape.tick_size == 0.01
    assert MarketSpec(tape=tape, tick_size=0.01).market(0).tick_size == 0.01
    with pytest.raises(SpecError, match=r"^tick_size: 0.05 dollars conflicts .* 0.01 dollars"):
        MarketSpec(tape=tape, tick_size=0.05).market(0)


@pytest.mark.filterwarnings("ignore::tradearena.envs.data.load.ThinTape")  # a short tape
@pytest.mark.filterwarnings("ignore::tradearena.envs.data.load.PartialTape")  # no orderbook
def test_a_lobster_files_dollar_prices_are_read_in_the_given_tick(tmp_path):
    """LOBSTER writes dollars x 10000: tick_size 0.0001 reads 100 ticks where $0.01 reads
    one, a tick worth $0.0001; 0.05 is refused, since the prices are not on its grid."""
    tape = synthetic_tape(3, traders=light(), n_steps=5)
    path = tmp_path / "X_message_1.csv"
    write_lobster(tape, path)
    fine = MarketSpec(tape=str(path), tick_size=0.0001)
    visible = tape.messages["type"] <= 4
    np.testing.assert_array_equal(
        fine.replayed_tape().messages["price"][visible], 100 * tape.messages["price"][visible]
    )
    assert fine.market(0).tick_size == 0.0001
    with pytest.raises(TapeError, match="not a multiple of the tick"):
        MarketSpec(tape=str(path), tick_size=0.05).market(0)


@pytest.mark.filterwarnings("ignore::tradearena.envs.data.load.ThinTape")  # a short tape
def test_a_converted_tapes_tick_comes_from_its_meta(tmp_path):
    """A converted directory's meta.json says its tick ($0.5) and lot (0.001 units): a market
    values a tick of one lot at $0.0005; tick_size 0.5 agrees, 0.0005 (the lot's) does not."""
    tape = synthetic_tape(3, traders=light(), n_steps=5)
    meta = {"format": "l3", "symbol": "X", "tick_size": "0.5", "lot_size": "0.001"}
    directory = tmp_path / "converted"
    write_converted(Conversion(tape, meta), directory)
    for tick_size in (None, 0.5):
        market = MarketSpec(tape=str(directory), tick_size=tick_size).market(0)
        assert market.tick_size == pytest.approx(0.0005, rel=1e-15)
    with pytest.raises(SpecError, match=r"^tick_size: 0.0005 dollars conflicts .* 0.5 dollars"):
        MarketSpec(tape=str(directory), tick_size=0.0005).market(0)


@pytest.mark.filterwarnings("ignore::tradearena.envs.data.load.ThinTape")  # a short tape
def test_a_market_replays_a_file_when_its_tape_is_a_real_one(tmp_path):
    """`replays_file`: a tape's file or a `Tape` is a real tape, which the market replays
    with only the traders given beside it (no population); no tape, "" and a recorded
    synthetic day are not (a synthetic day's population is in its recording, and not beside
    it: test_a_synthetic_day_is_recorded_once_and_replayed)."""
    tape = synthetic_tape(3, traders=light(), n_steps=5)
    path = tmp_path / "X_message_1.csv"
    write_lobster(tape, path, tmp_path / "X_orderbook_1.csv")
    assert MarketSpec(tape=tape).replays_file and MarketSpec(tape=str(path)).replays_file
    assert MarketSpec(tape=str(path)).background() == []
    beside = MarketSpec(tape=str(path), traders=({"type": "Noise", "n_agents": 1},)).market(0)
    assert [type(t).__name__ for t in beside.traders] == ["MarketReplay", "Noise"]
    assert [names_tape_file(t) for t in (None, "", SYNTHETIC, str(path), tape)] == [
        False,
        False,
        False,
        True,
        True,
    ]
    assert not MarketSpec().replays_file and not MarketSpec(tape="").replays_file
    assert not MarketSpec(population="light", tape=SYNTHETIC, n_steps=5).replays_file


def test_a_tick_of_one_lot_is_the_tapes_tick_times_its_lot():
    """`Tape.tick_dollars`: $0.5 a tick of a unit, lots of 0.001 units: $0.0005 a tick of
    one lot, the tick a market replaying the tape runs at and its level-1 view counts in."""
    from tradearena.evaluation.market.sources import tape_view

    tape = replace(synthetic_tape(3, traders=light(), n_steps=5), tick_size=0.5, lot_size=0.001)
    assert tape.tick_dollars == 0.5 * 0.001
    assert MarketSpec(tape=tape).market(0).tick_size == tape.tick_dollars
    assert tape_view(tape).tick_size == tape.tick_dollars


def test_a_synthetic_day_is_recorded_once_and_replayed():
    spec = MarketSpec(population="light", tape="synthetic", tape_seed=2, n_steps=10, day_steps=30)
    assert spec.replayed_tape() is spec.replayed_tape()
    market = spec.market(1)
    assert (market.n_steps, market.day_steps) == (10, 35)  # with the recording's warm-up
    assert [type(t).__name__ for t in market.traders] == ["MarketReplay"]


def test_spaces_come_from_the_spec():
    spec = MarketSpec(actions="quote", windows=(1, 5))
    assert spec.action_space == gym.spaces.Discrete(7)
    assert spec.observation_space("features").shape == (7,)
    assert spec.observation_space("tabular") == gym.spaces.Discrete(54)
    with pytest.raises(SpecError, match="observation"):
        spec.observation_space("pixels")


FACES = {
    "gym.make": lambda spec: gym.make("tradearena/MarketMaking-v0", market_spec=spec),
    "gym.make_vec": lambda spec: gym.make_vec(
        "tradearena/MarketMaking-v0", num_envs=2, market_spec=spec
    ),
    "PettingZoo": lambda spec: MarketParallelEnv(n_seats=2, market_spec=spec),
}


@pytest.mark.parametrize("face", list(FACES))
@pytest.mark.parametrize("given", ["configs/amzn_learned.toml", 7])
def test_a_market_spec_that_is_no_spec_is_named(face, given):
    """A market file's path (or anything but a MarketSpec) given as ``market_spec``: a
    SpecError naming it and saying what reads the file (a TypeError from dataclasses
    before)."""
    with pytest.raises(SpecError, match=rf"^market_spec: \w+ takes a MarketSpec, got {given!r}; "):
        FACES[face](given)
