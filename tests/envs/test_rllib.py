"""RLlib's face: its environment check passes on the registered markets, the batched env
plays as the plain wrapper, PPO improves the seats' return, and a policy it trained takes a
seat in a tournament as a frozen tradearena agent."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest
import ray
import torch
from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
from ray.rllib.utils.pre_checks.env import check_multiagent_environments
from ray.tune.registry import ENV_CREATOR, _global_registry

from tradearena import agents
from tradearena.agents.rllib import from_rllib
from tradearena.envs.errors import UserError
from tradearena.envs.multi_agent import MarketParallelEnv
from tradearena.envs.rllib import (
    AGENTS,
    BatchedEnvRunner,
    BatchedMarketEnv,
    ppo_config,
    register_rllib_envs,
)
from tradearena.envs.spec import MarketSpec
from tradearena.evaluation.experiment.parallel import LocalExecutor
from tradearena.evaluation.experiment.rundir import load_run
from tradearena.evaluation.experiment.runner import run_experiment

SHORT = {"task": "making", "population": "light", "n_steps": 5}
LEARN = {"n_steps": 10, "inventory_penalty": 1e-3}
"""The PPO run's market: short sessions where holding inventory costs
1e-3 $/share^2/step, so quoting at random loses and a seat learns to keep flat."""


@pytest.fixture(scope="module")
def local_ray():
    """A Ray instance of one CPU for this module's runs (the running one, if any)."""
    started = not ray.is_initialized()
    if started:
        ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False)
    yield
    if started:
        ray.shutdown()


def test_registered_envs_pass_rllibs_check():
    """Both names per task are registered; RLlib's multi-agent check passes on each, with
    the agents `AGENTS` lists and the making task's 17 actions."""
    names = register_rllib_envs()
    assert {"tradearena-making-2", "tradearena-making-takeover"} <= set(names)
    assert len(names) == 8  # 4 tasks x 2
    for seats in ("2", "takeover"):
        env = _global_registry.get(ENV_CREATOR, f"tradearena-making-{seats}")({"n_steps": 5})
        check_multiagent_environments(env)
        assert sorted(env.possible_agents) == sorted(AGENTS[seats])
        assert all(env.get_action_space(a).n == 17 for a in AGENTS[seats])


def test_ppo_config_refuses_unknown_seats_and_batched_adversaries():
    with pytest.raises(UserError, match=r"seats must be one of \['2', 'takeover'\], got '3'"):
        ppo_config(seats="3")
    with pytest.raises(UserError, match="batched sessions seat learners only"):
        ppo_config(seats="takeover", batched=True)


def test_batched_sessions_play_as_the_wrapped_env():
    """Session i of `BatchedMarketEnv` reset with seed 7 gives, step by step, the
    observations and rewards of `MarketParallelEnv` reset with seed 7 + i under the same
    actions; all end at step 5 ("__all__" terminated) and restart on step 6 with rewards 0."""
    n = 3
    batched = BatchedMarketEnv(n, **SHORT)
    singles = [MarketParallelEnv(2, **SHORT) for _ in range(n)]
    obs, infos = batched.reset(seed=7)
    expected = [env.reset(seed=7 + i)[0] for i, env in enumerate(singles)]
    rng = np.random.default_rng(0)
    for step in range(1, 6):
        actions = [dict(zip(AGENTS["2"], rng.integers(17, size=2).tolist())) for _ in range(n)]
        for i, agent in ((i, a) for i in range(n) for a in AGENTS["2"]):
            np.testing.assert_array_equal(obs[i][agent], expected[i][agent])
        obs, rewards, ends, truncated, _ = batched.step(actions)
        for i, env in enumerate(singles):
            expected[i], single_rewards, single_ends, *_ = env.step(actions[i])
            assert rewards[i] == single_rewards
            assert ends[i]["__all__"] is (step == 5) and single_ends["seat_0"] is (step == 5)
            assert truncated[i]["__all__"] is False
    obs, rewards, ends, _, _ = batched.step([{} for _ in range(n)])
    assert rewards == [{"seat_0": 0.0, "seat_1": 0.0}] * n and not any(e["__all__"] for e in ends)


def test_batched_runner_samples_whole_sessions():
    """RLlib's runner over 4 batched sessions of 5 steps: 40 env steps sampled are 8 whole
    sessions, each with 5 steps of both seats."""
    config = ppo_config(market=SHORT, sessions=4, batched=True, hidden=(8,))
    runner = BatchedEnvRunner(config=config)
    episodes = runner.sample(num_timesteps=40)
    done = [e for e in episodes if e.is_done]
    assert len(done) == 8 and sum(len(e) for e in episodes) == 40
    assert all(len(e) == 5 and set(e.agent_episodes) == set(AGENTS["2"]) for e in done)
    assert isinstance(runner, MultiAgentEnvRunner)
    runner.stop()


@pytest.fixture(scope="module")
def trained(local_ray):
    """PPO on tradearena-making-2 (seed 0, one CPU, a local env runner): each seat's mean
    episode return per iteration, and the trained algorithm."""
    config = ppo_config(
        market=LEARN, batch=500, minibatch=125, epochs=10, lr=1e-3, hidden=(32, 32), seed=0
    )
    algo = config.build_algo()
    returns = []
    for _ in range(8):
        runners = algo.train()["env_runners"]
        returns.append({a: float(r) for a, r in runners["agent_episode_returns_mean"].items()})
    yield pd.DataFrame(returns), algo
    algo.stop()


def test_ppo_improves_both_seats(trained):
    """Quoting at random (the first iteration) loses; over the last two of 8 iterations the
    seats' mean episode return recovers at least a third of that loss, and each seat's is
    above its first."""
    returns, _ = trained
    first, last = returns.iloc[0], returns.iloc[-2:].mean()
    assert (first < 0).all(), returns
    assert last.mean() - first.mean() > -first.mean() / 3, returns
    assert (last > first).all(), returns


def test_trained_policy_acts_as_the_module_and_plays_a_tournament(trained, tmp_path):
    """`from_rllib` computes the module's logits (to float32 rounding) and its greedy
    actions exactly; saved and loaded as ``rllib_policy``, it sits frozen in a tournament
    beside built-in strategies, and its records are those of the loaded agent."""
    _, algo = trained
    spec = MarketSpec(task="making", **LEARN)
    module = algo.get_module("seat_0")
    policy = from_rllib(module, spec, seed=1)
    env = MarketParallelEnv(2, market_spec=spec)
    obs = np.stack([env.reset(seed=s)[0]["seat_0"] for s in range(20)])
    with torch.no_grad():
        logits = module.forward_inference({"obs": torch.from_numpy(obs)})["action_dist_inputs"]
    np.testing.assert_allclose(policy.logits(obs), logits.numpy(), rtol=1e-5, atol=1e-5)
    greedy = policy.act_batch(obs, explore=False)
    np.testing.assert_array_equal(greedy, logits.numpy().argmax(axis=1))

    saved = policy.save(tmp_path / "seat_0")
    loaded = agents.load(saved, market=spec)
    np.testing.assert_array_equal(loaded.act_batch(obs, explore=False), greedy)
    config = tmp_path / "t.toml"
    config.write_text(TOURNAMENT.format(saved=saved))
    outcome = run_experiment(config, LocalExecutor(progress=False), out=tmp_path / "run")
    assert outcome.failed == {}
    _, records = load_run(outcome.directory)
    tests = records[records["phase"] == "test"]
    # profiles of 2 seats over 3 strategies: 6, each tested 2 episodes; rllib seats in 3 of them
    assert tests["job_id"].nunique() == 6
    assert (tests["agent"] == "rllib").sum() == 2 * (2 + 1 + 1)
    assert not (records["phase"] == "train").any() or set(
        records.loc[records["phase"] == "train", "agent"]
    ) <= {"hold", "avellaneda_stoikov"}


TOURNAMENT = """\
kind = "tournament"
seeds = 1
[tournament]
players = 2
[market]
task = "making"
population = "light"
n_steps = 10
inventory_penalty = 1e-3
[training]
episodes = 0
[testing]
episodes = 2
[[agents]]
id = "rllib_policy"
label = "rllib"
from = "{saved}"
train = false
[[agents]]
id = "hold"
[[agents]]
id = "avellaneda_stoikov"
"""


def test_the_example_prints_its_iterations_and_no_notice_of_rays_own():
    """examples/rllib_making.py, one short iteration: its own lines only, no warning of Ray's
    (token authentication, the API stack, RLlib's own deprecated path, gputil)."""
    import subprocess
    import sys
    from pathlib import Path

    example = Path(__file__).resolve().parents[2] / "examples" / "rllib_making.py"
    arguments = "--seats 2 --iterations 1 --batch 100 --minibatch 50 --epochs 1 --n-steps 10"
    done = subprocess.run(
        [sys.executable, str(example), *arguments.split()],
        capture_output=True,
        text=True,
        timeout=300,
        env={k: v for k, v in os.environ.items() if k != "RAY_AUTH_MODE"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1].startswith("iteration 1: mean episode return seat_0 ")
    assert done.stderr == ""
