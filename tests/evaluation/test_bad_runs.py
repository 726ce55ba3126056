"""Bad inputs to ``tradearena run``: each is refused in one line (exit 2) naming the file, line
and field, before any work (no run directory left behind); an agent's action outside its
space fails its jobs naming the agent, the value and the space."""

from __future__ import annotations

import json
import re

import pytest

from tradearena.agents.saving import ARRAYS, HEADER
from tradearena.envs.spec import MarketSpec
from tradearena.evaluation.cli.main import main
from tradearena.evaluation.experiment.rollout import build_agent
from tradearena.evaluation.experiment.schema import FILE_NAME_RULE, AgentEntry

# The tiny experiment of conftest.py, line by line:
#  1 kind = "compare"      5 [market]               12 [testing]      18 [[agents]]
#  2 name = "tiny"         6 population = "light"   13 episodes = 2   19 id = "ra2q"
#  3 seeds = 2             7 n_steps = 15           15 [[agents]]     20 params = { k = 3 }
#  9 [training]           10 episodes = 2           16 id = "q_learning"
TOURNAMENT = ('kind = "compare"', 'kind = "tournament"')
TRAINING = "[testing]"  # a key put before this line lands in [training], at line 12
NOISE = '[[market.traders]]\ntype = "Noise"\nn_agents = {}\n\n[training]'
ZI = '[[market.traders]]\ntype = "ZeroIntelligence"\n{}\n\n[training]'
MAKER = '[[market.traders]]\ntype = "MarketMaker"\n{}\n\n[training]'
AGENTS = '[[agents]]\nid = "q_learning"\n\n[[agents]]\nid = "ra2q"\nparams = { k = 3 }\n'


def climbs(edits: list, append: str, line: int, field: str) -> tuple:
    """A `BAD` case: a name that becomes a path ("../x", its last character the edit's) is
    refused as no plain file name."""
    name = re.search(r'"(\.\./\w)"', edits[0][1] + append).group(1)
    return edits, append, line, field, re.escape(f"must be {FILE_NAME_RULE}, got {name!r}")


# id: (edits [(old, new)], text appended, line (None: the file's), field, message regex)
BAD = {
    "10^12 seeds": (
        [("seeds = 2", "seeds = 1000000000000")],
        "",
        3,
        "seeds",
        r"must be in \[1, 10,000\], got 1000000000000",
    ),
    "10^12 training episodes": (
        [("[training]\nepisodes = 2", "[training]\nepisodes = 1000000000000")],
        "",
        10,
        "training.episodes",
        r"must be in \[0, 10,000,000\], got 1000000000000",
    ),
    "10^12 test episodes": (
        [("[testing]\nepisodes = 2", "[testing]\nepisodes = 1000000000000")],
        "",
        13,
        "testing.episodes",
        r"must be in \[1, 10,000,000\]",
    ),
    "10^12 evaluation episodes": (
        [(TRAINING, f"evaluate_episodes = 1000000000000\n\n{TRAINING}")],
        "",
        12,
        "training.evaluate_episodes",
        r"must be in \[1, 10,000,000\]",
    ),
    "10^9 sessions": (
        [(TRAINING, f"sessions = 1000000000\n\n{TRAINING}")],
        "",
        12,
        "training.sessions",
        r"must be in \[1, 1,024\] sessions, got 1000000000",
    ),
    "10^6 tournament players": (
        [TOURNAMENT],
        "\n[tournament]\nplayers = 1000000\n",
        23,
        "tournament.players",
        r"must be in \[1, 1,000\] seats, got 1000000",
    ),
    "a tournament of too many jobs": (
        [TOURNAMENT, ("seeds = 2", "seeds = 10000")],
        "\n[tournament]\nplayers = 100\n",
        23,
        "tournament.players",
        r"a game of 100 seats over 2 strategies has 101 profiles: 1,010,000 jobs over 10,000 "
        r"seeds, more than the 100,000 a run may have",
    ),
    "10^12 steps": (
        [("n_steps = 15", "n_steps = 1000000000000")],
        "",
        7,
        "market.n_steps",
        r"must be in \[1, 1,000,000\] steps, got 1000000000000",
    ),
    "1e300 seconds a step": (
        [("n_steps = 15", "n_steps = 15\nstep_seconds = 1e300")],
        "",
        8,
        "market.step_seconds",
        r"the session would last .* longer than 604,800 s \(a week\), got 1e\+300",
    ),
    "a session of more than a week": (
        [("n_steps = 15", "n_steps = 1000000\nstep_seconds = 60")],
        "",
        7,
        "market.n_steps",
        r"the session would last 60,000,000 s \(1,000,000 steps of 60 s\)",
    ),
    "an open time of 1e16 s": (
        [("n_steps = 15", "n_steps = 15\nopen_time = 1e16")],
        "",
        8,
        "market.open_time",
        r"must be in \[0, 604,800\] seconds after midnight \(a week\), got 1e\+16",
    ),
    "an opening price of 2^62 ticks": (
        [("n_steps = 15", "n_steps = 15\ninitial_price = 4611686018427387904")],
        "",
        8,
        "market.initial_price",
        r"must be in \[1, 1,000,000,000\] ticks, got 4611686018427387904",
    ),
    "an order latency of 1e300 s": (
        [("n_steps = 15", "n_steps = 15\norder_latency = 1e300")],
        "",
        8,
        "market.order_latency",
        r"must be in \[0, 3600\] seconds, got 1e\+300",
    ),
    "10^9 extra zero-intelligence traders": (
        [("n_steps = 15", "n_steps = 15\nextra_zi = 1000000000")],
        "",
        8,
        "market.extra_zi",
        r"must be in \[0, 100,000\] traders, got 1000000000",
    ),
    "10^9 traders in a population": (
        [("[training]", NOISE.format(1000000000))],
        "",
        11,
        "market.traders[0].n_agents",
        r"must be an integer in \[1, 100,000\], got 1000000000",
    ),
    "a negative population": (
        [("[training]", NOISE.format(-1))],
        "",
        11,
        "market.traders[0].n_agents",
        r"must be an integer in \[1, 100,000\], got -1",
    ),
    "a population of inverted sizes": (
        [("[training]", '[[market.traders]]\ntype = "Noise"\nsize = [100, 1]\n\n[training]')],
        "",
        11,
        "market.traders[0].size",
        r"must be \[low, high\] shares with 1 <= low <= high, got \[100, 1\]",
    ),
    "zero-intelligence holdings of 10^12 values": (
        [("[training]", ZI.format("n_agents = 1000\nq_max = 1000000000000"))],
        "",
        12,
        "market.traders[0].q_max",
        r"must be an integer in \[1, 100,000\] for 1,000 agents, got 1000000000000",
    ),
    "zero-intelligence traders that never arrive": (
        [("[training]", ZI.format("arrival_rate = 0"))],
        "",
        11,
        "market.traders[0].arrival_rate",
        r"must be > 0 per second, got 0",
    ),
    "momentum's long window shorter than its short one": (
        [("[training]", '[[market.traders]]\ntype = "Momentum"\nlong = 5\n\n[training]')],
        "",
        11,
        "market.traders[0].long",
        r"must be an integer > short \(20\), got 5",
    ),
    "a market maker that never wakes": (
        [("[training]", '[[market.traders]]\ntype = "MarketMaker"\nperiod = 0\n\n[training]')],
        "",
        11,
        "market.traders[0].period",
        r"must be a finite number > 0 seconds, got 0",
    ),
    "10^12 tabular tables": (
        [("params = { k = 3 }", "params = { k = 1000000000000 }")],
        "",
        20,
        "agents[1].params",
        r"k = 1000000000000: the Q tables would take [\d,.]+ GiB, more than the 16 GiB",
    ),
    "a replay memory of 10^12 transitions": (
        [('id = "q_learning"', 'id = "dqn"\nparams = { buffer_size = 1000000000000 }')],
        "",
        17,
        "agents[0].params",
        r"buffer_size = 1000000000000: the observations would take",
    ),
    "10^9 hidden units": (
        [('id = "q_learning"', 'id = "dqn"\nparams = { hidden = 1000000000 }')],
        "",
        17,
        "agents[0].params",
        r"hidden = 1000000000: a layer's weights would take",
    ),
    "more extra traders in a condition than a population may have": (
        [
            ('kind = "compare"', 'kind = "robustness"'),
            ("n_steps = 15", "n_steps = 15\nextra_zi = 90000"),
        ],
        '\n[[perturbations]]\nname = "crowd"\ntype = "zi"\nn_agents = 20000\n',
        26,
        "perturbations[0].n_agents",
        r"with the market's extra_zi \(90,000\), more than 100,000 traders",
    ),
    "a trader named by a string": (
        [("n_steps = 15", 'n_steps = 15\ntraders = ["ZeroIntelligence"]')],
        "",
        8,
        "market.traders[0]",
        r"expected a table \{type = \"...\", ...\} \(one of \[.*\]\), got 'ZeroIntelligence'$",
    ),
    **{
        f"the label {label!r}": (
            [('id = "q_learning"', f'id = "q_learning"\nlabel = "{label}"')],
            "",
            17,
            "agents[0].label",
            re.escape(f"must be {FILE_NAME_RULE}, got {label!r}"),
        )
        for label in ("../../escaped_label", "/tmp/absolute", "./q", ".", "..", "a b", "")
        if label  # an empty label is the class's name
    },
    "labels alike but for case": (
        [
            ('id = "q_learning"', 'id = "q_learning"\nlabel = "q"'),
            ("params = { k = 3 }", 'params = { k = 3 }\nlabel = "Q"'),
        ],
        "",
        22,
        "agents[1].label",
        r"agents' labels must be distinct, case aside, got \['q', 'Q'\]",
    ),
    "an experiment name that climbs": climbs([('name = "tiny"', 'name = "../x"')], "", 2, "name"),
    "a condition's name that climbs": climbs(
        [('kind = "compare"', 'kind = "robustness"')],
        '\n[[perturbations]]\nname = "../p"\ntype = "zi"\n',
        23,
        "perturbations[0].name",
    ),
    "conditions alike but for case": (
        [('kind = "compare"', 'kind = "robustness"')],
        '\n[[perturbations]]\nname = "zi"\ntype = "zi"\n'
        '\n[[perturbations]]\nname = "ZI"\ntype = "zi"\n',
        27,
        "perturbations[1].name",
        r"perturbations' names must be distinct, case aside, got \['zi', 'ZI'\]",
    ),
    "a PSRO learner's label that climbs": climbs(
        [('kind = "compare"', 'kind = "psro"')],
        '\n[psro.learner]\nid = "q_learning"\nlabel = "../r"\n',
        24,
        "psro.learner.label",
    ),
    "a zero-intelligence drift of NaN": (
        [("[training]", ZI.format("drift = nan"))],
        "",
        11,
        "market.traders[0].drift",
        r"must be a finite number, got nan$",
    ),
    "a zero-intelligence sigma given as text": (
        [("[training]", ZI.format('sigma = "12"'))],
        "",
        11,
        "market.traders[0].sigma",
        r"must be a number, got '12'$",
    ),
    "a volatile sigma of inf": (
        [("[training]", ZI.format("volatile_sigma = inf"))],
        "",
        11,
        "market.traders[0].volatile_sigma",
        r"must be a finite number, got inf$",
    ),
    "a Hawkes decay of NaN": (
        [("[training]", ZI.format("hawkes = { branching = 0.5, decay = nan }"))],
        "",
        11,
        "market.traders[0].hawkes.decay",
        r"must be a finite number, got nan$",
    ),
    "a market maker's half spread of NaN": (
        [("[training]", MAKER.format("half_spread = nan"))],
        "",
        11,
        "market.traders[0].half_spread",
        r"must be a finite number, got nan$",
    ),
    "a market maker's half spread of 1e300": (
        [("[training]", MAKER.format("half_spread = 1e300"))],
        "",
        11,
        "market.traders[0].half_spread",
        r"must be an integer, got 1e\+300$",
    ),
    "a learned flow without its model": (
        [("[training]", '[[market.traders]]\ntype = "LearnedFlow"\n\n[training]')],
        "",
        9,
        "market.traders[0].model",
        r"LearnedFlow needs it: it has no default$",
    ),
    **{
        f"a reference's gamma of {shown}": (
            [
                ("n_steps = 15", 'n_steps = 15\ntask = "making"'),
                (
                    'ra2q"\nparams = { k = 3 }',
                    f'avellaneda_stoikov"\nparams = {{ gamma = {value} }}',
                ),
            ],
            "",
            21,
            "agents[1].params",
            re.escape(f"agent 'avellaneda_stoikov': gamma: must be {rule}, got {shown}") + "$",
        )
        for value, rule, shown in (
            ("nan", "a finite number", "nan"),
            ("inf", "a finite number", "inf"),
            ('"x"', "a number or none", "'x'"),
        )
    },
    "no agents": (
        [(AGENTS, "")],
        "",
        None,
        "agents",
        r"an experiment needs at least one \[\[agents\]\] table",
    ),
}


def edited(text: str, edits: list[tuple[str, str]], append: str) -> str:
    """``text`` with each ``old`` replaced by ``new`` (each must occur once) and ``append``."""
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text + append


def refused(argv: list[str], capsys) -> str:
    """The one line ``tradearena`` printed refusing ``argv`` (exit 2, nothing on stdout)."""
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    return err.removeprefix("tradearena: error: ").rstrip("\n")


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_config_is_one_line_naming_its_line_and_field_and_writes_nothing(
    case, tmp_path, tiny_text, capsys
):
    """Each bad value is refused before any work, by ``run`` and by ``run --dry-run``: exit 2,
    one line naming the file, the line and the field, and no run directory."""
    edits, append, line, field, message = BAD[case]
    path = tmp_path / "bad.toml"
    path.write_text(edited(tiny_text, edits, append))
    out = tmp_path / "run"
    at = f"{path}, line {line}" if line else f"{path}"
    expected = "^" + re.escape(f"{at}: {field}: ") + message
    for extra in (["--dry-run"], ["--executor", "local"]):
        line_printed = refused(["run", str(path), "--out", str(out), *extra], capsys)
        assert re.search(expected, line_printed), line_printed
        assert not out.exists()


SEVEN = '''
from tradearena.agents.base import Agent


class Seven(Agent):
    """Answers with an action the taker task does not have."""

    def act(self, obs, explore=True):
        return 7
'''


@pytest.mark.parametrize("sessions", [1, 2])
def test_a_run_refuses_an_action_outside_the_space(
    sessions, tmp_path, tiny_text, capsys, own_folders, monkeypatch
):
    """``run`` with an agent whose action is not in its space: its jobs fail naming the agent,
    the value and the space (one session at a time or batched); none plays it as another."""
    (tmp_path / "seven_agent.py").write_text(SEVEN)
    monkeypatch.chdir(tmp_path)
    text = tiny_text.replace('id = "q_learning"', 'id = "seven_agent:Seven"')
    text = text.replace(TRAINING, f"sessions = {sessions}\n\n{TRAINING}")
    path = tmp_path / "seven.toml"
    path.write_text(text)
    argv = ["run", str(path), "--executor", "local", "--out", str(tmp_path / "run")]
    assert main([*argv, "--no-progress"]) == 1
    err = capsys.readouterr().err
    method = "act" if sessions == 1 else "act_batch"
    for seed in (0, 1):
        assert f"Seven/seed={seed}: " in err
    assert err.count(f"ActionError: Seven.{method} returned 7, not in Discrete(3)") == 2


SPACED = """
from tradearena.agents.baselines import Hold


class Spaced(Hold):
    name = "a/b"
"""


def test_a_label_taken_from_a_class_name_is_a_plain_file_name(
    tmp_path, tiny_text, capsys, own_folders, monkeypatch
):
    """An agent table without a label, whose class's ``name`` is no file name, is refused
    at its label, saying to set one; nothing is written."""
    (tmp_path / "spaced_agent.py").write_text(SPACED)
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "spaced.toml"
    path.write_text(tiny_text.replace('id = "q_learning"', 'id = "spaced_agent:Spaced"'))
    line = refused(["run", str(path), "--out", str(tmp_path / "run")], capsys)
    assert line == (
        f"{path}, line 15: agents[0].label: must be {FILE_NAME_RULE}, got 'a/b' (set label = ...)"
    )
    assert not (tmp_path / "run").exists()


def _header(**changes):
    """An edit of a saved agent's agent.json: ``changes`` made (None: the field removed)."""

    def edit(path):
        header = json.loads((path / HEADER).read_text())
        header |= changes
        (path / HEADER).write_text(json.dumps({k: v for k, v in header.items() if v is not None}))

    return edit


# id: (edit of the saved agent's directory, the file named, the message's regex after it)
BAD_SAVED = {
    "agent.json a list": (
        lambda path: (path / HEADER).write_text("[]"),
        HEADER,
        r"not a saved agent's file: a JSON list",
    ),
    "agent.json nested 100,000 deep": (
        lambda path: (path / HEADER).write_text("[" * 100_000 + "]" * 100_000),
        HEADER,
        r"not a saved agent's file: maximum recursion depth exceeded",
    ),
    "no id": (_header(id=None), HEADER, r"id: missing"),
    "params a list": (_header(params=[]), HEADER, r"params: must be an object of keywords"),
    "a negative seed": (_header(seed=-5), HEADER, r"seed: must be a non-negative integer"),
    "a seed of text": (_header(seed="x"), HEADER, r"seed: must be a non-negative integer"),
    "the tables left out": (_header(left_out=["q", "visits"]), HEADER, r"left_out: \['q', "),
    "a 0-byte arrays.npz": (
        lambda path: (path / ARRAYS).write_bytes(b""),
        ARRAYS,
        r"not readable without unpickling",
    ),
}


@pytest.mark.parametrize("case", list(BAD_SAVED))
def test_a_bad_saved_agent_is_one_line_naming_its_file_and_field(case, tmp_path, tiny_text, capsys):
    """``run`` with an agent loaded ``from`` a damaged saved agent: exit 2, one line naming the
    config's line, the saved file and its field, and no run directory."""
    edit, file, message = BAD_SAVED[case]
    market = MarketSpec(population="light", n_steps=15)
    saved = build_agent(AgentEntry("q_learning"), market, seed=0).save(tmp_path / "q")
    edit(saved)
    path = tmp_path / "bad.toml"
    path.write_text(tiny_text.replace('id = "q_learning"', 'id = "q_learning"\nfrom = "q"'))
    out = tmp_path / "run"
    line = refused(["run", str(path), "--executor", "local", "--out", str(out)], capsys)
    where = re.escape(f"{path}, line 17: agents[0].from: {saved / file}: ")
    assert re.match(where + message, line), line
    assert not out.exists()
