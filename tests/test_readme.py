"""What the README shows a newcomer runs as written: the loop that trains RAQL in the making
market, and the custom agent, which then keeps the contract in a replayed synthetic day."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import gymnasium as gym

from tradearena import agents
from tradearena.envs.simulator.recording import synthetic_tape

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def blocks(language: str, text: str = README) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, re.S)


def test_the_readme_is_a_front_door():
    """At most 200 lines, its links into docs/ naming pages that exist."""
    assert len(README.splitlines()) <= 200
    root = Path(__file__).resolve().parents[1]
    links = re.findall(r"\]\((docs/[^)#]+)", README)
    assert links and [link for link in links if not (root / link).exists()] == []


def test_the_python_blocks_run(monkeypatch):
    """The loop (RAQL trained over 20 sessions: its table is no longer zeros) and the custom
    agent (in a module of its own, so that it pickles), checked in a replayed synthetic day."""
    module = types.ModuleType("readme_blocks")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    namespace = module.__dict__
    (loop,) = (b for b in blocks("python") if "gym.make" in b)
    (agent,) = (b for b in blocks("python") if "class Contrarian" in b)
    exec(compile(loop, "README.md", "exec"), namespace)
    assert namespace["agent"].q.any()
    exec(compile(agent, "README.md", "exec"), namespace)
    replay = gym.make("tradearena/ReplayMarket-v0", tape=synthetic_tape(seed=7), n_steps=60)
    report = agents.check_agent(namespace["Contrarian"], replay, steps=20)
    assert (report.name, report.environment, report.steps) == (
        "contrarian",
        "tradearena/ReplayMarket-v0",
        20,
    )
    assert {0, 2} <= set(report.actions)  # it trades: sells after a rise, buys after a fall


def test_the_set_up_names_what_it_needs_and_how_to_reach_the_command():
    """The prerequisites before the two commands; `source .venv/bin/activate` before the first
    `tradearena` command; and `make run` printing it as its last line."""
    setup = README.split("## Two commands", 1)[1]
    for needed in ("Python 3.11 or later with its `venv` module", "`make`", "C and C++ compiler"):
        assert needed in setup.split("```sh", 1)[0]
    first = re.search(r"`tradearena [a-z]", README).start()
    assert README.index("source .venv/bin/activate") < first
    makefile = (Path(__file__).resolve().parents[1] / "Makefile").read_text()
    recipe = makefile.split("\nrun: ", 1)[1].split("\n\n", 1)[0].splitlines()
    assert recipe[-1].strip().startswith('@echo "next: source $(BIN)/activate')
