"""Each tabular learner's actions and tables over one fixed run, held to the bit.

A run is 400 steps of a small random MDP (5 states, 3 actions, rewards in quarters, a session
ending with probability 1/20), the learner acting with exploration and learning from every
step; an RA3-Q adversary of its own seat learns from the seat's steps. Its fingerprint is a
SHA-256 of the actions taken and every array of the learner's `state_dict` (dtype and bytes).
The utilities are the identity and piecewise-linear ones, the step sizes 1/N or constant and
the exploration constant or linear, so that every number is a sum, product or quotient of
float64s (the compiled kernels are built without contracted multiply-adds): the fingerprints
are the same on every platform. A change of a learner's code that is meant to keep its
numbers keeps them.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

from tradearena import agents

AVERSE = {"name": "piecewise_linear", "kappa": 0.3}
SEEKING = {"name": "piecewise_linear", "kappa": -0.3}
N_STATES, N_ACTIONS, STEPS = 5, 3, 400

RUNS: dict[str, tuple[str, dict[str, Any], str]] = {
    "q_learning": ("q_learning", {}, "830742cc6de0895b"),
    "q_learning, constant step, linear exploration": (
        "q_learning",
        {"learning_rate": 0.1, "exploration": ("linear", 1.0, 0.05, 200)},
        "fa59429445044eed",
    ),
    "raql": ("raql", {"utility": AVERSE}, "b7ddc9428a533ded"),
    "averaged_q": ("averaged_q", {"n_snapshots": 3, "snapshot_period": 7}, "5f7d017b77bfee06"),
    "averaged_q, online included": (
        "averaged_q",
        {"n_snapshots": 2, "snapshot_period": 5, "include_online": True},
        "1b5dfe382ac19cae",
    ),
    "vql": ("vql", {"epoch_length": 50, "n_recenter": 4}, "c1c3695a62136aa9"),
    "vql, epoch count": ("vql", {"epoch_length": 40, "step_count": "epoch"}, "9e004784a6500d8e"),
    "ra2q": ("ra2q", {"k": 4, "utility": AVERSE}, "010b91127deb31cd"),
    "ra2q, a head per episode": (
        "ra2q",
        {"k": 3, "head_per_episode": True, "utility": AVERSE},
        "ea8bcae09868073e",
    ),
    "ra21q": (
        "ra21q",
        {"k": 3, "epoch_length": 60, "n_recenter": 5, "utility": AVERSE},
        "e6f5d8b10cfb55c5",
    ),
    "ra3q, takeover, robust targets": (
        "ra3q",
        {"k": 3, "p_adv": 0.3, "utility": AVERSE, "adversary_utility": SEEKING},
        "a051fa0ebecfb9e9",
    ),
    "ra3q, takeover, the protagonist learning from all": (
        "ra3q",
        {
            "k": 3,
            "p_adv": 0.3,
            "utility": AVERSE,
            "adversary_utility": SEEKING,
            "robust_target": False,
            "protagonist_learns_all": True,
        },
        "eef4cc035d9ea2f6",
    ),
    "ra3q, trader": (
        "ra3q",
        {"k": 3, "adversary_mode": "trader", "utility": AVERSE, "adversary_utility": SEEKING},
        "f889a3fe7fd2db77",
    ),
    "ra3q, no adversary": (
        "ra3q",
        {"k": 3, "adversary_mode": None, "utility": AVERSE},
        "f88dcc3e132f5d6e",
    ),
}
"""Name -> (registry id, parameters, the fingerprint's first 16 hex digits)."""


def fingerprint(agent_id: str, params: dict[str, Any]) -> str:
    """The first 16 hex digits of the run's SHA-256 (see the module docstring)."""
    env = np.random.default_rng(11)
    rewards = env.integers(-8, 9, size=(N_STATES, N_ACTIONS)) / 4.0
    agent = agents.make(agent_id, n_states=N_STATES, n_actions=N_ACTIONS, seed=3, **params)
    seat = agent.trader_adversary(seed=4) if hasattr(agent, "trader_adversary") else None
    actions, s = [], 0
    for _ in range(STEPS):
        a = agent.act(s)
        s2, terminated = int(env.integers(N_STATES)), bool(env.random() < 0.05)
        agent.update(s, a, rewards[s, a], s2, terminated, False)
        actions.append(a)
        if seat is not None:
            b = seat.act(s)
            seat.update(s, b, -rewards[s, b], s2, terminated, False)
            actions.append(b)
        if terminated:
            agent.end_episode()
        s = 0 if terminated else s2
    digest = hashlib.sha256(np.array(actions, np.int64).tobytes())
    for key, value in sorted(agent.state_dict().items()):
        array = np.asarray(value)
        if array.dtype.kind in "biuf":
            digest.update(f"{key}:{array.dtype}".encode())
            digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()[:16]


@pytest.mark.parametrize("name", list(RUNS))
def test_a_learners_fixed_run_is_the_same_to_the_bit(name):
    agent_id, params, expected = RUNS[name]
    assert fingerprint(agent_id, params) == expected


def test_the_fingerprints_do_not_rest_on_the_processors_vector_units():
    """The same fingerprints with numpy's AVX2 and AVX-512 kernels switched off (its
    baseline, x86-64-v2, in a process of its own): a processor of another maker or width
    that takes other vector paths gets the same bits."""
    script = (
        "import json, numpy\n"
        "from tests.agents.test_fixed_runs import RUNS, fingerprint\n"
        "assert not numpy._core._multiarray_umath.__cpu_features__['X86_V3']\n"
        "print(json.dumps({n: fingerprint(a, p) for n, (a, p, _) in RUNS.items()}))\n"
    )
    off = "X86_V3 X86_V4 AVX512_ICL AVX512_SPR"
    env = {**os.environ, "NPY_DISABLE_CPU_FEATURES": off}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout) == {name: run[2] for name, run in RUNS.items()}
