"""What happened to the agents and the market, in rooms that import only the rooms below them
(tests/test_imports.py), from the bottom:

- `evaluation.analysis`: numbers and figures of arrays and tables (a run's metrics, the
  judges' measures, the games' equilibria and dynamics);
- `evaluation.experiment`: experiment files read once into a typed config, their jobs run in
  parallel into a run directory, resumable;
- `evaluation.kinds` (the experiment kinds: compare, robustness, tournament, psro) beside
  `evaluation.market` (the market judged against real days, fitted to them, learned from
  them);
- `evaluation.reports`: the pages written from runs and from the schema;
- `evaluation.cli`: the ``tradearena`` command.
"""

if (
    __name__ != "tradearena.evaluation"
):  # the folder imported by its bare name, from the project's root
    raise ImportError(
        f"{__name__} is installed as tradearena.evaluation: import tradearena.evaluation"
    )
