"""Batched markets: each session of `MarketVectorEnv` / `BatchedMarket` plays exactly as the
single environment with its seed, step by step, autoresets included."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import textwrap

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from tradearena import (
    agents,
    envs,  # noqa: F401  (registers the ids)
)
from tradearena.envs.batch import BatchedMarket
from tradearena.envs.multi_agent import MarketParallelEnv
from tradearena.envs.seats import SeatedMarket
from tradearena.envs.spec import MarketSpec, SpecError
from tradearena.envs.trading_env import TradingEnv
from tradearena.envs.vector import BatchedParallelEnv, MarketVectorEnv
from tradearena.envs.workers import STEP

LIGHT = {"population": "light", "n_steps": 12}
TASKS = [
    pytest.param({"n_steps": 8}, id="taker-rmsc04"),
    pytest.param({**LIGHT, "task": "making", "inventory_penalty": 1e-5}, id="making"),
    pytest.param({**LIGHT, "observation": "tabular"}, id="tabular"),
    pytest.param({**LIGHT, "task": "informed"}, id="informed"),
    pytest.param(
        {**LIGHT, "task": "execution", "parent_order": 500, "position_limit": 500},
        id="execution",
    ),
    pytest.param({"tape": "synthetic", "n_steps": 10, "day_steps": 60}, id="replay"),
    pytest.param(
        {"tape": "synthetic", "n_steps": 10, "day_steps": 60, "window_steps": [30, 40]},
        id="replay-afternoon",
    ),
    pytest.param(
        {
            **LIGHT,
            "task": "making",
            "order_latency": {"model": "lognormal", "median": 20.0, "sigma": 1.0},
            "feed_latency": 45.0,
        },
        id="latency",
    ),
    pytest.param(
        {
            "tape": "synthetic",
            "n_steps": 10,
            "day_steps": 60,
            "order_latency": {"model": "empirical", "rows": [0.5, 30.0, 75.0]},
            "feed_latency": 100.0,
        },
        id="replay-latency",
    ),
]


@pytest.mark.parametrize("keywords", TASKS)
def test_sessions_equal_single_envs_step_by_step(keywords):
    n = 3
    vector = MarketVectorEnv(n, **keywords)
    singles = [TradingEnv(**keywords) for _ in range(n)]
    obs, _ = vector.reset(seed=11)
    assert np.array_equal(obs, [env.reset(seed=11 + i)[0] for i, env in enumerate(singles)])
    rng = np.random.default_rng(0)
    restart = [False] * n
    episode_steps = singles[0].market.n_steps
    rewarded = 0
    for _ in range(2 * episode_steps + 3):  # two episodes and the start of a third
        actions = rng.integers(vector.single_action_space.n, size=n)
        obs, rewards, terminated, truncated, _ = vector.step(actions)
        assert not truncated.any()
        for i, env in enumerate(singles):
            if restart[i]:  # NEXT_STEP autoreset: the action is ignored
                expected, reward, ended = env.reset()[0], 0.0, False
            else:
                expected, reward, ended, _, _ = env.step(int(actions[i]))
            assert np.array_equal(obs[i], expected)
            assert rewards[i] == reward and terminated[i] == ended
            rewarded += reward != 0.0
            restart[i] = ended
    assert rewarded > 0  # the sessions traded: the comparison has teeth


def test_make_vec_gives_the_batched_env_for_every_market_id():
    for gym_id in ("tradearena/SyntheticMarket-v0", "tradearena/MarketMaking-v0"):
        vector = gym.make_vec(gym_id, num_envs=4, population="light", n_steps=5)
        assert isinstance(vector.unwrapped, MarketVectorEnv)
        obs, _ = vector.reset(seed=0)
        assert obs.shape == (4, *vector.single_observation_space.shape)
        assert vector.observation_space.contains(obs)


def test_same_step_autoreset_returns_the_final_observation():
    keywords = {**LIGHT, "n_steps": 3}
    vector = MarketVectorEnv(2, autoreset_mode=AutoresetMode.SAME_STEP, **keywords)
    single = TradingEnv(**keywords)
    vector.reset(seed=5)
    single.reset(seed=5)
    for _ in range(3):
        obs, _, terminated, _, infos = vector.step(np.array([2, 2]))
        final, _, ended, _, _ = single.step(2)
    assert ended and terminated.all()
    assert np.array_equal(infos["final_obs"][0], final) and infos["_final_obs"].all()
    assert np.array_equal(obs[0], single.reset()[0])  # the next session, in the same step


def test_several_seats_per_session_equal_the_episode_driver():
    spec = MarketSpec(population="light", n_steps=10, task="making")
    seats = ("features", "tabular")
    batch = BatchedMarket(spec, 2, seats)
    driver = SeatedMarket(spec, seats)
    obs = batch.reset([3, 4])
    assert [o[0].tolist() for o in obs] == [np.asarray(o).tolist() for o in driver.reset(3)]
    rng = np.random.default_rng(1)
    done = False
    while not done:
        actions = rng.integers(spec.action_space.n, size=(2, 2))
        obs, rewards, finished = batch.step(actions)
        expected, expected_rewards, done = driver.step(actions[0].tolist())
        assert [o[0].tolist() for o in obs] == [np.asarray(o).tolist() for o in expected]
        assert np.array_equal(rewards[0], expected_rewards) and finished[0] == done
    assert batch.done.all()
    assert np.array_equal(batch.step(np.zeros((2, 2), int))[1], np.zeros((2, 2)))


@pytest.mark.parametrize("agent_id", ["q_learning", "ra2q", "random"])
def test_one_session_batch_learns_exactly_as_the_episode_driver(agent_id):
    """With one session, batched play (act_batch, update_batch) is `SeatedMarket.play`."""
    spec = MarketSpec(population="light", n_steps=15, task="making")

    def seated(agent_id: str) -> agents.Agent:
        kind = agents.resolve(agent_id).observation
        return agents.make(
            agent_id,
            observation_space=spec.observation_space(kind),
            action_space=spec.action_space,
            seed=7,
        )

    serial, batched = seated(agent_id), seated(agent_id)
    driver = SeatedMarket(spec, [serial], learners=[0])
    batch = BatchedMarket(spec, 1, [batched], learners=[0])
    for episode in range(3):
        expected = driver.play(episode, learn=True)
        (got,) = batch.play([episode], learn=True)
        assert got == expected
    assert all(
        np.array_equal(np.asarray(v), np.asarray(batched.state_dict()[k]))
        for k, v in serial.state_dict().items()
        if k != "rng"
    )


def test_sessions_of_a_greedy_batch_equal_serial_episodes():
    spec = MarketSpec(population="light", n_steps=15, task="making")
    maker = agents.make("avellaneda_stoikov", market_spec=spec)
    driver = SeatedMarket(spec, [maker])
    batch = BatchedMarket(spec, 4, [maker])

    def seeds() -> list[np.random.SeedSequence]:  # fresh ones: a session's reset spawns from it
        return [np.random.SeedSequence(9, spawn_key=(i,)) for i in range(3)]

    assert batch.play(seeds()) == [driver.play(seed) for seed in seeds()]
    assert batch.done.all()


def test_bad_batches_are_refused():
    with pytest.raises(ValueError, match="n_sessions"):
        BatchedMarket(MarketSpec(), 0)
    vector = MarketVectorEnv(2, **LIGHT)
    vector.reset(seed=0)
    with pytest.raises(ValueError, match="not in"):
        vector.step(np.array([0, 7]))
    with pytest.raises(SpecError, match="MarketVectorEnv takes no market keyword 'n_step'"):
        MarketVectorEnv(2, n_step=3)
    with pytest.raises(ValueError, match="policy in every seat"):
        BatchedMarket(MarketSpec(population="light"), 2).play([0])


def test_batched_parallel_env_sessions_equal_the_pettingzoo_env():
    keywords = {"population": "light", "n_steps": 6, "task": "making"}
    n = 3
    batched = BatchedParallelEnv(n, 2, opposes={"seat_1": "seat_0"}, **keywords)
    singles = [MarketParallelEnv(2, opposes={"seat_1": "seat_0"}, **keywords) for _ in range(n)]
    obs, _ = batched.reset(seed=4)
    firsts = [env.reset(seed=4 + i)[0] for i, env in enumerate(singles)]
    for agent in batched.possible_agents:
        assert np.array_equal(obs[agent], [first[agent] for first in firsts])
        assert batched.observation_space(agent) == singles[0].observation_space(agent)
    rng = np.random.default_rng(2)
    restart = False
    for _ in range(2 * 6 + 2):
        actions = {a: rng.integers(17, size=n) for a in batched.possible_agents}
        obs, rewards, terminated, truncated, _ = batched.step(actions)
        for i, env in enumerate(singles):
            if restart:
                expected, reward, ended = (
                    env.reset()[0],
                    dict.fromkeys(env.possible_agents, 0.0),
                    False,
                )
            else:
                step = env.step({a: int(actions[a][i]) for a in env.possible_agents})
                expected, reward, ended = step[0], step[1], step[2]["seat_0"]
            for agent in env.possible_agents:
                assert np.array_equal(obs[agent][i], expected[agent])
                assert rewards[agent][i] == reward[agent] and terminated[agent][i] == ended
        assert np.array_equal(rewards["seat_1"], -rewards["seat_0"])
        restart = bool(terminated["seat_0"].all())
    with pytest.raises(ValueError, match="no actions for agents"):
        batched.step({"seat_0": np.zeros(n, int)})
    with pytest.raises(ValueError, match="opposes names unknown seat 'seat_7'"):
        BatchedParallelEnv(2, 2, opposes={"seat_7": "seat_0"}, **keywords)


def test_sessions_in_worker_processes_are_the_same_sessions():
    keywords = {**LIGHT, "n_steps": 5, "task": "making"}
    local = MarketVectorEnv(5, autoreset_mode=AutoresetMode.SAME_STEP, **keywords)
    shared = MarketVectorEnv(5, autoreset_mode=AutoresetMode.SAME_STEP, workers=2, **keywords)
    try:
        assert np.array_equal(local.reset(seed=8)[0], shared.reset(seed=8)[0])
        rng = np.random.default_rng(3)
        for _ in range(12):
            actions = rng.integers(17, size=5)
            a, b = local.step(actions), shared.step(actions)
            for x, y in zip(a[:4], b[:4]):
                assert np.array_equal(x, y)
            assert a[4].keys() == b[4].keys()
            if a[4]:
                assert np.array_equal(a[4]["final_obs"], b[4]["final_obs"])
        parallel = BatchedParallelEnv(3, 2, workers=2, **keywords)
        single = BatchedParallelEnv(3, 2, **keywords)
        assert all(
            np.array_equal(parallel.reset(seed=1)[0][agent], obs)
            for agent, obs in single.reset(seed=1)[0].items()
        )
        parallel.close()
    finally:
        shared.close()
    with pytest.raises(ValueError, match="workers must be in"):
        MarketVectorEnv(2, workers=3, **keywords)


def test_a_worker_that_stops_is_named():
    env = MarketVectorEnv(4, workers=2, **{**LIGHT, "n_steps": 5})
    try:
        env.reset(seed=0)
        env.sessions.processes[0].kill()  # the one worker process: sessions 2-3
        with pytest.raises(RuntimeError, match=r"worker process 1 \(sessions 2-3\) stopped"):
            env.step(np.zeros(4, dtype=np.int64))
    finally:
        env.close()


def test_a_failing_step_in_this_process_leaves_no_answer_behind():
    """This process's share fails after the workers were asked: their answers are still
    collected, so the next step answers for the next actions."""
    keywords = {**LIGHT, "n_steps": 5}
    local, shared = MarketVectorEnv(4, **keywords), MarketVectorEnv(4, workers=2, **keywords)
    try:
        assert np.array_equal(local.reset(seed=2)[0], shared.reset(seed=2)[0])
        good = np.ones((2, 1), dtype=np.int64)
        with pytest.raises(ValueError):
            shared.sessions._ask(STEP, [np.ones((3, 1), dtype=np.int64), good])
        local.step(np.ones(4, dtype=np.int64))  # where the failed step left the workers' share
        actions = np.array([0, 2, 2, 0])
        for x, y in zip(local.step(actions)[:4], shared.step(actions)[:4]):
            assert np.array_equal(x[2:], y[2:])
    finally:
        shared.close()


def test_a_step_interrupted_while_workers_answer_is_refused_after(monkeypatch):
    """An interrupt while the workers' answers are being read leaves one unread: the sessions
    are out of step, and every later command says so instead of reading a stale answer."""
    env = MarketVectorEnv(4, workers=2, **{**LIGHT, "n_steps": 5})
    try:
        env.reset(seed=0)

        def interrupted(self, k):
            raise KeyboardInterrupt

        with monkeypatch.context() as patch:
            patch.setattr(type(env.sessions), "_answer", interrupted)
            with pytest.raises(KeyboardInterrupt):
                env.step(np.ones(4, dtype=np.int64))
        with pytest.raises(RuntimeError, match="out of step: close this environment"):
            env.step(np.ones(4, dtype=np.int64))
    finally:
        env.close()


def test_a_constructor_that_raises_leaves_nothing_to_close(monkeypatch):
    """A market keyword it does not take raises at once, and the half-made env's destructor
    (Gymnasium's, which closes it) raises nothing after."""
    raised = []
    monkeypatch.setattr(sys, "unraisablehook", raised.append)
    with pytest.raises(SpecError, match="MarketVectorEnv takes no market keyword 'bogus'"):
        MarketVectorEnv(2, bogus=1)
    gc.collect()
    assert raised == []


NUM_ENVS = {"10^9": 10**9, "1,025": 1025, "0": 0, "-1": -1, "2.5": 2.5, "True": True}
"""Session counts no batched face takes (at most `envs.spec.MAX_SESSIONS`)."""
CHILD = textwrap.dedent(
    """
    import json, resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
    import gymnasium as gym
    from tradearena import envs
    from tradearena.envs.vector import BatchedParallelEnv
    faces = {
        "make_vec": lambda n: gym.make_vec("tradearena/MarketMaking-v0", num_envs=n),
        "pettingzoo": lambda n: BatchedParallelEnv(n, n_seats=2, population="light"),
    }
    for name, n in json.loads(sys.argv[1]).items():
        for face, make in faces.items():
            try:
                make(n)
                out = "built"
            except ValueError as error:
                out = f"{type(error).__name__}: {error}"
            print(json.dumps([name, face, out]), flush=True)
    """
)


def test_a_batch_of_too_many_sessions_is_refused_before_any_is_built():
    """`gymnasium.make_vec` and `BatchedParallelEnv` with ``num_envs`` beyond 1,024 (10^9
    sessions once built until memory ran out), not positive or not an integer: a UserError
    naming it, at once; in a child process under a memory and a time limit."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(NUM_ENVS)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(lines) == 2 * len(NUM_ENVS), done.stderr
    for name, face, out in lines:
        shown = repr(NUM_ENVS[name])
        assert out == (
            f"UserError: num_envs must be an integer in [1, 1,024] sessions, got {shown}"
        ), (face, name)


REFUSED = {
    "fractions": np.array([1.7, 0.2]),
    "whole floats": [1.0, 2.0],
    "float32": np.array([1, 2], dtype=np.float32),
    "NaN": np.array([np.nan, 1.0]),
    "beyond int64": np.array([2**64 - 1, 1], dtype=np.uint64),
}
"""Batches of actions the single environment refuses one by one (it takes integers only)."""


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_batch_refuses_what_the_single_environment_refuses(case):
    """`make_vec`'s and the batched PettingZoo face's step refuse floats (whole ones too),
    bools and values out of the space, as the single environment does (they cast them
    silently before); integers are taken."""
    actions = REFUSED[case]
    single = gym.make("tradearena/MarketMaking-v0", population="light", n_steps=5)
    single.reset(seed=0)
    with pytest.raises(ValueError, match="is not in Discrete"):
        single.step(np.asarray(actions)[0].item())
    vector = gym.make_vec("tradearena/MarketMaking-v0", num_envs=2, population="light", n_steps=5)
    vector.reset(seed=0)
    with pytest.raises(ValueError, match=r"are not in MultiDiscrete\(\[17 17\]\)"):
        vector.step(actions)
    assert vector.step(np.array([1, 2]))[0].shape[0] == 2
    paired = BatchedParallelEnv(2, n_seats=2, population="light", n_steps=5, task="making")
    paired.reset(seed=0)
    with pytest.raises(ValueError, match=r"actions must be \(2,\) arrays in Discrete\(17\)"):
        paired.step({"seat_0": actions, "seat_1": np.array([1, 1])})
    paired.close()
