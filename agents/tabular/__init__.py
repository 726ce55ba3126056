"""Tabular learners: Q tables as numpy arrays, one per ensemble member.

`raql`, `ra2q` and `ra3q` are the tabular forms of `agents.deep.raql`, `agents.deep.ra2q` and
`agents.deep.ra3q`: the same update rules, here on a table of states, there on a network of
market features.
"""
