"""The market judged and fitted against real days: `sources` (tapes and simulated days as a
level-1 file shows them), the judges `realism` (``tradearena realism``), `transfer`
(``tradearena transfer``), `response` (``tradearena response``) and `impact` (``tradearena
impact``: the impact scorecard, a seat trading in each market), the moment fit `fit` and
its search `search` (``tradearena fit``), and `learn` (``tradearena learn``). It knows no
experiment kind.

Each judge has its measures in the analysis room under the same name: `realism` reads the
days and judges them with `evaluation.analysis.realism`, `transfer` plays a policy zoo and
scores it with `evaluation.analysis.transfer`, `impact` trades its scripts in each market and
scores them with `evaluation.analysis.impact` (while `envs.simulator.impact` reads a
population's metaorders off simulated days), `response` trades a seat's market orders and
measures the answer with `evaluation.analysis.response`. The room's name is the market's, as is
`envs.simulator.market` (one session of it) and `evaluation.cli.market` (the handlers of the
commands above).
"""
