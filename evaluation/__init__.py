"""What happened: rollouts, parallel execution, results, metrics, payoff tables, dynamics, plots."""

if (
    __name__ != "tradearena.evaluation"
):  # the folder imported by its bare name, from the project's root
    raise ImportError(
        f"{__name__} is installed as tradearena.evaluation: import tradearena.evaluation"
    )
