"""Adversaries in experiments: a deep RA3-Q adversary in a robustness run reads the features
it declares; RA3-Q's trader adversary learns when its agent trains."""

from __future__ import annotations

import numpy as np

from tradearena.agents.deep.ra3q import DeepAdversaryPolicy, DeepRA3Q
from tradearena.envs.simulator.features import feature_space
from tradearena.evaluation.experiment.config import parse_config
from tradearena.evaluation.experiment.kinds import run_job
from tradearena.evaluation.experiment.runner import plan

ROBUSTNESS = """\
kind = "robustness"
seeds = 1
[market]
population = "light"
n_steps = 10
reward_scale = 0.01
[training]
episodes = 3
[testing]
episodes = 2
[[agents]]
id = "deep_ra3q"
params = {{ k = 2, hidden = 16, learning_starts = 8, batch_size = 8, buffer_size = 200{extra} }}
[[agents]]
id = "q_learning"
[[perturbations]]
name = "takeover"
type = "adversary"
source = "deep_ra3q"
p = 0.5
[[perturbations]]
name = "trader"
type = "adversary"
mode = "trader"
source = "deep_ra3q"
"""


def test_a_deep_adversary_reads_features_in_a_robustness_run(monkeypatch):
    """The deep adversary trained within deep RA3-Q takes over, and trades against, both
    agents (a tabular one included), always shown the feature vector of the market."""
    seen = []
    act = DeepAdversaryPolicy.act

    def spy(self, obs, explore=False):
        seen.append(obs)
        return act(self, obs, explore)

    monkeypatch.setattr(DeepAdversaryPolicy, "act", spy)
    config = parse_config(ROBUSTNESS.format(extra=""))
    (job,) = plan(config)
    result = run_job(job)
    assert result.error is None, result.error
    test = [r for r in result.records if r.phase == "test"]
    conditions = {(r.agent, r.condition) for r in test}
    assert conditions == {
        (agent, c) for agent in ("deep_ra3q", "q_learning") for c in ("clean", "takeover", "trader")
    }
    space = feature_space()
    assert len(seen) == 2 * 2 * 2 * 10  # (takeover, trader) x 2 agents x 2 episodes x 10 steps
    assert all(space.contains(obs) for obs in seen)


def test_a_trader_adversary_trains_beside_its_agent(monkeypatch):
    """With adversary_mode = "trader" the agent trains against its adversary seated opposite:
    the episode driver calls the adversary's update on every training step."""
    calls = []
    update = DeepRA3Q.update_adversary

    def spy(self, *transition):
        calls.append(transition[2])
        return update(self, *transition)

    monkeypatch.setattr(DeepRA3Q, "update_adversary", spy)
    config = parse_config(ROBUSTNESS.format(extra=', adversary_mode = "trader"'))
    (job,) = plan(config)
    result = run_job(job)
    assert result.error is None, result.error
    train = [r for r in result.records if r.phase == "train" and r.agent == "deep_ra3q"]
    assert len(train) == 3 and len(calls) == 3 * 10  # 3 episodes of 10 steps
    assert all(np.isfinite(calls))
