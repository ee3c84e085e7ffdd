"""Training: configs, the PPO and AlphaZero trainers and their scaffold, replay, checkpoints, run directories."""
