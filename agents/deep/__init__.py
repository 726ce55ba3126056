"""Deep learners on market features: DQN, Averaged-DQN, deep RAQL, RA2-Q and RA3-Q.

Q-networks are a torso of `agents.deep.encoders` plus linear heads; the replay memory is
`agents.deep.buffers.ReplayBuffer`. Build them by registry id: ``agents.make("dqn",
observation_space=env.observation_space, action_space=env.action_space, seed=0)``.

`raql`, `ra2q` and `ra3q` are the deep forms of `agents.tabular.raql`, `agents.tabular.ra2q`
and `agents.tabular.ra3q`: the same update rules on a network instead of a table.
"""

from tradearena.agents.deep.averaged_dqn import AveragedDQN
from tradearena.agents.deep.dqn import DQN
from tradearena.agents.deep.ra2q import DeepRA2Q
from tradearena.agents.deep.ra3q import DeepAdversaryPolicy, DeepRA3Q
from tradearena.agents.deep.raql import DeepRAQL

__all__ = ["DQN", "AveragedDQN", "DeepAdversaryPolicy", "DeepRA2Q", "DeepRA3Q", "DeepRAQL"]
