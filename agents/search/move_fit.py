"""Fitting a move model: softmax regression on the moves a strong player chose (maximum likelihood, with optax),
and the recall of those moves by any scores.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from blokus_jax.errors import ConfigError


def softmax_loss(weights: jax.Array, features: jax.Array, legal: jax.Array, chosen: jax.Array, phase: jax.Array):
    """Mean negative log-likelihood of the `chosen` placements under the model's softmax over legal placements.

    Args:
        weights: `f32[phases, F]`.
        features: `f32[N, L, F]`: the features of up to `L` candidate placements of `N` positions.
        legal: `bool[N, L]`: which of the `L` slots hold a legal placement.
        chosen: `int32[N]`: the slot of the chosen placement.
        phase: `int32[N]`: each position's phase.

    Returns:
        The scalar loss.
    """
    scores = jnp.einsum("nlf,nf->nl", features, weights[phase])
    scores = jnp.where(legal, scores, -1e30)
    logp = jax.nn.log_softmax(scores, axis=-1)
    return -jnp.take_along_axis(logp, chosen[:, None], axis=-1).mean()


def fit(
    features: np.ndarray,
    legal: np.ndarray,
    chosen: np.ndarray,
    phase: np.ndarray,
    num_phases: int,
    *,
    l2: float = 1e-3,
    steps: int = 400,
    learning_rate: float = 0.05,
    batch: int = 2048,
    seed: int = 0,
    progress: Callable[[int, float], None] | None = None,
) -> np.ndarray:
    """Softmax regression of the chosen placements on their features, with Adam (optax) and an L2 penalty.

    Args:
        features: `f32[N, L, F]` candidate features (see `softmax_loss`).
        legal: `bool[N, L]`.
        chosen: `int32[N]` slot of each chosen placement (must be legal).
        phase: `int32[N]` phase of each position, below `num_phases`.
        num_phases: number of phases (weight rows).
        l2: weight of the L2 penalty on the weights.
        steps: optimiser steps (minibatches of `batch` positions).
        learning_rate: Adam's step size.
        batch: positions per minibatch.
        seed: minibatch order.
        progress: called with `(step, loss)` every 50 steps.

    Returns:
        `f32[num_phases, F]` fitted weights.
    """
    import optax

    n, _, width = features.shape
    if n == 0:
        raise ConfigError("no positions to fit")
    weights = jnp.zeros((num_phases, width), jnp.float32)
    optimiser = optax.adam(learning_rate)
    state = optimiser.init(weights)

    def loss_fn(w, f, m, c, p):
        return softmax_loss(w, f, m, c, p) + l2 * jnp.sum(w**2)

    @jax.jit
    def update(w, opt_state, f, m, c, p):
        loss, grad = jax.value_and_grad(loss_fn)(w, f, m, c, p)
        updates, opt_state = optimiser.update(grad, opt_state, w)
        return optax.apply_updates(w, updates), opt_state, loss

    rng = np.random.default_rng(seed)
    size = min(batch, n)
    for step in range(steps):
        idx = rng.choice(n, size, replace=False)
        batch_features = np.asarray(features[idx], np.float32)
        weights, state, loss = update(weights, state, batch_features, legal[idx], chosen[idx], phase[idx])
        if progress is not None and step % 50 == 0:
            progress(step, float(loss))
    return np.asarray(weights)


def recall_at(scores: np.ndarray, chosen: np.ndarray, ks: Sequence[int]) -> dict[int, float]:
    """Share of positions whose chosen action ranks among the `k` best by `scores` (ties count against it), for
    each `k`.

    Args:
        scores: `f32[N, A]` scores, `-inf` for illegal actions.
        chosen: `int32[N]` the chosen action of each position.
        ks: the cut-offs.

    Returns:
        `{k: recall}`.
    """
    scores = np.asarray(scores, np.float64)
    chosen = np.asarray(chosen)
    mine = scores[np.arange(len(chosen)), chosen]
    rank = (scores >= mine[:, None]).sum(axis=1)  # 1 = best; a tie with another action counts as worse
    return {k: float((rank <= k).mean()) if len(chosen) else float("nan") for k in ks}


__all__ = [
    "fit",
    "recall_at",
    "softmax_loss",
]
