"""Action distributions restricted to the legal actions: the masked logits and masked sampling that the network
policies, the trainers and the search share."""

from __future__ import annotations

import jax
import jax.numpy as jnp

#: Logit given to illegal actions: far below any real logit, yet finite so that `0 * logit` stays 0.
MASKED_LOGIT = -1e9


def masked_logits(logits: jax.Array, mask: jax.Array) -> jax.Array:
    """`logits` with illegal actions (`mask` false) set to `MASKED_LOGIT`, so that sampling, log-probs and
    entropy only see legal actions; returns an array of the same shape."""
    return jnp.where(mask, logits, MASKED_LOGIT)


def sample_masked(key: jax.Array, logits: jax.Array, mask: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Sample one legal action per row of `logits` (`[..., A]`) under `mask`; returns `(action int32[...],
    log_prob f32[...])`. An illegal action has probability exactly 0 (`exp(-1e9)` underflows)."""
    logp = jax.nn.log_softmax(masked_logits(logits, mask), axis=-1)
    action = jax.random.categorical(key, logp, axis=-1).astype(jnp.int32)
    return action, jnp.take_along_axis(logp, action[..., None], axis=-1)[..., 0]


__all__ = ["MASKED_LOGIT", "masked_logits", "sample_masked"]
