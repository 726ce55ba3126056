"""What the README shows a newcomer: its command block names every subcommand, and its Python
blocks run as written (the replay one on a tape the product records itself)."""

from __future__ import annotations

import argparse
import re
import sys
import types
from pathlib import Path

from tradearena import agents
from tradearena.evaluation.cli.parser import build_parser

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def blocks(language: str, text: str = README) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, re.S)


def test_the_command_block_names_every_subcommand():
    (commands,) = (a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    block = blocks("sh", README.split("### The command", 1)[1])[0]
    named = {line.split()[1] for line in block.splitlines() if line.startswith("tradearena ")}
    assert sorted(named) == sorted(commands.choices)
    assert "tradearena data check" in block


def test_the_python_blocks_run(monkeypatch):
    """The environments block and the custom agent (in a module of their own, so that it
    pickles), which then keeps the contract in the replayed synthetic day the environments
    block made."""
    module = types.ModuleType("readme_blocks")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    namespace = module.__dict__
    (environments,) = (b for b in blocks("python") if "make_vec" in b)
    (agent,) = (b for b in blocks("python") if "class Contrarian" in b)
    exec(compile(environments, "README.md", "exec"), namespace)
    assert namespace["obs"].shape[0] == 256 and namespace["day"].complete
    exec(compile(agent, "README.md", "exec"), namespace)
    replay = namespace["gym"].make("tradearena/ReplayMarket-v0", tape=namespace["day"], n_steps=60)
    report = agents.check_agent(namespace["Contrarian"], replay, steps=20)
    assert (report.name, report.environment, report.steps) == (
        "contrarian",
        "tradearena/ReplayMarket-v0",
        20,
    )
    assert {0, 2} <= set(report.actions)  # it trades: sells after a rise, buys after a fall
