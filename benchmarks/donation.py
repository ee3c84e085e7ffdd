"""Peak device memory of one training update with and without donating the runner, from XLA's own memory analysis
of the compiled update (nothing is run). ``trainer.update`` donates its runner (:func:`blokus_agents.training.scaffold.
jit_trainer`): the runner's buffers (the games, AlphaZero's replay buffer) are reused for the new runner instead of
copied. Without donation the update needs the old and the new runner at once.

    python benchmarks/donation.py                       # AlphaZero on duo (64 games) and PPO on duo (64 games)
    python benchmarks/donation.py --num-envs 256 --variant classic_2p

Peak bytes are ``argument + output - aliased + temp`` of ``compiled.memory_analysis()``.
"""

from __future__ import annotations

import argparse

import jax

from blokus_agents.players.configs import AZConfig, PPOConfig
from blokus_agents.training.algorithms import make_trainer


def peak_bytes(compiled) -> dict[str, int]:
    """Argument, output, aliased (donated and reused), temporary and peak bytes of a compiled function."""
    m = compiled.memory_analysis()
    peak = m.argument_size_in_bytes + m.output_size_in_bytes - m.alias_size_in_bytes + m.temp_size_in_bytes
    return {
        "argument": m.argument_size_in_bytes,
        "output": m.output_size_in_bytes,
        "aliased": m.alias_size_in_bytes,
        "temp": m.temp_size_in_bytes,
        "peak": peak,
    }


def compare(config) -> dict[str, dict[str, int]]:
    """Memory of ``config``'s update compiled with the runner donated (the trainer's ``update``) and without."""
    trainer = make_trainer(config)
    runner = jax.eval_shape(trainer.init_pure, jax.random.PRNGKey(0))
    return {
        "donated": peak_bytes(trainer.update.lower(runner).compile()),
        "copied": peak_bytes(jax.jit(trainer.update_pure).lower(runner).compile()),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="duo")
    parser.add_argument("--num-envs", type=int, default=64)
    args = parser.parse_args(argv)
    n = args.num_envs
    configs = {
        "AlphaZero": AZConfig(variant=args.variant, num_envs=n, batch_size=4 * n),
        "PPO": PPOConfig(variant=args.variant, num_envs=n),
    }
    device = jax.devices()[0]
    print(f"\n## Donating the runner: update memory, {args.variant}, {n} games, on {device.platform}\n")
    print("| trainer | runner MB | peak MB donated | peak MB copied | saved MB |")
    print("|---|---|---|---|---|")
    for name, config in configs.items():
        r = compare(config)
        mb = lambda b: f"{b / 2**20:.1f}"  # noqa: E731
        saved = r["copied"]["peak"] - r["donated"]["peak"]
        print(
            f"| {name} | {mb(r['donated']['argument'])} | {mb(r['donated']['peak'])} | {mb(r['copied']['peak'])} | "
            f"{mb(saved)} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
