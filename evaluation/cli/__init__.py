"""The ``tradearena`` command: `main` (the entry point, a user's errors as one line and exit
status 2), `parser` (one subcommand per handler), the handlers by area (`experiments`,
`market`, `games`, `data`) and `text` (the tables a command prints).

The handler modules are named by the area they serve, so four names recur in the rooms
below: `market` handles the commands of the market's judges and fit (`evaluation.market`;
`envs.simulator.market` is one session of the market), `data` those of the tapes
(`envs.data`), `games` prints what `evaluation.analysis.games` computes, and `text` formats
tables as text (`envs.data.text` scans an exchange's text into columns).
"""
