"""Random agents playing Blokus through the PettingZoo AEC API (every player is an agent).

    python examples/pettingzoo_random.py                  # 3 games of Duo, prints each final board and result
    python examples/pettingzoo_random.py --variant classic --games 10

Each agent samples uniformly from its action mask, the standard PettingZoo loop; only ``blokus_jax`` and
``pettingzoo`` are needed.
"""

from __future__ import annotations

import argparse

import numpy as np

from blokus_jax.adapters.pettingzoo import env as blokus_env


def play(variant: str = "duo", games: int = 3, seed: int = 0, show: bool = True) -> list[dict[str, float]]:
    """Play ``games`` random games of ``variant``; returns each game's final reward per agent."""
    game = blokus_env(variant, render_mode="ansi")
    rng = np.random.default_rng(seed)
    results = []
    for g in range(games):
        game.reset(seed=seed + g)
        totals = {agent: 0.0 for agent in game.agents}
        for agent in game.agent_iter():
            obs, reward, terminated, truncated, _ = game.last()
            totals[agent] += reward
            if terminated or truncated:
                game.step(None)
                continue
            game.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        results.append(totals)
        if show:
            print(game.render())
            print(f"game {g}: rewards {totals}\n")
    return results


def main(argv: list[str] | None = None) -> None:
    """Parse arguments and play."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variant", default="duo")
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    play(args.variant, args.games, args.seed)


if __name__ == "__main__":
    main()
