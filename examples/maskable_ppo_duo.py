"""Train sb3-contrib's MaskablePPO on ``BlokusDuo-v0`` (the learner against random opponents), then evaluate it.

    pip install sb3-contrib          # brings torch and stable-baselines3; not needed by blokus-jax itself
    python examples/maskable_ppo_duo.py --timesteps 20000
    python examples/maskable_ppo_duo.py --env-id BlokusDuoGreedy-v0 --timesteps 200000 --save ppo_duo

The env exposes ``action_masks()``, which MaskablePPO calls before every action, so the agent only ever picks legal
moves. The Dict observation (board planes, pieces left, colour to move, action mask) goes through SB3's
``MultiInputPolicy``. Evaluation reports the win rate over ``--eval-games`` games with the learner's seat drawn at
random each game.
"""

from __future__ import annotations

import argparse

import gymnasium
import numpy as np

import blokus_jax.adapters.gymnasium  # noqa: F401  (registers the Blokus ids)


def train(env_id: str, timesteps: int, seed: int):
    """Train a MaskablePPO agent on ``env_id`` for ``timesteps`` learner steps; returns the model."""
    from sb3_contrib import MaskablePPO

    env = gymnasium.make(env_id, seat="random")
    model = MaskablePPO(
        "MultiInputPolicy", env, n_steps=512, batch_size=128, learning_rate=3e-4, gamma=1.0, seed=seed, verbose=1
    )
    return model.learn(total_timesteps=timesteps)


def evaluate(model, env_id: str, games: int, seed: int) -> float:
    """The model's win rate (reward > 0) over ``games`` games, acting greedily among legal actions."""
    env = gymnasium.make(env_id, seat="random")
    wins = 0
    for g in range(games):
        obs, info = env.reset(seed=seed + g)
        done, reward = False, 0.0
        while not done:
            action, _ = model.predict(obs, action_masks=env.unwrapped.action_masks(), deterministic=True)
            obs, reward, terminated, truncated, info = env.step(int(action))
            done = terminated or truncated
        wins += reward > 0
    return wins / games


def main(argv: list[str] | None = None) -> None:
    """Parse arguments, train, evaluate and optionally save."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env-id", default="BlokusDuo-v0")
    parser.add_argument("--timesteps", type=int, default=20_000)
    parser.add_argument("--eval-games", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save", help="write the trained model to this path")
    args = parser.parse_args(argv)
    model = train(args.env_id, args.timesteps, args.seed)
    rate = evaluate(model, args.env_id, args.eval_games, args.seed + 10_000)
    print(
        f"win rate against the {args.env_id} opponents: {rate:.2f} over {args.eval_games} games "
        f"({np.sqrt(rate * (1 - rate) / args.eval_games):.2f} standard error)"
    )
    if args.save:
        model.save(args.save)


if __name__ == "__main__":
    main()
