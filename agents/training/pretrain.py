"""Supervised start-up: train a run's network on positions labelled by a stronger player's moves and results.

A policy network learns the teacher's move (cross-entropy over the legal moves) and the game's result (the value
head, squared error), from `.blksgf` records (Pentobi's `twogtp` games, or any player's), replayed and checked by
`blokus_agents.search.positions.labelled_positions`. Whole games are held out (`held_out`), and the held-out
positions' top-1 and top-32 recall of the teacher's move say how well the network ranks strong moves.
`pretrain_run` writes a run directory with one checkpoint (update 0) and `pretrain.json` (data, settings, recall
per epoch), which `blokus-jax train --init-from` starts from, and which plays as an agent like any run.

    blokus-jax pretrain --variant duo --games 'games/*.blksgf' --held-out 'games/l6_chunk01*' \\
        --channels 16 --blocks 1 --prior model --epochs 6 --out runs/duo_pretrained
    blokus-jax train --variant duo --init-from runs/duo_pretrained --kl-coef 0.1 ... --out runs/duo_ppo

From Python, `pretrain(config, train_positions, held_out_positions, settings)` returns the trained parameters and
the per-epoch report, without touching the disk.
"""

from __future__ import annotations

import dataclasses
import glob
import json
import os
import time
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from blokus_agents.core.masking import masked_logits
from blokus_agents.players.configs import PPOConfig, PretrainSettings
from blokus_agents.search.positions import Positions, labelled_positions
from blokus_jax import symmetry
from blokus_jax.env import Env
from blokus_jax.errors import ConfigError

#: The recall cut-offs reported on the held-out positions (how often the teacher's move is among the top k).
RECALL_AT = (1, 8, 32)


def record_paths(patterns: list[str] | tuple[str, ...]) -> list[Path]:
    """The `.blksgf` files that `patterns` name (files, directories or globs), sorted and without repeats.

    Raises:
        ConfigError: a pattern names nothing, or no file is found.
    """
    paths: set[Path] = set()
    for pattern in patterns:
        path = Path(pattern)
        if path.is_dir():
            found = sorted(path.glob("*.blksgf"))
        else:
            found = [Path(p) for p in glob.glob(pattern)]
        if not found:
            raise ConfigError(f"--games {pattern!r} names no .blksgf file; give files, directories or globs")
        paths.update(p for p in found if p.is_file())
    return sorted(paths)


def _device_positions(positions: Positions) -> dict[str, Any]:
    """The arrays of `positions` a training step reads, on the default device."""
    return dict(
        states=jax.tree.map(jnp.asarray, positions.states),
        chosen=jnp.asarray(positions.chosen, jnp.int32),
        outcome=jnp.asarray(positions.outcome, jnp.float32),
    )


def make_steps(env: Env, network: Any, optimizer: optax.GradientTransformation, settings: PretrainSettings):
    """`(train_step, evaluate)`: one optimiser step on a batch of positions (reflected with probability
    `settings.reflect` where the variant allows), and the held-out metrics of a batch (summed top-k hits, the
    cross-entropy and value error), both jitted.

    Args:
        env: The environment.
        network: The network fitted.
        optimizer: The optimiser.
        settings: The pretraining settings (its `reflect` and `value_coef`).

    Returns:
        `(train_step, evaluate)`: `train_step(params, opt_state, data, index, key) -> (params, opt_state,
        (cross_entropy, value_error))` on the positions `index` of `data`, and `evaluate(params, data, index,
        valid) -> (hits, cross_entropy, value_error)`, sums over the `valid` positions (`hits` one per `RECALL_AT`).
    """
    reflect = settings.reflect > 0 and symmetry.is_reflection_symmetric(env.variant)
    mirror = jnp.asarray(symmetry.reflected_actions(env.variant)) if reflect else None
    observe = jax.vmap(env.observe)

    def inputs(states, chosen, key):
        obs, bits = observe(states), states.legal_bits
        if reflect:
            flip = jax.random.bernoulli(key, settings.reflect, chosen.shape)
            obs = jax.tree.map(
                lambda a, b: jnp.where(flip.reshape(-1, *([1] * (a.ndim - 1))), b, a),
                obs,
                symmetry.reflect_observation(obs),
            )
            bits = jnp.where(flip[:, None, None], symmetry.reflect_legal_bits(env.variant, bits), bits)
            chosen = jnp.where(flip, mirror[chosen], chosen)
        mask = states.replace(legal_bits=bits).legal_action_mask
        return obs, mask, chosen

    def losses(params, obs, mask, chosen, outcome):
        logits, value = network.apply(params, obs)
        logp = jax.nn.log_softmax(masked_logits(logits, mask), axis=-1)
        cross_entropy = -jnp.take_along_axis(logp, chosen[:, None], axis=-1)[:, 0]
        return logits, cross_entropy, (value - outcome) ** 2

    def loss(params, obs, mask, chosen, outcome):
        _, cross_entropy, value_error = losses(params, obs, mask, chosen, outcome)
        total = cross_entropy.mean() + settings.value_coef * value_error.mean()
        return total, (cross_entropy.mean(), value_error.mean())

    @jax.jit
    def train_step(params, opt_state, data, index, key):
        batch = jax.tree.map(lambda x: x[index], data)
        obs, mask, chosen = inputs(batch["states"], batch["chosen"], key)
        (_, terms), grads = jax.value_and_grad(loss, has_aux=True)(params, obs, mask, chosen, batch["outcome"])
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, terms

    @jax.jit
    def evaluate(params, data, index, valid):
        batch = jax.tree.map(lambda x: x[index], data)
        obs, mask = observe(batch["states"]), batch["states"].legal_action_mask
        logits, cross_entropy, value_error = losses(params, obs, mask, batch["chosen"], batch["outcome"])
        masked = masked_logits(logits, mask)
        chosen_logit = jnp.take_along_axis(masked, batch["chosen"][:, None], axis=-1)
        rank = jnp.sum(masked > chosen_logit, axis=-1)  # moves ranked strictly above the teacher's
        w = valid.astype(jnp.float32)
        hits = jnp.stack([jnp.sum(w * (rank < k)) for k in RECALL_AT])
        return hits, jnp.sum(w * cross_entropy), jnp.sum(w * value_error)

    return train_step, evaluate


def _held_out_metrics(evaluate, params, data, count: int, batch_size: int) -> dict[str, float]:
    """Top-k recall, cross-entropy and value error of `params` over the `count` positions of `data`."""
    hits, cross_entropy, value_error = np.zeros(len(RECALL_AT)), 0.0, 0.0
    for lo in range(0, count, batch_size):
        index = np.arange(lo, lo + batch_size)
        valid = index < count
        out = evaluate(params, data, jnp.asarray(np.minimum(index, count - 1)), jnp.asarray(valid))
        hits += np.asarray(out[0])
        cross_entropy += float(out[1])
        value_error += float(out[2])
    metrics = {f"top{k}": float(h / count) for k, h in zip(RECALL_AT, hits)}
    metrics.update(cross_entropy=cross_entropy / count, value_mse=value_error / count)
    return metrics


def pretrain(
    config: PPOConfig,
    train: Positions,
    held_out: Positions | None,
    settings: PretrainSettings | None = None,
    params: Any = None,
    progress: bool = True,
    verbose: bool = True,
) -> tuple[Any, list[dict[str, float]]]:
    """Fit `config`'s network to the teacher's moves and results in `train`.

    Args:
        config: the run config whose network is trained (`blokus_agents.players.networks.config_network`).
        train: the training positions.
        held_out: positions from other games, scored after every epoch (`None`: no held-out report).
        settings: the fitting's settings (default `PretrainSettings()`).
        params: parameters to start from (default: the network's fresh initialisation, seeded by
            `settings.seed`).
        progress: show a progress bar (tqdm) with the rate and the latest loss.
        verbose: print one line of held-out recall after every epoch.

    Returns:
        `(params, report)`: the trained parameters and one dict per epoch (`epoch`, `steps`, `seconds`, the mean
        training `cross_entropy` and `value_mse`, and the held-out `top1`, `top8`, `top32`, `cross_entropy` and
        `value_mse` prefixed `held_out_`).

    Raises:
        ConfigError: no training position, or a batch larger than the training positions.
    """
    from blokus_agents.players.networks import config_network
    from blokus_jax import make

    settings = PretrainSettings() if settings is None else settings
    if len(train) == 0:
        raise ConfigError("no training positions: give records with at least one position with a choice")
    if settings.batch_size > len(train):
        raise ConfigError(
            f"batch size {settings.batch_size} is larger than the {len(train)} training positions; lower it"
        )
    env = make(config.variant)
    network = config_network(config, env)
    steps_per_epoch = len(train) // settings.batch_size
    total = steps_per_epoch * settings.epochs
    schedule = optax.cosine_decay_schedule(settings.learning_rate, max(total, 1))
    optimizer = optax.chain(
        optax.clip_by_global_norm(settings.max_grad_norm),
        optax.adamw(schedule, eps=1e-5, weight_decay=settings.weight_decay),
    )
    key = jax.random.key(settings.seed)
    init_key, key = jax.random.split(key)
    if params is None:
        obs = jax.tree.map(lambda x: x[None], env.observe(env.init()))
        params = network.init(init_key, obs)
    opt_state = optimizer.init(params)
    train_step, evaluate = make_steps(env, network, optimizer, settings)
    data = _device_positions(train)
    held = _device_positions(held_out) if held_out is not None and len(held_out) else None
    rng = np.random.default_rng(settings.seed)

    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, desc="pretrain", unit="step", dynamic_ncols=True)
    report, start, done = [], time.perf_counter(), 0
    for epoch in range(1, settings.epochs + 1):
        order = rng.permutation(len(train))
        sums = np.zeros(2)
        for i in range(steps_per_epoch):
            index = jnp.asarray(order[i * settings.batch_size : (i + 1) * settings.batch_size])
            key, step_key = jax.random.split(key)
            params, opt_state, terms = train_step(params, opt_state, data, index, step_key)
            sums += np.asarray(terms, dtype=np.float64)
            done += 1
            if bar is not None:
                bar.update(1)
                if i % 20 == 0:
                    bar.set_postfix(epoch=epoch, ce=f"{float(terms[0]):.3f}")
        row = dict(
            epoch=epoch,
            steps=done,
            seconds=round(time.perf_counter() - start, 1),
            cross_entropy=float(sums[0] / steps_per_epoch),
            value_mse=float(sums[1] / steps_per_epoch),
        )
        if held is not None:
            metrics = _held_out_metrics(evaluate, params, held, len(held_out), settings.batch_size)
            row.update({f"held_out_{k}": v for k, v in metrics.items()})
            if verbose:
                (bar.write if bar is not None else print)(
                    f"epoch {epoch}: train cross-entropy {row['cross_entropy']:.3f}; held out top-1 "
                    f"{metrics['top1']:.3f}, top-32 {metrics['top32']:.3f}, value mse {metrics['value_mse']:.3f}"
                )
        report.append(row)
    if bar is not None:
        bar.close()
    return params, report


def split_by_games(positions: Positions, held_out_games: set[int]) -> tuple[Positions, Positions]:
    """`(train, held_out)`: the positions of `positions` outside and inside the games `held_out_games`."""
    inside = np.isin(positions.game, np.asarray(sorted(held_out_games), np.int64))
    return positions.take(np.flatnonzero(~inside)), positions.take(np.flatnonzero(inside))


def pretrain_run(
    config: PPOConfig,
    games: list[str],
    out_dir: str | os.PathLike,
    held_out: list[str] | None = None,
    settings: PretrainSettings | None = None,
    progress: bool = True,
    verbose: bool = True,
) -> dict[str, Any]:
    """Pretrain `config`'s network on the records `games` (files, directories or globs) and write it as a run
    directory `out_dir`: checkpoint 0 (the network, a fresh optimiser, `config`) and `pretrain.json`.

    Args:
        config: the run's config (its variant, network and prior); the PPO run that continues from the directory
            (`--init-from`) takes its network sizes.
        games: the training records.
        out_dir: the run directory to create; it must not hold a checkpoint.
        held_out: records kept out of the fit and scored after every epoch (removed from `games` if named there).
        settings: the fitting's settings.
        progress: show a progress bar.
        verbose: print what was read and each epoch's held-out recall.

    Returns:
        The summary written to `pretrain.json`.

    Raises:
        ConfigError: bad records or settings, or `out_dir` already holds a run.
    """
    from blokus_agents.players import checkpoint_index
    from blokus_agents.training import checkpoint
    from blokus_agents.training.ppo import make_train
    from blokus_jax import make

    settings = PretrainSettings() if settings is None else settings
    out = Path(out_dir)
    if checkpoint_index.saved_steps(out):
        raise ConfigError(f"{str(out)!r} already holds a run; give another --out")
    held_paths = record_paths(held_out) if held_out else []
    train_paths = [p for p in record_paths(games) if p not in set(held_paths)]
    if not train_paths:
        raise ConfigError("every --games file is also --held-out: nothing is left to train on")
    env = make(config.variant)
    start = time.perf_counter()
    train = labelled_positions(env, train_paths)
    held = labelled_positions(env, held_paths, first_game=int(train.game.max()) + 1) if held_paths else None
    read_seconds = time.perf_counter() - start
    if verbose:
        print(
            f"{len(train):,} training positions from {len(np.unique(train.game)):,} games"
            + (f", {len(held):,} held out from {len(np.unique(held.game)):,} games" if held is not None else "")
            + f" (read in {read_seconds:.0f} s)",
            flush=True,
        )
    params, report = pretrain(config, train, held, settings, progress=progress, verbose=verbose)
    trainer = make_train(config)
    runner = trainer.init(jax.random.PRNGKey(settings.seed))
    runner = runner.replace(params=jax.device_put(params, jax.tree.map(lambda x: x.sharding, runner.params)))
    runner = runner.replace(opt_state=trainer.optimizer.init(runner.params))
    if getattr(runner, "ref_params", None) is not None:
        runner = runner.replace(ref_params=jax.tree.map(jnp.copy, runner.params))
    out.mkdir(parents=True, exist_ok=True)
    checkpoint.save(out, runner, config)
    summary = dict(
        variant=config.variant,
        config=config.to_dict(),
        settings=dataclasses.asdict(settings),
        train_files=[str(p) for p in train_paths],
        held_out_files=[str(p) for p in held_paths],
        train_positions=len(train),
        held_out_positions=len(held) if held is not None else 0,
        epochs=report,
        seconds=round(time.perf_counter() - start, 1),
        device=jax.devices()[0].device_kind,
    )
    (out / "pretrain.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    return summary


__all__ = ["RECALL_AT", "PretrainSettings", "pretrain", "pretrain_run", "record_paths", "split_by_games"]
