"""Players: the heuristic bots, the policy-value networks, the shipped baselines and the catalog of built-in agents."""
