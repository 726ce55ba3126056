"""The agent contract over every registry id, plus registry and state_dict errors."""

import pickle

import numpy as np
import pytest

from tradearena import agents
from tradearena.agents.base import STANDARD_KEYWORDS, Agent, make_rng
from tradearena.agents.tabular._base import TabularAgent
from tradearena.envs.tasks import TASKS
from tradearena.envs.trading_env import TradingEnv

TABULAR_ENV = TradingEnv(observation="tabular")
FEATURE_ENV = TradingEnv()


def _build(name):
    cls = agents.resolve(name)
    if cls.__module__.startswith("tradearena.agents.tabular"):
        env = TABULAR_ENV
        params = {"observation_space": env.observation_space, "action_space": env.action_space}
        return env, {**params, "seed": 5}
    seed = {"seed": 5} if cls.stochastic else {}
    if "market_spec" in cls.takes:  # a task's reference policy or hybrid, in its task
        env = TradingEnv(**TASKS[cls.task].gym_keywords())
        return env, {"market_spec": env.market_spec, **seed}
    return FEATURE_ENV, seed


@pytest.mark.parametrize("name", agents.names())
def test_contract(name):
    env, params = _build(name)
    agents.check_agent(agents.resolve(name), env, steps=25, **params)


def test_names_and_descriptions():
    expected = {"q_learning", "raql", "averaged_q", "vql", "ra2q", "ra21q", "ra3q", "ra3q_minimax"}
    expected |= {"random", "hold", "buy_and_hold", "momentum", "mean_reversion"}
    assert expected | {"zero_intelligence"} <= set(agents.names())
    assert all(isinstance(text, str) and text for text in agents.describe().values())


def test_unknown_and_custom_names():
    with pytest.raises(ValueError, match="unknown agent 'nope'; known ids: .*raql"):
        agents.make("nope")
    assert isinstance(agents.make("tradearena.agents.baselines:Hold"), Agent)
    with pytest.raises(ValueError, match="cannot load agent"):
        agents.make("tradearena.agents.baselines:Missing")
    with pytest.raises(ValueError, match="not a subclass of agents.Agent"):
        agents.make("numpy:ndarray")
    with pytest.raises(ValueError, match="n_states"):
        agents.make("raql", n_actions=3)


class OnlySeed(Agent):
    """A custom agent taking only ``seed``."""

    stochastic = True

    def __init__(self, seed=None):
        self.rng = make_rng(seed)

    def act(self, obs, explore=True):
        return int(self.rng.integers(3))


class Forwarding(OnlySeed):
    """Forwards ``**params`` to its base: takes what the base takes."""

    def __init__(self, *, extra=0, **params):
        super().__init__(**params)


class NoKeywords(Agent):
    def act(self, obs, explore=True):
        return 1


def test_make_passes_each_agent_the_standard_keywords_it_takes():
    standard = {
        "observation_space": FEATURE_ENV.observation_space,
        "action_space": FEATURE_ENV.action_space,
        "seed": 3,
    }
    assert OnlySeed.takes == Forwarding.takes == {"seed"}
    assert NoKeywords.takes == frozenset()
    assert agents.resolve("raql").takes == STANDARD_KEYWORDS - {"market_spec", "total_timesteps"}
    assert agents.resolve("deep_ra3q").takes == STANDARD_KEYWORDS - {"market_spec"}
    assert agents.resolve("avellaneda_stoikov").takes == {"market_spec"}
    for made in (
        agents.make(f"{__name__}:OnlySeed", **standard),
        agents.make(f"{__name__}:Forwarding", **standard, extra=1),
    ):
        reference = OnlySeed(seed=3)  # seeded by make
        assert [made.act(None) for _ in range(5)] == [reference.act(None) for _ in range(5)]
    assert isinstance(agents.make(f"{__name__}:NoKeywords", **standard), NoKeywords)
    with pytest.raises(ValueError, match=r"agent 'raql': .*'bogus'"):
        agents.make("raql", n_states=2, n_actions=2, bogus=1)
    with pytest.raises(ValueError, match=r"agent 'dqn': .*'bogus'"):
        agents.make("dqn", bogus=1)
    with pytest.raises(ValueError, match=r":OnlySeed': .*'bogus'"):
        agents.make(f"{__name__}:OnlySeed", bogus=1)


def test_state_dict_errors_name_keys():
    agent = agents.make("ra2q", n_states=4, n_actions=3, seed=0)
    state = agent.state_dict()
    with pytest.raises(ValueError, match=r"unknown keys \['extra'\]"):
        agent.load_state_dict({**state, "extra": 1})
    del state["tables.q"]
    with pytest.raises(ValueError, match=r"missing keys \['tables.q'\]"):
        agent.load_state_dict(state)
    state = agent.state_dict()
    state["tables.q"] = np.zeros((1, 1))
    with pytest.raises(ValueError, match="shape"):
        agent.load_state_dict(state)


def test_ra3q_adversary_policy_in_takeover_market():
    env = TradingEnv(observation="tabular")
    agent = agents.make(
        "ra3q", observation_space=env.observation_space, action_space=env.action_space, seed=1
    )
    agents.check_agent(agent, env, steps=10)
    policy = pickle.loads(pickle.dumps(agent)).adversary_policy(seed=0)
    market = TradingEnv(observation="tabular", adversary=policy, adversary_p=0.5)
    obs, _ = market.reset(seed=0)
    for _ in range(5):
        obs, *_ = market.step(agent.act(obs, explore=False))


class Broken(Agent):
    """Uses global numpy randomness: must fail the same-seed check."""

    def act(self, obs, explore=True):
        return int(np.random.randint(3))  # noqa: NPY002 (the point of this test)


def test_check_agent_reports_global_randomness():
    with pytest.raises(agents.AgentContractError, match="same seed"):
        agents.check_agent(Broken, FEATURE_ENV, steps=40)


def _defined_by(cls: type, attribute: str) -> type:
    """The class of ``cls``'s MRO whose body defines ``attribute``."""
    return next(c for c in cls.__mro__ if attribute in vars(c))


@pytest.mark.parametrize("name", agents.names())
def test_declared_fast_paths_and_adversaries_match_what_the_class_writes(name):
    """What an agent declares holds: a tabular learner with ``batched_update`` takes its TD
    rule, `learn`, and `apply_batch` from one class and `update` from `TabularAgent`, one with
    ``batched_act`` acts as `TabularAgent.act`; an
    agent that ``trains_adversary`` writes `adversary_policy`, and one that does not keeps the
    base's; only learners update."""
    cls = agents.resolve(name)
    if issubclass(cls, TabularAgent):
        if cls.batched_update:
            assert _defined_by(cls, "learn") is _defined_by(cls, "apply_batch")
            assert cls.update is TabularAgent.update
        assert cls.batched_act == (cls.act is TabularAgent.act)
    assert (_defined_by(cls, "adversary_policy") is not Agent) == cls.trains_adversary
    assert cls.learning or cls.update is Agent.update


class SizedByName(Agent):
    """Asks for its sizes under names no caller offers."""

    def __init__(self, n_states, n_actions, seed=None):
        self.q = np.zeros((n_states, n_actions))

    def act(self, obs, explore=True):
        return int(self.q[obs].argmax())


class Unflagged(Agent):
    """Writes update but leaves learning False: the batched driver would skip it."""

    observation = "tabular"
    _state = ("q",)

    def __init__(self, *, observation_space, action_space, seed=None):
        self.q = np.zeros((observation_space.n, action_space.n))

    def act(self, obs, explore=True):
        return int(self.q[obs].argmax())

    def update(self, obs, action, reward, next_obs, terminated, truncated):
        self.q[obs, action] += reward


class RewrittenQ(agents.resolve("q_learning")):
    """Changes Q-learning's update but keeps its batch form."""

    def update(self, obs, action, reward, next_obs, terminated, truncated):
        super().update(obs, action, 2 * reward, next_obs, terminated, truncated)


class RelearnedQ(agents.resolve("q_learning")):
    """Changes Q-learning's TD rule but keeps its batch form."""

    def learn(self, t):
        s, a, r, s2, terminated, g = t
        super().learn((s, a, 2 * r, s2, terminated, g))


def test_check_agent_names_a_learner_that_would_not_learn_in_batched_markets():
    """An `update` needs ``learning = True``, and a changed tabular `update` or TD rule
    (``learn``) needs ``batched_update = False``: else several sessions ([training] sessions
    > 1) skip it."""
    spaces = {"observation_space": TABULAR_ENV.observation_space}
    spaces["action_space"] = TABULAR_ENV.action_space
    with pytest.raises(agents.AgentContractError, match=r"^Unflagged defines update but leaves"):
        agents.check_agent(Unflagged, TABULAR_ENV, **spaces)
    with pytest.raises(agents.AgentContractError, match=r"^RewrittenQ changes update but keeps"):
        agents.check_agent(RewrittenQ, TABULAR_ENV, **spaces, seed=0)
    with pytest.raises(agents.AgentContractError, match=r"^RelearnedQ changes learn but keeps"):
        agents.check_agent(RelearnedQ, TABULAR_ENV, **spaces, seed=0)
    Unflagged.learning = True
    try:
        assert agents.check_agent(Unflagged, TABULAR_ENV, steps=5, **spaces).learning
    finally:
        del Unflagged.learning


def test_check_agent_says_which_keywords_a_constructor_is_offered():
    with pytest.raises(agents.AgentContractError) as raised:
        agents.check_agent(SizedByName, TABULAR_ENV, seed=0)
    message = str(raised.value)
    assert message.startswith("SizedByName(seed=...) fails: ")
    assert "'n_states' and 'n_actions'" in message and "\n" not in message
    assert "offered action_space, market_spec, observation_space, seed, total_timesteps" in message
