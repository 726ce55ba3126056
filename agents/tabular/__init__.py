"""Tabular learners: Q tables as numpy arrays, one per ensemble member."""
