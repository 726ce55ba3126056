"""Analysis of numbers and days: functions of arrays and tables that import no agent, no
market and no experiment machinery (of the project, only `envs.errors`).

- a run's numbers: `metrics` (per-episode metrics, intervals) and `summary` (across seeds);
- a day's realism: `realism` (stylized facts and their distances), `discriminator` (the
  classifier two-sample test), `realism_plots`, `impact` (the impact exponent and the
  impact scorecard's statistics), `impact_plots`, `response` (the response to a market
  order), `response_plots` and `transfer` (carry-over and a zoo's predictivity);
- empirical games: `payoffs`, `dynamics`, `equilibria`, `resampling`, `alpharank`, `roles`,
  `reduction`, `psro` and `games`;
- figures: `plots`.

Modules of other rooms share these names because they serve them: each command of the
market's judges has its measures here under its own name (`evaluation.market.realism` reads
the days and calls `realism`, `evaluation.market.transfer` plays the zoo and calls
`transfer`, `evaluation.market.impact` trades its scripts and calls `impact`,
`evaluation.market.response` trades a seat's market orders and calls `response`);
`evaluation.cli.games` prints what `games` computes; `evaluation.kinds.psro` is the
experiment kind that runs the `psro` loop with agents and markets; and
`envs.simulator.impact` reads off simulated days the price moves `impact` fits.
"""
