"""Saved agents: every registered id round-trips draw by draw; bad files are named errors."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest
import torch

from tradearena import agents
from tradearena.agents.saving import ARRAYS, HEADER, project_version
from tradearena.envs.seats import observation_kind
from tradearena.envs.spec import MarketSpec
from tradearena.envs.tasks import TASKS
from tradearena.envs.trading_env import TradingEnv

SMALL_DEEP = {
    "hidden": 8,
    "buffer_size": 64,
    "learning_starts": 8,
    "batch_size": 4,
    "train_freq": 2,
    "target_update_interval": 6,
    "total_timesteps": 60,
}
"""Deep learners that fill their memory, train, sync and wrap their buffer within 60 steps."""


def market_of(name: str) -> MarketSpec:
    """The market of the agent's task (a reference policy's), else the light taker market."""
    task = TASKS[getattr(agents.resolve(name), "task", "taker")]
    return MarketSpec(**{**task.gym_keywords(), "population": "light", "n_steps": 12})


def build(name: str, market: MarketSpec | None = None) -> agents.Agent:
    """``name`` as the engine builds it: spaces, seed and market spec; small deep networks."""
    market = market or market_of(name)
    cls = agents.resolve(name)
    deep = cls.__module__.startswith("tradearena.agents.deep")
    return agents.make(
        name,
        observation_space=market.observation_space(observation_kind(cls)),
        action_space=market.action_space,
        seed=7,
        market_spec=market,
        **(SMALL_DEEP if deep else {}),
    )


def env_of(agent: agents.Agent, market: MarketSpec) -> TradingEnv:
    return TradingEnv(market_spec=market, observation=agent.observation)


def same_state(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(
        np.array_equal(a[k], b[k]) if isinstance(a[k], np.ndarray) else a[k] == b[k] for k in a
    )


def play(agent: agents.Agent, env: TradingEnv, seed: int, steps: int, learn: bool = True):
    """Act and learn ``steps`` steps from ``env.reset(seed=seed)``; after every step the action
    and the agent's whole state (every draw of its generators included)."""
    obs, _ = env.reset(seed=seed)
    for _ in range(steps):
        action = agent.act(obs, explore=learn)
        next_obs, reward, terminated, truncated, _ = env.step(action)
        if learn:
            agent.update(obs, action, reward, next_obs, terminated, truncated)
        obs = next_obs
        if terminated or truncated:
            if learn:
                agent.end_episode()
            obs, _ = env.reset()
        yield action, agent.state_dict()


@pytest.mark.parametrize("name", agents.names())
def test_a_loaded_agent_acts_and_trains_on_as_the_saved_one(name, tmp_path, one_thread):
    """Train 30 steps, save, load; then the saved and the loaded agent take the same action
    and hold the same state (tables, networks, optimiser, buffer, generators) after each of
    the next 40 steps of learning, and of 10 greedy ones."""
    market = market_of(name)
    agent = build(name, market)
    env = env_of(agent, market)
    for _ in play(agent, env, 0, 30):
        pass
    path = agent.save(tmp_path / name)
    loaded = agents.load(path)
    assert type(loaded) is type(agent) and same_state(loaded.state_dict(), agent.state_dict())
    for learn, steps in ((True, 40), (False, 10)):
        pairs = zip(
            play(agent, env, 1, steps, learn), play(loaded, env_of(loaded, market), 1, steps, learn)
        )
        for step, ((a, state), (b, loaded_state)) in enumerate(pairs):
            assert a == b, f"{name}: step {step}: action {a} != {b}"
            assert same_state(state, loaded_state), f"{name}: state differs after step {step}"


def test_saved_files_are_json_and_plain_arrays(tmp_path):
    """agent.json names the id, parameters, seed, spaces, market and the seat's view; the
    arrays are .npy members with the listed shapes; every value is plain JSON."""
    making = MarketSpec(task="making")
    agent = agents.make(
        "ra2q",
        k=3,
        observation_space=making.observation_space("tabular"),
        action_space=making.action_space,
        seed=3,
        market_spec=making,
    )
    path = agent.save(tmp_path / "ra2q", notes={"episodes_trained": 5})
    header = json.loads((path / HEADER).read_text())
    assert header["id"] == "ra2q" and header["params"] == {"k": 3} and header["seed"] == 3
    assert header["observation_space"] == {"__space__": "Discrete", "n": 60, "start": 0}
    assert header["market_spec"]["task"] == "making" and header["notes"] == {"episodes_trained": 5}
    assert header["view"]["actions"] == "make" and header["view"]["n_actions"] == 17
    assert header["arrays"]["tables.q"] == {"shape": [3, 60, 17], "dtype": "<f8"}
    with zipfile.ZipFile(path / ARRAYS) as archive:
        assert sorted(archive.namelist()) == ["tables.q.npy", "tables.visits.npy"]


def test_replay_buffer_left_out_when_asked(tmp_path, one_thread):
    """``buffer=False``: no buffer arrays; the loaded agent acts greedily as the saved one and
    starts learning from an empty memory (every other part of the state equal)."""
    agent = build("dqn")
    market = market_of("dqn")
    for _ in play(agent, env_of(agent, market), 0, 20):
        pass
    full, light = agent.save(tmp_path / "full"), agent.save(tmp_path / "light", buffer=False)
    with zipfile.ZipFile(light / ARRAYS) as archive:
        assert not [n for n in archive.namelist() if n.startswith("buffer.")]
    assert (light / ARRAYS).stat().st_size < (full / ARRAYS).stat().st_size
    loaded = agents.load(light)
    state, saved = loaded.state_dict(), agent.state_dict()
    width = agent.obs_shape[0]
    assert state["buffer.pos"] == 0 and state["buffer.observations"].shape == (0, width)
    assert same_state(
        {k: v for k, v in state.items() if not k.startswith("buffer.")},
        {k: v for k, v in saved.items() if not k.startswith("buffer.")},
    )
    obs = np.linspace(-1, 1, width * 5, dtype=np.float32).reshape(5, width)
    assert loaded.act_batch(obs, explore=False).tolist() == agent.act_batch(obs, False).tolist()


@pytest.fixture
def saved_raql(tmp_path):
    return build("raql").save(tmp_path / "raql")


def edit_header(path, **changes):
    header = json.loads((path / HEADER).read_text())
    (path / HEADER).write_text(json.dumps({**header, **changes}))


def test_another_version_is_named(saved_raql):
    edit_header(saved_raql, tradearena="0.0.1")
    with pytest.raises(agents.VersionError, match=r"agent.json: saved by tradearena 0.0.1 "):
        agents.load(saved_raql)
    edit_header(saved_raql, tradearena=project_version(), format=2)
    with pytest.raises(agents.VersionError, match=r"\(format 2\)"):
        agents.load(saved_raql)


def rewrite_arrays(path, arrays):
    with zipfile.ZipFile(path / ARRAYS, "w") as archive:
        for key, array in arrays.items():
            with archive.open(f"{key}.npy", "w") as file:
                np.lib.format.write_array(file, array)


def test_missing_and_misshaped_arrays_are_named(saved_raql):
    q = np.zeros((1, 54, 3))
    rewrite_arrays(saved_raql, {"tables.q": q})
    with pytest.raises(agents.StateError, match=r"missing arrays \['tables.visits'\]"):
        agents.load(saved_raql)
    rewrite_arrays(saved_raql, {"tables.q": q[:, :50], "tables.visits": np.zeros((1, 54, 3), int)})
    with pytest.raises(agents.StateError, match=r"'tables.q' is <f8 \[1, 50, 3\], agent.json says"):
        agents.load(saved_raql)
    header = json.loads((saved_raql / HEADER).read_text())
    header["arrays"]["tables.q"]["shape"] = [1, 50, 3]
    (saved_raql / HEADER).write_text(json.dumps(header))
    with pytest.raises(agents.StateError, match=r"does not fit raql: .*shape \(1, 50, 3\)"):
        agents.load(saved_raql)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_table_that_is_not_finite_is_refused_naming_file_and_array(bad, saved_raql):
    """A Q-table holding NaN loaded and played (its greedy action the first NaN's)."""
    q = np.zeros((1, 54, 3))
    q[0, 7, 2] = bad
    rewrite_arrays(saved_raql, {"tables.q": q, "tables.visits": np.zeros((1, 54, 3), int)})
    with pytest.raises(
        agents.StateError,
        match=rf"^{saved_raql / ARRAYS}: 'tables.q' holds {bad} at index \[0, 7, 2\]; a saved "
        "agent's numbers must be finite",
    ):
        agents.load(saved_raql)


def test_state_keys_that_do_not_fit_are_named(saved_raql):
    header = json.loads((saved_raql / HEADER).read_text())
    del header["state"]["t"]
    (saved_raql / HEADER).write_text(json.dumps(header))
    with pytest.raises(agents.StateError, match=r"missing keys \['t'\]"):
        agents.load(saved_raql)


def test_loading_never_unpickles(saved_raql):
    """An object array (which numpy can only read by unpickling) is refused."""
    with zipfile.ZipFile(saved_raql / ARRAYS, "w") as archive, archive.open("q.npy", "w") as file:
        np.lib.format.write_array(file, np.array([{"x": 1}], dtype=object))
    with pytest.raises(agents.StateError, match="not readable without unpickling"):
        agents.load(saved_raql)


def test_another_market_is_named(saved_raql):
    """The same market loads (and the agent is rebuilt for it); one with another action set
    or other tabular states is a MarketMismatchError naming what differs."""
    agents.load(saved_raql, market=MarketSpec(population="rmsc04", n_steps=30))
    with pytest.raises(agents.MarketMismatchError, match=r"actions 'trade' here 'make'"):
        agents.load(saved_raql, market=MarketSpec(task="making"))
    windows = r"features .*'return_15'.* here .*'return_30'"
    with pytest.raises(agents.MarketMismatchError, match=windows):
        agents.load(saved_raql, market=MarketSpec(windows=(1, 5, 30)))


def test_custom_ids_are_imported_only_when_named(tmp_path):
    agent = agents.make("tradearena.agents.baselines:Random", seed=2)
    path = agent.save(tmp_path / "custom")
    with pytest.raises(
        agents.SavedAgentError, match=r"'tradearena.agents.baselines:Random' is not a registered"
    ):
        agents.load(path)
    loaded = agents.load(path, custom=["tradearena.agents.baselines:Random"])
    assert [loaded.act(None) for _ in range(5)] == [agent.act(None) for _ in range(5)]


def test_bad_saves_and_files_are_named(tmp_path, saved_raql):
    with pytest.raises(agents.SavedAgentError, match="was not built by agents.make"):
        agents.resolve("hold")().save(tmp_path / "hold")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(agents.SavedAgentError, match="exists and is not a saved agent"):
        build("hold").save(tmp_path / "mine")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"
    with pytest.raises(agents.SavedAgentError, match=r"no saved agent here \(agent.json missing\)"):
        agents.load(tmp_path / "mine")
    (saved_raql / HEADER).write_text("{not json")
    with pytest.raises(agents.SavedAgentError, match="agent.json: not a saved agent's file"):
        agents.load(saved_raql)


def test_saving_again_replaces_the_saved_agent(tmp_path):
    path = tmp_path / "agent"
    build("raql").save(path)
    other = agents.make("raql", n_states=4, n_actions=2, seed=1)
    other.save(path)
    assert agents.load(path).q.shape == (4, 2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["agent"]


# field of agent.json: (its new value, the message's regex after "agent.json: ")
BAD_HEADERS = {
    "id": (None, r"id: must be a registry id or \"module:Class\", got None"),
    "seed": (-5, r"seed: must be a non-negative integer or null, got -5"),
    "params": ([], r"params: must be an object of keywords, got \[\]"),
    "observation": ("pixels", r"observation: must be one of \['features', 'tabular'\]"),
    "left_out": (
        ["tables.q", "tables.visits"],
        r"left_out: \['tables.q', 'tables.visits'\] are not a replay memory's \('buffer'\) keys",
    ),
    "notes": ("trained", r"notes: must be an object, got 'trained'"),
}


@pytest.mark.parametrize("field", list(BAD_HEADERS))
def test_a_wrong_header_field_is_named(field, saved_raql):
    """A parseable agent.json whose field is wrong (or missing) is a SavedAgentError naming
    the file and the field, not a KeyError or TypeError inside the loader."""
    value, message = BAD_HEADERS[field]
    edit_header(saved_raql, **{field: value})
    with pytest.raises(agents.SavedAgentError, match=rf"{saved_raql / HEADER}: {message}"):
        agents.load(saved_raql)
    header = json.loads((saved_raql / HEADER).read_text())
    del header[field]
    (saved_raql / HEADER).write_text(json.dumps(header))
    with pytest.raises(agents.SavedAgentError, match=rf"agent.json: {field}: missing$"):
        agents.load(saved_raql)


def test_a_header_that_is_not_an_object_or_builds_nothing_is_named(saved_raql):
    """A JSON list; a seed the agent refuses; a device this machine lacks: named, with the
    file."""
    (saved_raql / HEADER).write_text("[1, 2]")
    with pytest.raises(agents.SavedAgentError, match=r"agent.json: not a saved agent's file: a"):
        agents.load(saved_raql)
    dqn = build("dqn").save(saved_raql.parent / "dqn")
    header = json.loads((dqn / HEADER).read_text())
    header["params"]["gamma"] = 7.0
    (dqn / HEADER).write_text(json.dumps(header))
    with pytest.raises(agents.SavedAgentError, match=r"agent.json: params: dqn cannot be built"):
        agents.load(dqn)
    if not torch.cuda.is_available():
        header["params"] |= {"gamma": 0.99, "device": "cuda"}
        (dqn / HEADER).write_text(json.dumps(header))
        with pytest.raises(agents.SavedAgentError, match=r"device: 'cuda', but this machine"):
            agents.load(dqn)


def test_an_empty_or_oversized_archive_is_refused_before_it_is_read(saved_raql):
    """A 0-byte arrays.npz; a listing far larger than the agent's tables; an entry that holds
    more than its header says (a zip bomb): each refused naming the file, nothing allocated
    or inflated."""
    (saved_raql / ARRAYS).write_bytes(b"")
    with pytest.raises(agents.StateError, match=r"arrays.npz: not readable without unpickling"):
        agents.load(saved_raql)
    header = json.loads((saved_raql / HEADER).read_text())
    header["arrays"]["tables.q"]["shape"] = [100_000, 100_000]
    (saved_raql / HEADER).write_text(json.dumps(header))
    with pytest.raises(agents.StateError, match=r"arrays.tables.q: \[100000, 100000\] of <f8 "):
        agents.load(saved_raql)
    header["arrays"]["tables.q"]["shape"] = [1, 2000, 3]
    (saved_raql / HEADER).write_text(json.dumps(header))
    with pytest.raises(agents.StateError, match=r"does not fit raql: 'tables.q' is listed as"):
        agents.load(saved_raql)
    fresh = build("raql").save(saved_raql.parent / "bomb")
    q, visits = np.zeros((1, 54, 3)), np.zeros((1, 54, 3), dtype=np.int64)
    with zipfile.ZipFile(fresh / ARRAYS, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("tables.q.npy", "w") as file:
            np.lib.format.write_array(file, q)
            file.write(bytes(20 * 2**20))  # 20 MiB of zeros past the array, deflated to KiB
        with archive.open("tables.visits.npy", "w") as file:
            np.lib.format.write_array(file, visits)
    with pytest.raises(agents.StateError, match=r"'tables.q' holds 20,972,\d+ bytes, not the"):
        agents.load(fresh)
