"""Tests for envs.trading_env.TradingEnv: Gymnasium API conformance, determinism, pickling,
episode length, rewards, adversaries, opponents and argument checks."""

import pickle

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from tradearena import envs  # noqa: F401 - registers the environment ids
from tradearena.envs.errors import UserError
from tradearena.envs.simulator.features import FEATURE_NAMES
from tradearena.envs.simulator.traders import MarketMaker, Noise, ZeroIntelligence
from tradearena.envs.spec import SpecError
from tradearena.envs.trading_env import TradingEnv

IDS = ("tradearena/SyntheticMarket-v0", "tradearena/ReplayMarket-v0")


def small_traders() -> list:
    return [MarketMaker(2, levels=10), Noise(100), ZeroIntelligence(20, arrival_rate=1 / 60)]


def rollout(env, seed, actions) -> list[tuple]:
    """(obs, reward, terminated, truncated, info) from reset (reward None) and each action."""
    obs, info = env.reset(seed=seed)
    steps = [(obs, None, False, False, info)]
    for action in actions:
        steps.append(env.step(action))
    return steps


def assert_same(a: list[tuple], b: list[tuple]) -> None:
    assert len(a) == len(b)
    for (obs_a, *rest_a), (obs_b, *rest_b) in zip(a, b, strict=True):
        np.testing.assert_array_equal(obs_a, obs_b)
        assert rest_a == rest_b


ACTIONS = [2, 2, 1, 0, 2, 0, 0, 1, 2, 0] * 3


# -------------------------------------------------------------------------------- the API
@pytest.mark.filterwarnings("ignore:.*render fps")
@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize("observation", ["features", "tabular"])
@pytest.mark.parametrize("actions", ["trade", "quote"])
def test_check_env(env_id, observation, actions):
    """Gymnasium's checker passes for both ids, both observations and both action sets, and
    the spaces have the documented sizes."""
    env = gymnasium.make(env_id, n_steps=30, observation=observation, actions=actions)
    inner = env.unwrapped
    assert isinstance(inner, TradingEnv)
    check_env(inner)
    assert inner.action_space == gymnasium.spaces.Discrete(3 if actions == "trade" else 7)
    if observation == "features":
        assert inner.observation_space.shape == (8,)  # 3 + 3 return windows + time, volatility
    else:
        assert inner.observation_space == gymnasium.spaces.Discrete(54)
    obs, _ = env.reset(seed=1)
    assert inner.observation_space.contains(obs)
    env.close()


def test_make_without_arguments():
    """The synthetic id with no arguments is the taker task's market (configs/taker.toml):
    60 one-minute steps of the light population, features and trade actions; its first steps
    return in-space observations."""
    env = gymnasium.make("tradearena/SyntheticMarket-v0")
    inner = env.unwrapped
    assert inner.market.n_steps == 60 and inner.market.n_seats == 1
    assert len(inner.market.traders) == 4
    assert inner.action_space == gymnasium.spaces.Discrete(3)
    obs, info = env.reset(seed=0)
    assert obs.dtype == np.float32 and obs.shape == (8,)
    time_left = FEATURE_NAMES.index("time_left")
    assert obs[time_left] == 1.0 and obs[0] == 0.0  # full time left, no inventory
    assert info["inventory"] == 0 and info["value"] == 0.0 and info["step"] == 0
    for k in range(1, 4):
        obs, reward, terminated, truncated, info = env.step(2)
        assert inner.observation_space.contains(obs)
        assert not terminated and not truncated
        assert obs[time_left] == pytest.approx(1 - k / 60)
    assert info["inventory"] == 300


# ---------------------------------------------------------------------------- determinism
def test_same_seed_same_trajectory_different_seed_differs():
    """A whole short episode is identical for one seed (observations, rewards, flags, infos)
    and differs for another."""
    make = lambda: TradingEnv(traders=small_traders(), n_steps=30)  # noqa: E731
    a = rollout(make(), 5, ACTIONS)
    b = rollout(make(), 5, ACTIONS)
    assert_same(a, b)
    assert a[-1][2] is True
    c = rollout(make(), 6, ACTIONS)
    assert [s[4]["mid"] for s in a] != [s[4]["mid"] for s in c]


def test_reset_with_same_seed_repeats_on_one_env():
    """Resetting the same env with the same seed repeats the episode."""
    env = TradingEnv(traders=small_traders(), n_steps=30)
    assert_same(rollout(env, 11, ACTIONS), rollout(env, 11, ACTIONS))


def test_pickled_env_resets_identically():
    """A pickled copy taken mid-episode gives the same trajectory as the original after reset
    with a seed."""
    env = TradingEnv(traders=small_traders(), n_steps=30)
    rollout(env, 2, ACTIONS[:7])
    clone = pickle.loads(pickle.dumps(env))
    assert clone is not env and clone.market is not env.market
    assert_same(rollout(env, 9, ACTIONS), rollout(clone, 9, ACTIONS))
    fresh = pickle.loads(pickle.dumps(TradingEnv(traders=small_traders(), n_steps=30)))
    assert_same(rollout(fresh, 9, ACTIONS), rollout(env, 9, ACTIONS))


def test_pickled_env_continues_identically():
    """A pickled copy taken mid-episode continues exactly as the original."""
    env = TradingEnv(traders=small_traders(), n_steps=30)
    rollout(env, 2, ACTIONS[:7])
    clone = pickle.loads(pickle.dumps(env))
    rest_a = [env.step(a) for a in ACTIONS[7:30]]
    rest_b = [clone.step(a) for a in ACTIONS[7:30]]
    assert rest_a[-1][2] is True
    assert_same(rest_a, rest_b)


# ------------------------------------------------------------------------ episode, reward
def test_terminates_exactly_at_n_steps():
    """terminated turns True on step n_steps and not before; truncated never; stepping on
    raises."""
    env = TradingEnv(traders=small_traders(), n_steps=30)
    steps = rollout(env, 0, ACTIONS)
    assert [s[2] for s in steps[1:]] == [False] * 29 + [True]
    assert not any(s[3] for s in steps)
    assert [s[4]["step"] for s in steps] == list(range(31))
    assert steps[-1][0][FEATURE_NAMES.index("time_left")] == 0.0  # no time left
    with pytest.raises(RuntimeError):
        env.step(1)


def test_rewards_sum_to_final_value_times_scale():
    """Each reward is reward_scale x the step's change of info["value"]; the episode's rewards
    sum to reward_scale x the final value."""
    env = TradingEnv(traders=small_traders(), n_steps=30, reward_scale=2.5, fee_per_share=0.001)
    steps = rollout(env, 3, ACTIONS)
    values = [s[4]["value"] for s in steps]
    rewards = [s[1] for s in steps[1:]]
    assert values[0] == 0.0
    np.testing.assert_allclose(rewards, 2.5 * np.diff(values), rtol=0, atol=1e-9)
    assert sum(rewards) == pytest.approx(2.5 * values[-1], rel=1e-9, abs=1e-9)
    assert any(r != 0 for r in rewards)
    info = steps[-1][4]
    market = env.market
    assert info["cash"] == pytest.approx(
        market.account(0).cash * market.tick_size - market.account(0).fees
    )
    assert info["value"] == pytest.approx(info["cash"] + info["inventory"] * info["mid"] * 0.01)


# ------------------------------------------------------------------- adversaries, opponents
def test_takeover_with_p_one_executes_the_adversary():
    """With adversary_p=1 an always-buying adversary's action is executed every step: the
    always-selling learner's inventory rises by 100 a step up to the position limit."""
    env = TradingEnv(
        traders=small_traders(),
        n_steps=12,
        position_limit=800,
        adversary=lambda obs: 2,
        adversary_p=1.0,
    )
    steps = rollout(env, 4, [0] * 12)
    assert env.market.n_seats == 1
    assert [s[4]["inventory"] for s in steps] == [
        0,
        100,
        200,
        300,
        400,
        500,
        600,
        700,
        800,
        800,
        800,
        800,
        800,
    ]
    assert all(s[4]["taken_over"] for s in steps[1:])
    control = TradingEnv(
        traders=small_traders(), n_steps=12, adversary=lambda obs: 2, adversary_p=0.0
    )
    steps = rollout(control, 4, [0] * 12)
    assert steps[-1][4]["inventory"] == -500  # the default position limit (the task's)
    assert not any(s[4]["taken_over"] for s in steps)


def test_trader_adversary_gets_minus_the_learner_reward():
    """adversary_mode="trader" adds a seat that trades for itself and is rewarded exactly
    minus the learner's reward every step."""
    adversary = Recorder(2)
    env = TradingEnv(
        traders=small_traders(), n_steps=30, adversary=adversary, adversary_mode="trader"
    )
    assert env.market.n_seats == 2 and env.core.opposes == {1: 0}
    assert env.core.takeover is None
    seen = []
    step = env.core.step

    def spy(actions, adversary_action=None, **kwargs):
        out = step(actions, adversary_action, **kwargs)
        seen.append(out[1].copy())
        return out

    env.core.step = spy
    steps = rollout(env, 1, ACTIONS)
    assert len(seen) == 30 and len(adversary.seen) == 30  # the adversary's own seat acted
    for rewards, s in zip(seen, steps[1:], strict=True):
        assert rewards[0] == s[1]
        assert rewards[1] == -rewards[0]
    assert any(r[0] != 0 for r in seen)
    assert env.market.account(1).inventory > 0  # it really bought
    assert not any(s[4]["taken_over"] for s in steps)


class Recorder:
    """A policy object (``act(obs, explore=False)``) that always plays ``action`` and keeps
    the observations it is shown."""

    def __init__(self, action: int) -> None:
        self.action, self.seen = action, []

    def act(self, obs, explore=False):
        assert explore is False
        self.seen.append(obs)
        return self.action


def test_opponents_play_their_own_seats():
    """Each opponent policy acts on its own seat's observation: a buying opponent accumulates
    inventory (and sees it in its observation) while the holding learner stays flat."""
    buyer, seller = Recorder(2), Recorder(0)
    env = TradingEnv(
        traders=small_traders(), n_steps=8, position_limit=1000, opponents=[buyer, seller]
    )
    assert env.market.n_seats == 3
    steps = rollout(env, 0, [1] * 8)
    accounts = env.market.accounts
    assert [a.inventory for a in accounts] == [0, 800, -800]
    assert all(s[4]["inventory"] == 0 for s in steps)
    assert len(buyer.seen) == len(seller.seen) == 8
    # opponents' inventory feature before step k is 100 (k - 1) / position limit 1000
    assert [float(o[0]) for o in buyer.seen] == pytest.approx([k / 10 for k in range(8)])
    assert [float(o[0]) for o in seller.seen] == pytest.approx([-k / 10 for k in range(8)])


# ---------------------------------------------------------------------------- bad inputs
def test_invalid_actions_raise():
    """Actions outside the space raise ValueError; stepping before reset raises RuntimeError."""
    env = TradingEnv(traders=small_traders(), n_steps=5)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(1)
    env.reset(seed=0)
    for action in (3, -1, 1.5, "buy"):
        with pytest.raises(ValueError, match="action"):
            env.step(action)
    assert env.market.step_index == 0


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"observation": "x"}, "observation"),
        ({"reward_scale": 0}, "reward_scale"),
        ({"reward_scale": float("nan")}, "reward_scale"),
        ({"actions": "x"}, "actions"),
        ({"adversary_mode": "x"}, "adversary_mode"),
        ({"render_mode": "human"}, "render_mode"),
        ({"order_size": 0}, "size"),
        ({"windows": (0, 5)}, "windows"),
        ({"n_steps": 0}, "n_steps"),
    ],
)
def test_bad_arguments_name_themselves(kwargs, name):
    """Each bad argument raises ValueError naming it."""
    with pytest.raises(ValueError, match=name):
        TradingEnv(traders=small_traders(), **kwargs)


def test_render_ansi():
    """The ansi rendering shows the step, the book's best levels and the account."""
    env = TradingEnv(traders=small_traders(), n_steps=5, render_mode="ansi")
    env.reset(seed=0)
    env.step(2)
    text = env.render()
    bid, ask = env.market.book.best_bid(), env.market.book.best_ask()
    assert text.startswith("step 1/5")
    assert f"ask {ask[0]:>8} x {ask[1]}" in text and f"bid {bid[0]:>8} x {bid[1]}" in text
    assert "inventory 100 shares" in text
    assert TradingEnv(traders=small_traders(), n_steps=5).render() is None


@pytest.mark.parametrize(
    "keywords, message",
    [
        ({"n_steps": "60"}, "n_steps: expected an integer, got '60'"),
        ({"n_steps": 60.0}, "n_steps: expected an integer, got 60.0"),
        ({"reward_scale": True}, "reward_scale: expected a number, got True"),
        ({"task": 3}, "task: expected a string, got 3"),
        ({"windows": (1, "5")}, "windows: expected integers (steps), got (1, '5')"),
    ],
)
def test_a_wrong_type_through_gym_make_is_one_line_naming_the_keyword(keywords, message):
    """A value of the wrong type given to gym.make is the project's one-line UserError (a
    SpecError) naming the keyword, not a TypeError from inside the market."""
    with pytest.raises(UserError) as error:
        gymnasium.make("tradearena/SyntheticMarket-v0", **keywords)
    assert isinstance(error.value, SpecError)
    assert str(error.value) == message


def test_numpy_scalars_are_numbers_of_their_kind():
    """numpy integers and floats pass the type check as Python's do."""
    env = TradingEnv(traders=small_traders(), n_steps=np.int64(12), reward_scale=np.float32(0.5))
    assert env.market_spec.n_steps == 12
