"""The experiment kinds, one module each (`compare`, `robustness`, `tournament`, `psro`; with
`role_games` for a tournament's roles), each answering `evaluation.experiment.kinds`'s
protocol (check, plan, run, tables, figures). None imports another, nor the market's judges.

`psro` is the kind that trains the responses and plays the profiles; the loop it drives over
a payoff table is `evaluation.analysis.psro`, which knows no agent.
"""
