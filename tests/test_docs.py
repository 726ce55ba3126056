"""What the docs/ pages show runs as written.

Every ```python block of every page runs, the blocks of a page in turn in one namespace, in a
folder of its own (`test_every_python_block_runs`). A block that needs a long run or a file
the project does not ship is marked by the line ``<!-- no-run: why -->`` just above its fence,
visible in the page's source, and runs elsewhere (the reason says where) or not at all; the
marked set is `NO_RUN`, kept small. Then, page by page: the command page's block names every
subcommand; the learner page's class keeps the contract, its command checks it, and its
experiment file trains it (shortened here); the SB3 page's calls and recipe run.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from tradearena import agents
from tradearena.evaluation.cli.main import main
from tradearena.evaluation.cli.parser import build_parser

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES = sorted(DOCS.glob("*.md"))
NO_RUN = re.compile(r"<!-- no-run: [^>]+ -->\n```python\n")


def blocks(language: str, text: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, re.S)


def runnable(text: str) -> list[str]:
    """The page's Python blocks but those marked ``<!-- no-run: ... -->``."""
    return blocks("python", NO_RUN.sub("```skipped\n", text))


def test_the_no_run_set_is_small():
    """Two blocks are marked: the SB3 recipe's long training (run shortened below) and the
    saving block, whose files (a LOBSTER day, a saved agent of one's own) are not shipped."""
    marked = {p.name: len(NO_RUN.findall(p.read_text())) for p in PAGES}
    assert {name: n for name, n in marked.items() if n} == {"agents.md": 1, "sb3.md": 1}


@pytest.mark.parametrize("page", [p.name for p in PAGES if runnable(p.read_text())])
def test_every_python_block_runs(page, tmp_path, monkeypatch):
    """The page's runnable blocks, in order, in one namespace, from an empty folder."""
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": f"docs_{page.removesuffix('.md')}"}
    for block in runnable((DOCS / page).read_text()):
        exec(compile(block, f"docs/{page}", "exec"), namespace)
    if page == "environments.md":
        assert namespace["obs"].shape[0] == 256 and namespace["day"].complete


def test_the_command_block_names_every_subcommand():
    """docs/command-line.md's command block names every subcommand of `tradearena`."""
    (commands,) = (a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    text = (DOCS / "command-line.md").read_text()
    block = blocks("sh", text.split("## The command", 1)[1])[0]
    named = {line.split()[1] for line in block.splitlines() if line.startswith("tradearena ")}
    assert sorted(named) == sorted(commands.choices)
    assert "tradearena data check" in block


def test_the_command_block_lists_each_commands_options():
    """Each command's synopsis in docs/command-line.md names exactly the options its parser
    takes (``-h`` aside), so that neither the page nor ``--help`` drifts from the other."""
    text = (DOCS / "command-line.md").read_text()
    block = blocks("sh", text.split("## The command", 1)[1])[0]
    synopses: dict[tuple[str, ...], set[str]] = {}
    words: tuple[str, ...] = ()
    for line in block.splitlines():
        line = line.split("#", 1)[0]
        if line.startswith("tradearena "):
            names = [w for w in line.split()[1:3] if w.isalpha()]
            words = tuple(names[:2] if names[:1] == ["data"] and len(names) > 1 else names[:1])
            synopses.setdefault(words, set())
        synopses[words] |= set(re.findall(r"(--[a-z][a-z-]*)", line))

    def options(parser: argparse.ArgumentParser) -> set[str]:
        return {o for a in parser._actions for o in a.option_strings if o.startswith("--")} - {
            "--help"
        }

    def sub(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
        found = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        return found[0].choices if found else {}

    for name, parser in sub(build_parser()).items():
        assert synopses[(name,)] == options(parser), name
        for inner, nested in sub(parser).items():
            assert synopses[(name, inner)] == options(nested), (name, inner)


SHORT = [
    *("--set", "seeds=1", "--set", "market.n_steps=10", "--set", "training.episodes=16"),
    *("--set", "training.evaluate_every=8", "--set", "training.evaluate_episodes=2"),
    *("--set", "testing.episodes=2"),
]
"""The learner page's run, shortened: one seed, 16 training sessions of 10 steps."""


def test_the_learner_page_runs(tmp_path, monkeypatch, capsys):
    """Its class saved as sarsa.py passes `agents --check`; its experiment file, run with the
    page's command (shortened, on the local executor), trains it: the saved agent's Q-table
    is no longer zeros, in a batched market of 8 sessions."""
    text = (DOCS / "learner.md").read_text()
    (code,) = blocks("python", text)
    (config,) = blocks("toml", text)
    check, run = blocks("sh", text)
    monkeypatch.chdir(tmp_path)
    Path("sarsa.py").write_text(code)
    Path("sarsa.toml").write_text(config)
    assert main(check.split()[1:]) == 0
    assert "learning   yes" in capsys.readouterr().out
    assert main([*run.split()[1:], "--executor", "local", "--no-progress", *SHORT]) == 0
    assert "expected_sarsa" in capsys.readouterr().out
    agent = agents.load("runs/sarsa/agents/expected_sarsa/seed-0", custom=["sarsa:ExpectedSarsa"])
    assert np.abs(agent.q).sum() > 0


def test_the_sb3_page_calls_run_as_written():
    """docs/sb3.md's SB3 calls on the registered id (the first block) make the envs, and its
    recipe's block trains (here for 256 steps)."""
    first, recipe = blocks("python", (DOCS / "sb3.md").read_text())
    namespace: dict = {}
    exec(compile(first, "docs/sb3.md", "exec"), namespace)
    assert namespace["venv"].num_envs == 8 and namespace["model"].env.num_envs == 1
    exec(compile(recipe.replace("30_000", "256"), "docs/sb3.md", "exec"), namespace)
    assert namespace["ppo"].num_timesteps >= 256


def test_the_sb3_example_prints_a_line_per_policy(capsys, monkeypatch):
    """examples/sb3_making.py, shortened: the trained policy, random quoting and holding,
    each scored on the same test sessions (torch's threads as they were, after)."""
    monkeypatch.setattr(torch, "set_num_threads", lambda n: None)
    path = DOCS.parent / "examples" / "sb3_making.py"
    spec = importlib.util.spec_from_file_location("sb3_making", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    for algorithm in ("PPO", "DQN"):
        example.main(["--algorithm", algorithm, "--steps", "1100", "--test-sessions", "2"])
        lines = capsys.readouterr().out.splitlines()
        assert lines[0].startswith(f"{algorithm}: 1,100 steps (8 sessions) in ")
        assert [line.split(":")[0].strip() for line in lines[1:]] == [algorithm, "random", "hold"]
        assert lines[3].endswith("$  0.00 +- 0.00 per session (2 sessions)")


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a name under a module that is no package
        return False


def named_object(name: str) -> object:
    """What a dotted name of the project names (``evaluation.market.fit.LIGHT_SPACE``): its
    longest prefix that is a module, then attributes; AttributeError when there is none."""
    parts = name.split(".")
    k = 1
    while k < len(parts) and _is_module(".".join(("tradearena", *parts[: k + 1]))):
        k += 1
    found = importlib.import_module(".".join(("tradearena", *parts[:k])))
    for attribute in parts[k:]:
        found = getattr(found, attribute)
    return found


def test_the_pages_name_modules_and_test_files_that_exist():
    """Every module (or a module's name) a page names in code, ``envs.X``, ``agents.X`` or
    ``evaluation.X``, is there; and every file of tests/ that a page, the README or a
    docstring of the three packages names exists (a page named ``evaluation.schema``, since
    moved to ``evaluation.experiment.schema``; the sampler's docstring a test file since moved)."""
    pages = [*PAGES, *sorted((DOCS / "reference").rglob("*.md")), DOCS.parent / "README.md"]
    missing = []
    for page in pages:
        for name in re.findall(r"`((?:envs|agents|evaluation)(?:\.\w+)+)`", page.read_text()):
            try:
                named_object(name)
            except AttributeError:
                missing.append((page.name, name))
    folders = ("envs", "agents", "evaluation")
    sources = [p for folder in folders for p in (DOCS.parent / folder).rglob("*.py*")]
    for path in [*pages, *sources]:
        if path.suffix in (".md", ".py", ".pyx", ".pyi", ".pxd"):
            for test in re.findall(r"tests/[\w/]+\.py", path.read_text()):
                if not (DOCS.parent / test).exists():
                    missing.append((path.name, test))
    assert missing == []


def test_the_pages_give_learns_time_as_benchmarks_measures_it():
    """How long `tradearena learn` takes on the AMZN sample morning: one figure, measured
    for benchmarks.md, on every page that says (they said seconds, 2.4 min and 156 s)."""
    measured = re.search(
        r"`tradearena learn` on the same morning: (\d+) s of CPU",
        (DOCS / "benchmarks.md").read_text(),
    )
    your_day = re.findall(r"(\d+) s of CPU", (DOCS / "your-day.md").read_text())
    realism = re.findall(
        r"tradearena learn \$DAY .*# (\d+) s of CPU", (DOCS / "realism-results.md").read_text()
    )
    assert your_day == realism == [measured.group(1)]


def test_the_quickstarts_time_is_said_one_way_with_its_benchmark():
    """README and the quickstart page say how long `make run` takes the same way, quiet and
    shared, naming the benchmark whose figure bears it out (README said "under a minute on 2
    cores", measured at 1:14-1:35 on a loaded machine)."""
    said = "in under a minute on 2 quiet cores, minutes when other work shares them"
    readme = " ".join((DOCS.parent / "README.md").read_text().split())
    page = " ".join((DOCS / "quickstart.md").read_text().split())
    assert said in readme and said in page and "`quickstart_run_s`" in readme + page
    row = re.search(
        r"\| `quickstart_run_s` /.*?\| ([\d.]+) s /", (DOCS / "benchmarks.md").read_text()
    )
    assert float(row.group(1)) < 60
