"""Reports written from runs and from the schema: `reproduce` (docs/results.md from the
source text's experiments), `reference` (docs/config.md from the experiment files' schema)
and `policy_plots` (an agent's policy map).
"""
