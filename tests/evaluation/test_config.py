"""evaluation.experiment.config and the ``tradearena run`` front door: every mistake in an
experiment file is a `ConfigError` naming the file, the line and the field, raised before anything
is written."""

from __future__ import annotations

import dataclasses
import gzip
import json
import pickle
import re
import tomllib
from pathlib import Path

import gymnasium
import pytest

from tradearena import (
    agents,
    envs,  # noqa: F401 (registers the ids)
)
from tradearena.envs.data.tapes import write_lobster
from tradearena.envs.simulator.recording import synthetic_tape
from tradearena.envs.spec import MarketSpec
from tradearena.envs.tasks import TASKS
from tradearena.evaluation.cli.main import main
from tradearena.evaluation.experiment import schema
from tradearena.evaluation.experiment.config import (
    ConfigError,
    load_config,
    load_market,
    parse_config,
)
from tradearena.evaluation.experiment.kinds import run_job
from tradearena.evaluation.experiment.runner import plan
from tradearena.evaluation.experiment.schema import (
    AGENT,
    MARKET,
    PERTURBATION,
    TOP,
    TOURNAMENT,
    AgentEntry,
    Output,
    Perturbation,
    Tournament,
    Training,
)

# The tiny experiment of conftest.py, line by line:
#  1 kind = "compare"      5 [market]               12 [testing]      18 [[agents]]
#  2 name = "tiny"         6 population = "light"   13 episodes = 2   19 id = "ra2q"
#  3 seeds = 2             7 n_steps = 15           15 [[agents]]     20 params = { k = 3 }
#  9 [training]           10 episodes = 2           16 id = "q_learning"
ROBUST = ('kind = "compare"', 'kind = "robustness"')

# id: (edits [(old, new)], text appended, line, field, message regex)
BAD = {
    "unknown top-level key": (
        [("seeds = 2", "seedz = 2")],
        "",
        3,
        "seedz",
        r"unknown key \(did you mean 'seeds'\?\)",
    ),
    "unknown key in market": (
        [("n_steps = 15", "n_steps = 15\nn_stepz = 5")],
        "",
        8,
        "market.n_stepz",
        r"unknown key \(did you mean 'n_steps'\?\)",
    ),
    "unknown key in an agent": (
        [('id = "q_learning"', 'id = "q_learning"\nlabl = "q"')],
        "",
        17,
        "agents[0].labl",
        r"unknown key \(did you mean 'label'\?\)",
    ),
    "misspelt agent parameter": (
        [("params = { k = 3 }", "params = { k = 3, exploraton = 0.2 }")],
        "",
        20,
        "agents[1].params",
        r"agent 'ra2q': .*unexpected keyword argument 'exploraton' "
        r"\(did you mean 'exploration'\?\)$",
    ),
    "misspelt utility parameter": (
        [("params = { k = 3 }", 'params = { utility = { name = "exponential", betta = -1 } }')],
        "",
        20,
        "agents[1].params",
        r"utility .*unexpected keyword argument 'betta' \(did you mean 'beta'\?\)$",
    ),
    "string for an int": (
        [("n_steps = 15", 'n_steps = "15"')],
        "",
        7,
        "market.n_steps",
        r"expected an integer, got '15'",
    ),
    "float for an int": (
        [("n_steps = 15", "n_steps = 15.5")],
        "",
        7,
        "market.n_steps",
        r"expected an integer, got 15\.5",
    ),
    "bool for a number": (
        [("n_steps = 15", "n_steps = 15\nfee_per_share = true")],
        "",
        8,
        "market.fee_per_share",
        r"expected an integer or a number, got True",
    ),
    "bool for an int": (
        [("seeds = 2", "seeds = true")],
        "",
        3,
        "seeds",
        r"expected an integer, got True",
    ),
    "nan": (
        [("n_steps = 15", "n_steps = 15\nstep_seconds = nan")],
        "",
        8,
        "market.step_seconds",
        r"expected a finite number, got nan",
    ),
    "negative position_limit": (
        [("n_steps = 15", "n_steps = 15\nposition_limit = -5")],
        "",
        8,
        "market.position_limit",
        r"must be in \[1, 1,000,000,000\] shares, got -5",
    ),
    "zero seeds": (
        [("seeds = 2", "seeds = 0")],
        "",
        3,
        "seeds",
        r"must be in \[1, 10,000\], got 0",
    ),
    "p above 1": (
        [ROBUST, ('id = "ra2q"', 'id = "ra3q"')],
        '\n[[perturbations]]\nname = "adv"\ntype = "adversary"\np = 1.5\n',
        25,
        "perturbations[0].p",
        r"must be in \[0, 1\], got 1\.5",
    ),
    "unknown kind": (
        [('kind = "compare"', 'kind = "compair"')],
        "",
        1,
        "kind",
        r"must be one of \['compare', 'psro', 'robustness', 'tournament'\], got 'compair'",
    ),
    "unknown agent id": (
        [('id = "q_learning"', 'id = "raq"')],
        "",
        16,
        "agents[0].id",
        r"unknown agent 'raq' \(did you mean 'raql'\?\); known ids: "
        + re.escape(str(agents.names())),
    ),
    "unknown agent parameter": (
        [("params = { k = 3 }", "params = { kk = 5 }")],
        "",
        20,
        "agents[1].params",
        r"agent 'ra2q'.*unexpected keyword argument 'kk'",
    ),
    "bad agent parameter value": (
        [("params = { k = 3 }", "params = { gamma = 2 }")],
        "",
        20,
        "agents[1].params",
        r"gamma must be in \[0, 1\], got 2",
    ),
    "unknown trader type": (
        [("[training]", '[[market.traders]]\ntype = "Whale"\n\n[training]')],
        "",
        10,
        "market.traders[0].type",
        r"must be one of \['LearnedFlow', 'MarketMaker', 'Metaorder', 'Momentum', 'Noise', "
        r"'ZeroIntelligence'\], "
        r"got 'Whale'",
    ),
    "unknown trader parameter": (
        [("[training]", '[[market.traders]]\ntype = "Noise"\nfoo = 1\n\n[training]')],
        "",
        11,
        "market.traders[0].foo",
        r"Noise takes no parameter 'foo'",
    ),
    "unknown flow mechanism parameter": (
        [
            (
                "[training]",
                '[[market.traders]]\ntype = "ZeroIntelligence"\n'
                "hawkes = { branching = 0.5, decy = 1.0 }\n\n[training]",
            )
        ],
        "",
        11,
        "market.traders[0].hawkes.decy",
        r"no such parameter \(did you mean 'decay'\?\); hawkes takes \['branching', 'decay'\]",
    ),
    "bad flow mechanism value": (
        [("[training]", '[[market.traders]]\ntype = "Noise"\nsizes = { lot = 0 }\n\n[training]')],
        "",
        11,
        "market.traders[0].sizes.lot",
        r"must be an integer >= 2 shares, got 0",
    ),
    "misspelt trader parameter": (
        [
            (
                "[training]",
                '[[market.traders]]\ntype = "ZeroIntelligence"\nhorizn = 60.0\n\n[training]',
            )
        ],
        "",
        11,
        "market.traders[0].horizn",
        r"ZeroIntelligence takes no parameter 'horizn' \(did you mean 'horizon'\?\)",
    ),
    "bad trader value": (
        [("[training]", '[[market.traders]]\ntype = "Metaorder"\nsize_tail = -1.0\n\n[training]')],
        "",
        11,
        "market.traders[0].size_tail",
        r"must be > 0, got -1\.0",
    ),
    "adversary source that trains none": (
        [ROBUST],
        '\n[[perturbations]]\nname = "adv"\ntype = "adversary"\nsource = "ra2q"\n',
        25,
        "perturbations[0].source",
        r"must name an agent that trains an adversary \(e\.g\. ra3q\); candidates: \[\]",
    ),
    "adversary without any possible source": (
        [ROBUST],
        '\n[[perturbations]]\nname = "adv"\ntype = "adversary"\n',
        22,
        "perturbations[0].source",
        r"must name an agent that trains an adversary",
    ),
    "duplicate agent labels": (
        [
            ('id = "q_learning"', 'id = "q_learning"\nlabel = "twin"'),
            ("params = { k = 3 }", 'params = { k = 3 }\nlabel = "twin"'),
        ],
        "",
        22,
        "agents[1].label",
        r"agents' labels must be distinct, case aside, got \['twin', 'twin'\]",
    ),
    "perturbations in a compare experiment": (
        [],
        '\n[[perturbations]]\nname = "zi"\ntype = "zi"\n',
        22,
        "perturbations[0]",
        r"perturbations belong to kind 'robustness', not 'compare'",
    ),
    "robustness without perturbations": (  # the line that asks for them: kind
        [ROBUST],
        "",
        1,
        "kind",
        r"a robustness experiment needs \[\[perturbations\]\]",
    ),
}


def edited(text: str, edits: list[tuple[str, str]], append: str) -> str:
    """``text`` with each ``old`` replaced by ``new`` (each must occur once) and ``append``."""
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text + append


def expect(path: Path, line: int, field: str, message: str) -> str:
    """The regex of a located message: ``{file}, line {n}: {field}: {message}``."""
    return "^" + re.escape(f"{path}, line {line}: {field}: ") + message


@pytest.mark.parametrize("case", list(BAD))
def test_bad_config(case, tmp_path, tiny_text):
    """Each mistake is a ConfigError naming the file, the exact line and the field."""
    edits, append, line, field, message = BAD[case]
    path = tmp_path / "bad.toml"
    path.write_text(edited(tiny_text, edits, append))
    with pytest.raises(ConfigError, match=expect(path, line, field, message)):
        load_config(path)


def test_missing_tape_file(tmp_path, tiny_text):
    """A relative tape that does not exist is named, resolved against the file's directory."""
    path = tmp_path / "bad.toml"
    path.write_text(tiny_text.replace("n_steps = 15", 'n_steps = 15\ntape = "nope.csv"'))
    message = re.escape(f"no such file or directory: {tmp_path / 'nope.csv'}") + "$"
    with pytest.raises(ConfigError, match=expect(path, 8, "market.tape", message)):
        load_config(path)


@pytest.fixture(scope="module")
def lobster_files(tmp_path_factory) -> tuple[Path, Path]:
    """A recorded day's level-1 LOBSTER files, named as LOBSTER names them."""
    folder = tmp_path_factory.mktemp("lobster")
    messages = folder / "DAY_34200000_57600000_message_1.csv"
    orderbook = folder / "DAY_34200000_57600000_orderbook_1.csv"
    write_lobster(synthetic_tape(0, n_steps=10, levels=1), messages, orderbook)
    return messages, orderbook


def _malformed(messages: Path) -> Path:
    """A copy of ``messages`` whose second row's size (column 4) reads ``abc``."""
    rows = messages.read_text().splitlines()
    cells = rows[1].split(",")
    rows[1] = ",".join([*cells[:3], "abc", *cells[4:]])
    copy = messages.with_name("malformed_message_1.csv")
    copy.write_text("\n".join(rows) + "\n")
    return copy


@pytest.mark.parametrize(
    "given, message",
    [
        (
            lambda m, o: o,
            "orderbook file (the book after each message), not its messages: "
            "give the message file, DAY_34200000_57600000_message_1.csv,",
        ),
        (lambda m, o: m.parent, "a directory without meta.json is not a converted tape"),
        (lambda m, o: _malformed(m), "line 2, column 4 (size): 'abc' is not a number"),
    ],
    ids=["orderbook file", "LOBSTER folder", "malformed row"],
)
def test_bad_tape_content_is_the_tapes(given, message, lobster_files, tmp_path, tiny_text):
    """An orderbook file given as the tape (which names the message file to give), a folder of
    LOBSTER files and a malformed row are each named at ``market.tape`` (the file's line 8)
    with the tape file and its line, not at an agent's parameters."""
    tape = given(*lobster_files)
    path = tmp_path / "bad.toml"
    path.write_text(tiny_text.replace("n_steps = 15", f'n_steps = 15\ntape = "{tape}"'))
    with pytest.raises(ConfigError) as error:
        load_config(path)
    assert str(error.value).startswith(f"{path}, line 8: market.tape: {tape}")
    assert message in str(error.value)
    assert "agents" not in str(error.value)


def test_invalid_toml(tmp_path, tiny_text):
    """A syntax error names the file and the line (from the TOML parser)."""
    path = tmp_path / "bad.toml"
    path.write_text(tiny_text.replace("n_steps = 15", "n_steps = = 15"))
    with pytest.raises(
        ConfigError, match="^" + re.escape(f"{path}: not valid TOML: ") + ".*line 7"
    ):
        load_config(path)


def test_unreadable_file(tmp_path):
    """A missing experiment file is a ConfigError naming it."""
    path = tmp_path / "absent.toml"
    with pytest.raises(ConfigError, match="^" + re.escape(f"{path}: cannot read")):
        load_config(path)


def test_defaults_filled(tiny_config, tiny_text):
    """A valid file gets its defaults filled in (market, output, seeds), labels = the ids; the
    market's defaults are `MarketSpec`'s: the spec of the fields given alone, the task filling
    those it gives (configs/taker.toml's reward scale and position limit)."""
    config = load_config(tiny_config)
    market = config.market
    assert (market.population, market.n_steps) == ("light", 15)  # as given
    assert market.tick_size is None
    assert market == MarketSpec(
        population="light", n_steps=15
    )  # every other field is the spec's default
    assert market.traders == () and market.tape is None and market.tape_seed == 0
    assert market.step_seconds == 60.0
    spec = market
    assert (spec.reward_scale, spec.position_limit, spec.parent_order) == (0.01, 500, 0)
    assert (market.task, market.actions, market.order_size) == ("taker", None, 100)
    assert market.action_set == "trade"  # the task's
    assert config.root_seed == 0
    training = {"episodes": 2, "evaluate_every": 0, "evaluate_episodes": 10, "sessions": 1}
    assert config.training == Training(**training, checkpoint_every=0)
    assert config.testing == schema.Testing(episodes=2)
    assert config.perturbations == ()
    assert config.output == Output(dir="runs/tiny", figures=True)
    fresh = {"saved": "", "train": True}
    assert config.agents == (
        AgentEntry(id="q_learning", label="q_learning", params={}, **fresh),
        AgentEntry(id="ra2q", label="ra2q", params={"k": 3}, **fresh),
    )
    assert config.text == tiny_text


def test_defaults_of_a_robustness_perturbation(tmp_path, tiny_text):
    """Perturbation defaults: mode takeover, p 0.2, n_agents 50, source = the first agent that
    trains an adversary; an agent given as module:Class is labelled by the class name."""
    text = edited(
        tiny_text,
        [
            ROBUST,
            ('id = "q_learning"', 'id = "tradearena.agents.baselines:Hold"'),
            ('"ra2q"', '"ra3q"'),
        ],
        '\n[[perturbations]]\nname = "adv"\ntype = "adversary"\n',
    )
    config = load_config(_write(tmp_path, text))
    assert [a.label for a in config.agents] == ["hold", "ra3q"]  # the class's name
    assert config.perturbations == (
        Perturbation(
            name="adv", type="adversary", mode="takeover", p=0.2, source="ra3q", n_agents=50
        ),
    )
    assert config.output.dir == "runs/tiny"


@pytest.mark.filterwarnings("ignore::tradearena.envs.data.load.ThinTape")  # a short tape
@pytest.mark.filterwarnings("ignore::tradearena.envs.data.load.PartialTape")  # no orderbook
def test_relative_tape_resolves_against_the_file(tmp_path, tiny_text, monkeypatch):
    """``market.tape = "data/x.csv"`` is read beside the config file, whatever the working
    directory, and the stored path is absolute."""
    data = tmp_path / "exp" / "data"
    data.mkdir(parents=True)
    write_lobster(synthetic_tape(0, n_steps=5), data / "tape_message_1.csv")
    path = _write(
        tmp_path / "exp",
        tiny_text.replace("n_steps = 15", 'n_steps = 4\ntape = "data/tape_message_1.csv"'),
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    config = load_config(path)
    assert config.market.tape == str(data / "tape_message_1.csv")
    result = run_job(plan(config)[0])  # the tape is read from there
    assert result.error is None
    assert {r.steps for r in result.records} == {4}
    with pytest.raises(
        ConfigError, match=re.escape(f"no such file or directory: {elsewhere}/data/")
    ):
        parse_config(path.read_text(), source="text")  # without a base: the working directory


def _write(directory: Path, text: str) -> Path:
    path = directory / "experiment.toml"
    path.write_text(text)
    return path


# ----------------------------------------------------------------------------- the CLI
def test_cli_bad_file_writes_nothing(tmp_path, tiny_text, capsys):
    """``run`` on a bad file: exit 2, one stderr line naming file, line and field, and no run
    directory."""
    path = _write(tmp_path, tiny_text.replace("seeds = 2", "seedz = 2"))
    out = tmp_path / "run"
    assert main(["run", str(path), "--executor", "local", "--out", str(out)]) == 2
    stdout, stderr = capsys.readouterr()
    assert stdout == ""
    lines = stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"tradearena: error: {path}, line 3: seedz: unknown key")
    assert not out.exists()


def test_cli_dry_run(tiny_config, tiny_jobs, tmp_path, monkeypatch, capsys):
    """``run --dry-run`` checks the file, lists the job ids and creates no run directory."""
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "run"
    assert main(["run", str(tiny_config), "--dry-run", "--out", str(out)]) == 0
    stdout, stderr = capsys.readouterr()
    assert stderr == ""
    assert stdout.splitlines() == [
        f"{tiny_config}: compare experiment, 4 jobs, valid",
        *(f"  {job}" for job in tiny_jobs),
    ]
    assert not out.exists() and not (tmp_path / "runs").exists()


def test_cli_truncated_gzip_tape_fails_before_writing(tmp_path, tiny_text, capsys):
    """A binance recording cut short (its gzip stream ends before its end marker): ``run``
    and ``run --dry-run`` both exit 2 with one line naming ``market.tape`` and the file, and
    write no run directory."""
    lines = [
        f"{10**18} " + json.dumps({"lastUpdateId": 5, "bids": [["100.00", "1.0"]], "asks": []})
    ]
    lines += [
        f"{10**18 + k * 10**8} "
        + json.dumps({"stream": "btcusdt@trade", "data": {"T": k, "p": "100.00", "q": "0.1"}})
        for k in range(1, 200)
    ]
    tape = tmp_path / "btcusdt.gz"
    tape.write_bytes(gzip.compress("".join(line + "\n" for line in lines).encode())[:-30])
    path = _write(
        tmp_path, tiny_text.replace("n_steps = 15", 'n_steps = 15\ntape_format = "binance"')
    )
    out = tmp_path / "run"
    for dry_run in (["--dry-run"], []):
        argv = ["run", str(path), "--set", f"market.tape={tape}", "--out", str(out), *dry_run]
        assert main([*argv, "--executor", "local"]) == 2
        stdout, stderr = capsys.readouterr()
        assert stdout == ""
        assert stderr.splitlines() == [
            f"tradearena: error: --set market.tape={tape}: market.tape: {tape}: truncated gzip "
            "(the compressed data ends before its end marker)"
        ]
        assert not out.exists()


def test_cli_set_errors_name_the_command_line(tmp_path, tiny_text, capsys):
    """A bad value given with --set is named as given (``--set KEY=VALUE``), whether the
    file has the key or not; a mistake in the file keeps its own line under overrides."""
    path = _write(tmp_path, tiny_text)
    cases = {
        "market.n_steps=abc": "market.n_steps: expected an integer, got 'abc'",
        "training.sessions=0": "training.sessions: must be in [1, 1,024] sessions, got 0",
        "market.task=makng": "market.task: must be one of",
    }
    for given, message in cases.items():
        assert main(["run", str(path), "--dry-run", "--set", given]) == 2
        (line,) = capsys.readouterr().err.splitlines()
        assert line.startswith(f"tradearena: error: --set {given}: {message}")
    path = _write(tmp_path, tiny_text.replace("seeds = 2", "seedz = 2"))
    assert main(["run", str(path), "--dry-run", "--set", "market.n_steps=5"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"tradearena: error: {path}, line 3: seedz: unknown key")


def test_cli_agents_lists_every_id(capsys):
    """``agents`` prints one line per registry id, with its description."""
    assert main(["agents"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == agents.names()
    for line, (name, text) in zip(lines, agents.describe().items()):
        assert line.startswith(name) and line.rstrip().endswith(text.rstrip())


def test_every_market_spec_field_can_be_set_in_a_file():
    """An experiment file's [market] table takes every `MarketSpec` field but the two that
    hold live objects (a discretizer) or serve recording only."""
    fields = {f.name for f in dataclasses.fields(MarketSpec)}
    assert fields - set(MARKET) == {"discretizer", "record"}


def test_a_file_sets_the_latency_models_and_names_a_misspelt_key(tmp_path, tiny_text):
    """[market] order_latency as a model table reaches the market; a misspelt key inside it is
    named with its line and the nearest key."""
    lines = '[market]\norder_latency = {model = "empirical", rows = [0.001, 0.004]}\n'
    path = _write(tmp_path, tiny_text.replace("[market]\n", lines + "feed_latency = 0.5\n"))
    market = load_market(path).market(1)
    assert (market.order_latency.rows, market.feed_latency) == ((0.001, 0.004), 0.5)
    path = _write(tmp_path, tiny_text.replace("[market]\n", lines.replace("rows", "rws")))
    with pytest.raises(ConfigError) as error:
        load_config(path)
    line = tiny_text.splitlines().index("[market]") + 2
    assert str(error.value).startswith(
        f"{path}, line {line}: market.order_latency.rws: no such parameter (did you mean 'rows'?)"
    )


SHIPPED = sorted((Path(__file__).resolve().parents[2] / "configs").glob("*.toml"))


@pytest.fixture(scope="module")
def lobster_day(tmp_path_factory) -> Path:
    """A recorded day of 390 one-minute steps (385 and the 5-minute warm-up), as long as a
    real one, so a config's ``window_steps`` fit it, written as a LOBSTER message file (its
    orderbook file beside)."""
    folder = tmp_path_factory.mktemp("lobster")
    messages = folder / "DAY_34200000_57600000_message_1.csv"
    orderbook = folder / "DAY_34200000_57600000_orderbook_1.csv"
    write_lobster(synthetic_tape(0, n_steps=385, levels=1), messages, orderbook)
    return messages


@pytest.mark.parametrize("path", SHIPPED, ids=[p.name for p in SHIPPED])
def test_every_shipped_config_is_valid(path, lobster_day, monkeypatch):
    """Every file in configs/ loads; one that takes its tape from the environment
    ($LOBSTER_MESSAGES) loads with a LOBSTER file given there."""
    tape = tomllib.loads(path.read_text())["market"].get("tape", "synthetic")
    if tape.startswith("$"):
        monkeypatch.setenv(tape.strip("${}"), str(lobster_day))
    config = load_config(path)
    assert config.agents and config.market.task in TASKS


def test_a_tape_named_by_the_environment_is_kept_as_the_file_it_named(lobster_day, monkeypatch):
    """A run keeps the file $LOBSTER_MESSAGES named in its config text (its config.toml), so
    that its report names the day and a resume under another value is a changed config."""
    path = SHIPPED[0].parent / "paper_sharpe_lobster.toml"
    monkeypatch.setenv("LOBSTER_MESSAGES", str(lobster_day))
    config = load_config(path)
    kept = tomllib.loads(config.text)["market"]["tape"]
    assert kept == config.market.tape == str(lobster_day)


def test_every_task_config_runs_the_market_of_its_gymnasium_id():
    """configs/TASK.toml (quickstart.toml for making) and gymnasium.make(the task's id) are
    one market: the task defaults it in both."""
    configs = {"making": "quickstart.toml"}
    for task in TASKS.values():
        path = SHIPPED[0].parent / configs.get(task.name, f"{task.name}.toml")
        from_config = load_config(path).market
        assert from_config == gymnasium.make(task.gym_id).unwrapped.market_spec, task.name


def test_every_task_has_a_config_with_its_reference_policy():
    shipped = [
        load_config(p)
        for p in SHIPPED
        if not tomllib.loads(p.read_text())["market"].get("tape", "").startswith("$")
    ]  # the configs that need no tape from the user
    for task in TASKS.values():
        ids = [
            {spec.id for spec in config.agents}
            for config in shipped
            if config.market.task == task.name
        ]
        assert ids, task.name
        assert not task.reference or any(task.reference in found for found in ids), task.name


def test_the_schema_is_declared_once_in_the_sections():
    """Each table of an experiment file is read from its section's fields (`schema.table_of`:
    a key's type, default, check and doc are its field's metadata), so that a key added to a
    section, in one place, is a key of its table, defaulted and checked."""
    sections = {
        "training": Training,
        "testing": schema.Testing,
        "tournament": Tournament,
        "psro": schema.Psro,
        "output": Output,
        "learned_from": schema.LearnedFrom,
    }
    for name, section in sections.items():
        assert TOP[name].default == schema.table_of(section), name
    assert schema.table_of(AgentEntry) == AGENT and schema.table_of(Perturbation) == PERTURBATION
    assert list(AGENT) == ["id", "label", "params", "from", "train"]  # from: AgentEntry.saved
    assert TOURNAMENT is TOP["tournament"].default and MARKET is TOP["market"].default

    @dataclasses.dataclass(frozen=True)
    class Longer(Training):
        warmup: int = schema.key(int, 2, *schema.within(0, 9), doc="added in one place")

    table = schema.table_of(Longer)
    where = schema.Locator("", "x.toml")
    assert list(table) == [*TOP["training"].default, "warmup"]
    assert schema.check_table({}, table, ("training",), where)["warmup"] == 2
    with pytest.raises(ConfigError, match=r"^x\.toml: training\.warmup: must be in \[0, 9\]"):
        schema.check_table({"warmup": 10}, table, ("training",), where)


def test_the_config_is_typed_frozen_and_read_once(tiny_config, monkeypatch):
    """The config holds a section per table (the agents' ``from`` as ``saved``) and the text
    as run, its market a `MarketSpec`; it is frozen and pickles to an equal config (jobs carry
    it to the workers); a file read with overrides has its TOML parsed once."""
    parsed, loads = [], tomllib.loads
    monkeypatch.setattr(tomllib, "loads", lambda text: parsed.append(text) or loads(text))
    config = load_config(tiny_config, {"seeds": 1})
    monkeypatch.undo()
    assert len(parsed) == 1
    assert [f.name for f in dataclasses.fields(schema.Config)] == [*TOP, "text", "agent_folders"]
    assert [f.name for f in dataclasses.fields(AgentEntry)] == [
        {"from": "saved"}.get(key, key) for key in AGENT
    ]
    assert isinstance(config.market, MarketSpec) and config.seeds == 1
    assert pickle.loads(pickle.dumps(config)) == config
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.seeds = 2  # type: ignore[misc]


def test_a_day_shorter_than_its_sessions_is_named_by_the_check(tmp_path, tiny_text):
    """``day_steps`` below ``n_steps`` (a session longer than the day it is a window of) is a
    `ConfigError` naming ``market.day_steps``, before any job."""
    path = _write(tmp_path, tiny_text.replace("n_steps = 15", "n_steps = 15\nday_steps = 10"))
    with pytest.raises(
        ConfigError, match=r"line 8: market\.day_steps: must be >= n_steps \(15\), got 10$"
    ):
        load_config(path)


@pytest.mark.parametrize(
    ("data", "line"),
    [
        ('kind = "compare"\nname = "café"\n'.encode("latin-1"), 2),
        ('kind = "compare"\n'.encode("utf-16"), 1),
        (bytes(range(256)), 2),  # a newline (byte 10) before the first byte above 127
    ],
    ids=["latin-1", "utf-16", "binary"],
)
def test_a_file_that_is_not_utf8_is_named_with_its_line(data, line, tmp_path):
    """An experiment or market file in another encoding (or not text): `ConfigError` naming
    the file and the line of its first byte that is not UTF-8."""
    path = tmp_path / "x.toml"
    path.write_bytes(data)
    for read, what in ((load_config, "experiment file"), (load_market, "market file")):
        with pytest.raises(ConfigError, match=f"x.toml, line {line}: the {what} is not UTF-8"):
            read(path)
