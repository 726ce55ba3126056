"""What happened: rollouts, parallel execution, results, metrics, payoff tables, dynamics, plots."""
