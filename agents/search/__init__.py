"""Tree search over the exact environment: its settings, Gumbel MuZero search, the `mcts`, `strong` and `az:`
players."""
