"""The experiment machinery: an experiment file read once (`config`) into a typed config
(`schema`, which declares each key once), its tables checked (`checking`) and its market's
(`markets`: what the market's studies read too), planned into Jobs and run stage by stage
into its run directory (`runner`, `kinds`: the kinds' registry, `rollout`: what every kind
shares, `profiles`: a game's profile played), on Ray or locally (`parallel`), its results
kept in SQLite (`store`), its agents saved (`trained`), read back (`rundir`) and tested
again (`evaluate`), its summary tables and figures written (`tables`). Its `kinds` is the
registry of the experiment kinds, whose modules are the room `evaluation.kinds`.
"""
