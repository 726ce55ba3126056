"""Deep learners on market features: DQN, Averaged-DQN, deep RAQL, RA2-Q and RA3-Q.

Q-networks are a torso of `agents.deep.encoders` plus linear heads; the replay memory is
`agents.deep.buffers.ReplayBuffer`. Build them by registry id: ``agents.make("dqn",
observation_space=env.observation_space, action_space=env.action_space, seed=0)``.
"""

from tradearena.agents.cpu import pin_cpu_arithmetic

pin_cpu_arithmetic()  # before torch computes anything: the same numbers on every AVX2 machine

from tradearena.agents.deep.averaged_dqn import AveragedDQN  # noqa: E402
from tradearena.agents.deep.dqn import DQN  # noqa: E402
from tradearena.agents.deep.ra2q import DeepRA2Q  # noqa: E402
from tradearena.agents.deep.ra3q import DeepAdversaryPolicy, DeepRA3Q  # noqa: E402
from tradearena.agents.deep.raql import DeepRAQL  # noqa: E402

__all__ = ["DQN", "AveragedDQN", "DeepAdversaryPolicy", "DeepRA2Q", "DeepRA3Q", "DeepRAQL"]
