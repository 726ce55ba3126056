"""torch's CPU kernels pinned (`tradearena.envs.cpu`): the quickstart's DQN, trained 300 steps
in the quickstart's market, gives the stored network to the bit, and so does a process whose
processor would pick other kernels (simulated: ATen's capability forced lower, MKL's dispatch
capped at AVX2 as on a processor without AVX-512, oneDNN's raised).

Unpinned (``TRADEARENA_CPU=native``) on an AVX-512 processor the same 300 steps give another
network (a first value of 0.00216142 against the stored 0.00214959), and capping MKL at AVX2
(0.002149586), or ATen at its default kernels, gives two more: the test tells them apart.
Run as a script, this file prints the numbers of this machine as JSON.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
import torch

from tradearena import agents
from tradearena.envs.cpu import (
    OPT_OUT,
    PINNED,
    CpuSettingWarning,
    has_avx2,
    pin_cpu_arithmetic,
)

STEPS = 300
"""Environment steps (5 sessions of 60), 250 of them gradient steps."""
STORED = {
    "values": [
        0.002149587031453848,
        -0.013512835837900639,
        -0.007059841882437468,
        -0.008917095139622688,
    ],
    "digest": "301f2ed6a74c6f3a",
}
"""The greedy values of the first four actions (of 17) at the first observation of session
1000 ($ x 0.01 a step) and the first 16 hex digits of the SHA-256 of the online network's
arrays."""
PINNED_HERE = has_avx2() and os.environ.get(OPT_OUT, "").lower() != "native"


def train() -> dict:
    """The quickstart's DQN (its market, its defaults, learning from the 51st step at every
    step) after `STEPS` steps on one torch thread, as a job runs: its values and its
    network's digest, as `STORED`."""
    torch.set_num_threads(1)
    env = gym.make(
        "tradearena/MarketMaking-v0",
        observation="features",
        n_steps=60,
        reward_scale=0.01,
        inventory_penalty=2e-5,
    )
    agent = agents.make(
        "dqn",
        observation_space=env.observation_space,
        action_space=env.action_space,
        seed=0,
        total_timesteps=STEPS,
        learning_starts=50,
        train_freq=1,
    )
    for session in range(STEPS // 60):
        obs, _ = env.reset(seed=session)
        done = False
        while not done:
            action = agent.act(obs)
            following, reward, terminated, truncated, _ = env.step(action)
            agent.update(obs, action, reward, following, terminated, truncated)
            obs, done = following, terminated or truncated
        agent.end_episode()
    state = agent.state_dict()
    arrays = b"".join(
        np.ascontiguousarray(state[k]).tobytes() for k in sorted(state) if k.startswith("q_net.")
    )
    obs, _ = env.reset(seed=1000)
    values = agent.values(obs)[:4].tolist()
    return {"values": values, "digest": hashlib.sha256(arrays).hexdigest()[:16]}


@pytest.mark.skipif(not PINNED_HERE, reason="kernels not pinned: no AVX2, or TRADEARENA_CPU=native")
def test_the_quickstarts_dqn_gives_the_stored_network():
    assert train() == STORED


@pytest.mark.skipif(not PINNED_HERE, reason="kernels not pinned: no AVX2, or TRADEARENA_CPU=native")
def test_a_processor_that_picks_other_kernels_gives_the_same_network():
    other = {"ATEN_CPU_CAPABILITY": "default", "MKL_ENABLE_INSTRUCTIONS": "AVX2"}
    other["ONEDNN_MAX_CPU_ISA"] = "AVX512_CORE"
    done = subprocess.run(
        [sys.executable, __file__],
        env={**os.environ, "OMP_NUM_THREADS": "1", **other},
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert json.loads(done.stdout.splitlines()[-1]) == STORED


def test_the_pin_sets_its_variables_over_others_unless_told_not_to(monkeypatch):
    monkeypatch.setattr("tradearena.envs.cpu.has_avx2", lambda: True)
    environ = {"ATEN_CPU_CAPABILITY": "avx512", "PATH": "/bin"}
    assert pin_cpu_arithmetic(environ) == dict(PINNED)
    assert environ == {**PINNED, "PATH": "/bin"}
    native = {OPT_OUT: "native", "ATEN_CPU_CAPABILITY": "avx512"}
    assert pin_cpu_arithmetic(native) == {} and native["ATEN_CPU_CAPABILITY"] == "avx512"
    monkeypatch.setattr("tradearena.envs.cpu.has_avx2", lambda: False)
    assert pin_cpu_arithmetic(environ := {}) == {} and environ == {}


@pytest.mark.parametrize("setting", ["natve", "0", "off", "avx512"])
def test_another_setting_than_native_is_warned_of_and_pins(setting, monkeypatch):
    """``TRADEARENA_CPU`` set to anything but ``native`` (a typo, "off"): a warning naming
    the variable and its value (it meant the default silently), and the kernels pinned."""
    monkeypatch.setattr("tradearena.envs.cpu.has_avx2", lambda: True)
    environ = {OPT_OUT: setting}
    with pytest.warns(CpuSettingWarning) as caught:
        assert pin_cpu_arithmetic(environ) == dict(PINNED)
    assert str(caught[0].message) == (
        f"TRADEARENA_CPU={setting!r} is not 'native': the kernels stay pinned (set it to native "
        "for the libraries' own, or unset it)"
    )


def test_avx2_is_an_x86_64_question(monkeypatch):
    monkeypatch.setattr("platform.machine", lambda: "arm64")
    assert not has_avx2()


if __name__ == "__main__":
    print(json.dumps(train()))
