"""torch's CPU arithmetic alike on every x86-64 processor with AVX2, Intel's and AMD's
(`tradearena.envs.cpu`): the kernels pinned, and no step of a learner resting on the
processor's own estimates.

No digest is stored here: a digest holds only where it was made, and a stored one stopped
`make test` on AMD processors. What was different there is the optimizer: torch's Adam took
its square roots from MKL's vector library, which starts from the processor's estimate of
1/sqrt (``rsqrtps``, whose bits differ between Intel's and AMD's processors) and refines
it once, so that one root in six was a last bit off the correctly rounded one, and off in
another place on the other maker's processor. The learners' Adam is torch's fused kernel,
whose square root is the processor's exact one (`agents.deep.dqn.DQN.optimizer`). So the tests
ask what holds on any processor: the optimizer's step is IEEE arithmetic to the bit, each op
of a training step is within float32 rounding of float64 arithmetic, and a run gives the
same network in a process whose libraries would pick other kernels.

Run as a script, this file prints the digest of each op of one training step on fixed
inputs (and of the market's observations), then the network 300 steps of the quickstart's
DQN give, as JSON: two machines that print the same lines compute alike, and the first line
that differs names the op that does not.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
import torch
from torch.nn import functional as F

from tradearena import agents
from tradearena.agents.deep.buffers import ReplaySamples
from tradearena.envs.cpu import (
    OPT_OUT,
    PINNED,
    CpuSettingWarning,
    has_avx2,
    pin_cpu_arithmetic,
)

STEPS = 300
"""Environment steps (5 sessions of 60), 250 of them gradient steps."""
PINNED_HERE = has_avx2() and os.environ.get(OPT_OUT, "").lower() != "native"
F32 = np.float32


def market() -> gym.Env:
    """The quickstart's market (`configs/quickstart.toml`)."""
    return gym.make(
        "tradearena/MarketMaking-v0",
        observation="features",
        n_steps=60,
        reward_scale=0.01,
        inventory_penalty=2e-5,
    )


def digest(*arrays) -> str:
    """The first 16 hex digits of the SHA-256 of the arrays' bytes."""
    joined = b"".join(np.ascontiguousarray(np.asarray(a)).tobytes() for a in arrays)
    return hashlib.sha256(joined).hexdigest()[:16]


def train() -> dict:
    """The quickstart's DQN (its market, its defaults, learning from the 51st step at every
    step) after `STEPS` steps on one torch thread, as a job runs: the greedy values of the
    first four actions at the first observation of session 1000 ($ x 0.01 a step) and the
    digest of the online network's arrays."""
    torch.set_num_threads(1)
    env = market()
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
    obs, _ = env.reset(seed=1000)
    network = [state[k] for k in sorted(state) if k.startswith("q_net.")]
    return {"values": agent.values(obs)[:4].tolist(), "digest": digest(*network)}


# ----------------------------------------------------------------------- one step, op by op
def fixed_learner() -> tuple:
    """A DQN of the quickstart's shapes (7 features, 17 actions), its input moments set, and
    a minibatch of 64 fixed transitions: (agent, batch)."""
    rng = np.random.default_rng(7)
    agent = agents.make("dqn", obs_shape=(7,), n_actions=17, seed=3)
    rows = rng.normal(size=(500, 7)) * [0.3, 2.0, 1.5, 4.0, 8.0, 0.2, 0.5] + [0, 0, 3, 0, 0, 0, 0.5]
    agent.obs_moments.update(rows)
    agent.reward_moments.update(rng.normal(scale=0.02, size=500))
    agent.q_net.normalizer.set(agent.obs_moments)
    batch = ReplaySamples(
        observations=torch.from_numpy(rows[:64].astype(F32)),
        actions=torch.from_numpy(rng.integers(17, size=64)),
        rewards=torch.from_numpy(rng.normal(scale=0.02, size=64).astype(F32)),
        next_observations=torch.from_numpy(rows[64:128].astype(F32)),
        terminated=torch.from_numpy((rng.random(64) < 0.05).astype(F32)),
        masks=None,
    )
    return agent, batch


def step_ops(agent, batch: ReplaySamples) -> dict[str, np.ndarray]:
    """Each op of `DQN.train_step` on ``batch``, in order, as float32 arrays: the forward
    pass layer by layer, the TD target, the loss, every weight's gradient, the gradients
    clipped, and the weights after Adam's step. The forward pass is spelled out layer by
    layer and must give the network's own values to the bit."""
    net, ops = agent.q_net, {}
    with torch.no_grad():
        y = agent._bootstrap(batch.next_observations)
        y = (
            batch.rewards.unsqueeze(1) / float(agent.reward_moments.std)
            + agent.settings.gamma * (1.0 - batch.terminated).unsqueeze(1) * y
        )
    h = net.normalizer(batch.observations)
    ops["input standardised"] = h
    layers = [m for m in net.torso.net if isinstance(m, torch.nn.Linear)]
    for i, layer in enumerate(layers, 1):
        h = torch.relu(F.linear(h, layer.weight, layer.bias))
        ops[f"layer {i}: relu(W x + b)"] = h
    q = F.linear(h, net.head.weight, net.head.bias)
    assert torch.equal(q, net(batch.observations)[:, 0]), "the layers do not add up to the net"
    ops["Q(s, .)"] = q
    ops["TD target"] = y[:, 0]
    q_sa = q.gather(1, batch.actions.view(-1, 1))
    loss = agent.loss(q_sa, y, None)
    ops["loss"] = loss
    for weight in agent.weights:
        weight.grad = None
    loss.backward()
    names = [name for name, _ in net.named_parameters()]
    ops |= {f"grad {n}": w.grad.clone() for n, w in zip(names, agent.weights)}
    torch.nn.utils.clip_grad_norm_(agent.weights, agent.settings.max_grad_norm)
    ops |= {f"clipped grad {n}": w.grad.clone() for n, w in zip(names, agent.weights)}
    agent.optimizer.step()
    ops |= {f"Adam step {n}": w for n, w in zip(names, agent.weights)}
    return {name: value.detach().numpy().copy() for name, value in ops.items()}


def step_reference(agent, batch: ReplaySamples) -> dict[str, np.ndarray]:
    """`step_ops` in float64 numpy, from the same float32 weights and inputs (read before
    the step): the forward pass, its gradients by hand, the clipping and Adam's first step
    (lr 1e-3, betas 0.9 and 0.999, eps 1e-8)."""
    net, ref = agent.q_net, {}
    w, target = (
        {n: a.numpy().astype(np.float64) for n, a in m.state_dict().items()}
        for m in (net, agent.q_target)
    )
    x, x_next = (
        t.numpy().astype(np.float64) for t in (batch.observations, batch.next_observations)
    )
    layers = sorted({n.rsplit(".", 1)[0] for n in w if n.startswith("torso.")})

    def forward(arrays, x):
        standard = (x - arrays["normalizer.mean"]) / arrays["normalizer.std"]
        hs = [np.clip(standard, -10, 10)]
        for layer in layers:
            hs.append(np.maximum(hs[-1] @ arrays[f"{layer}.weight"].T + arrays[f"{layer}.bias"], 0))
        return hs, hs[-1] @ arrays["head.weight"].T + arrays["head.bias"]

    hs, q = forward(w, x)
    ref["input standardised"] = hs[0]
    ref |= {f"layer {i}: relu(W x + b)": h for i, h in enumerate(hs[1:], 1)}
    ref["Q(s, .)"] = q
    live = 1.0 - batch.terminated.numpy().astype(np.float64)
    sd = float(agent.reward_moments.std)
    rewards = batch.rewards.numpy().astype(np.float64)
    y = rewards / sd + agent.settings.gamma * live * forward(target, x_next)[1].max(axis=1)
    ref["TD target"] = y
    actions = batch.actions.numpy()
    residual = q[np.arange(len(q)), actions] - y
    ref["loss"] = np.mean(0.5 * residual**2)
    # backward: d loss / d Q(s, a) = residual / B, then layer by layer
    d = np.zeros_like(q)
    d[np.arange(len(q)), actions] = residual / len(q)
    grads = {"head.weight": d.T @ hs[-1], "head.bias": d.sum(axis=0)}
    d = d @ w["head.weight"]
    for i in range(len(layers), 0, -1):
        d = d * (hs[i] > 0)
        grads[f"{layers[i - 1]}.weight"] = d.T @ hs[i - 1]
        grads[f"{layers[i - 1]}.bias"] = d.sum(axis=0)
        d = d @ w[f"{layers[i - 1]}.weight"]
    names = [name for name, _ in net.named_parameters()]
    ref |= {f"grad {n}": grads[n] for n in names}
    norm = math.sqrt(sum(float((g**2).sum()) for g in grads.values()))
    scale = min(agent.settings.max_grad_norm / (norm + 1e-6), 1.0)
    clipped = {n: g * scale for n, g in grads.items()}
    ref |= {f"clipped grad {n}": clipped[n] for n in names}
    lr = agent.settings.learning_rate  # Adam's first step: m = 0.1 g, v = 0.001 g^2, unbiased
    ref |= {f"Adam step {n}": w[n] - lr * clipped[n] / (np.abs(clipped[n]) + 1e-8) for n in names}
    return ref


def test_each_op_of_a_training_step_is_float64_arithmetic_to_float32_rounding():
    """Every op of a training step, forward and backward, on fixed inputs, agrees with float64
    arithmetic within float32 rounding (relative 1e-5 of the op's scale): a kernel that
    computed something else on some processor would be told here, on any processor."""
    agent, batch = fixed_learner()
    reference = step_reference(agent, batch)
    ops = step_ops(agent, batch)
    assert list(ops) == list(reference) and len(ops) == 24
    for name, got in ops.items():
        want = reference[name]
        assert got.shape == np.shape(want) and got.dtype == F32, name
        scale = float(np.max(np.abs(want)))
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * scale, err_msg=name)


def fused_adam(
    weight: np.ndarray, grads: list[np.ndarray], lr: float = 1e-3, eps: float = 1e-8
) -> np.ndarray:
    """``weight`` after Adam's steps on ``grads`` (betas 0.9 and 0.999), in IEEE float32
    arithmetic as torch's fused kernel orders it (its compiler fuses two multiply-adds, each
    rounded once: here in float64, where the product is exact, then to float32); every
    square root the correctly rounded one."""

    def fma(a, b, c) -> np.ndarray:
        exact = np.asarray(a, np.float64) * np.asarray(b, np.float64)
        return (exact + np.asarray(c, np.float64)).astype(F32)

    m, v = np.zeros_like(weight), np.zeros_like(weight)
    for step, g in enumerate(grads, 1):
        step_size = F32(-(lr / (1 - 0.9**step)))
        m = fma(F32(1 - 0.9), g - m, m)
        v = fma(F32(1 - 0.999) * g, g, v * F32(0.999))
        denom = np.sqrt(v) / F32(math.sqrt(1 - 0.999**step)) + F32(eps)
        weight = weight + step_size * m / denom
    return weight


@pytest.mark.skipif(not PINNED_HERE, reason="kernels not pinned: no AVX2, or TRADEARENA_CPU=native")
def test_the_optimizers_step_is_ieee_float32_arithmetic_to_the_bit():
    """Five Adam steps of a learner's optimizer, every weight of its network (the vector
    loop and the scalar tail of 17 biases): equal to the bit to `fused_adam`'s, so no
    square root comes from the processor's estimate (with MKL's, one root in six was off)."""
    agent = agents.make("dqn", obs_shape=(7,), n_actions=17, seed=0)
    rng = np.random.default_rng(5)
    start = [w.detach().numpy().copy() for w in agent.weights]
    steps = [
        [rng.normal(scale=0.3, size=w.shape).astype(F32) for w in agent.weights] for _ in range(5)
    ]
    for grads in steps:
        for weight, grad in zip(agent.weights, grads):
            weight.grad = torch.from_numpy(grad.copy())
        agent.optimizer.step()
    for i, (weight, first) in enumerate(zip(agent.weights, start)):
        want = fused_adam(first, [grads[i] for grads in steps])
        assert np.array_equal(weight.detach().numpy(), want), tuple(weight.shape)


# ------------------------------------------------------------------------ a run, two ways
@pytest.mark.skipif(not PINNED_HERE, reason="kernels not pinned: no AVX2, or TRADEARENA_CPU=native")
def test_a_process_that_picks_other_kernels_gives_the_same_network():
    """The quickstart's DQN, 300 steps, here and in a process whose libraries would pick
    other kernels (ATen's capability lowered, MKL's dispatch capped at AVX2 as on a
    processor without AVX-512, oneDNN's raised): the same values and network, to the bit."""
    other = {"ATEN_CPU_CAPABILITY": "default", "MKL_ENABLE_INSTRUCTIONS": "AVX2"}
    other["ONEDNN_MAX_CPU_ISA"] = "AVX512_CORE"
    done = subprocess.run(
        [sys.executable, __file__, "--run"],
        env={**os.environ, "OMP_NUM_THREADS": "1", **other},
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    here = train()
    assert json.loads(done.stdout.splitlines()[-1]) == here
    assert math.isfinite(here["values"][0]) and len(here["digest"]) == 16


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


def print_digests() -> None:
    """Each op's digest, one line each: the market's first 300 observations and rewards,
    the network as initialised, then every op of one training step on fixed inputs."""
    env, rows = market(), []
    for session in range(STEPS // 60):
        obs, _ = env.reset(seed=session)
        done = False
        while not done:  # the actions in turn, a fixed sequence
            action = len(rows) % env.action_space.n
            obs, reward, terminated, truncated, _ = env.step(action)
            rows.append(np.append(obs, reward))
            done = terminated or truncated
    print(f"{'market: observations and rewards':48} {digest(np.array(rows))}")
    agent, batch = fixed_learner()
    print(f"{'network as initialised':48} {digest(*[w.detach().numpy() for w in agent.weights])}")
    for name, value in step_ops(agent, batch).items():
        print(f"{name:48} {digest(value)}")


if __name__ == "__main__":
    if "--run" not in sys.argv:
        print_digests()
    print(json.dumps(train()))
