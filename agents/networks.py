"""The policy-value network: a small residual conv net over the egocentric observation of the player to move.

Inputs are :class:`blokus_jax.Observation` fields (``planes`` ``[H, W, 2C]``, ``pieces`` ``[C, P]``, ``to_move``
``[C]``), with any leading batch axes. The piece inventory and turn one-hot enter through a dense layer whose output is
added to every cell of the first conv layer.

Policy head: the action layout is ``o * H * W + r * W + c`` with ``(r, c)`` the top-left corner of orientation ``o``'s
bounding box, so a 1x1 conv producing ``O`` logit planes already *is* the action tensor. The head reads the logit
of ``(o, r, c)`` at the centre cell of the placed piece's bounding box rather than at its corner (a precomputed gather
table, one lookup per action), so every placement is scored by the features of the cells it covers. The pass logit
is a constant 0: the pass is legal exactly when nothing else is, so it never competes with a placement.

Value head: global mean and max pooling, an MLP, one scalar: the expected final reward of the player to move (the
seat whose egocentric observation is given). Self-play routes each seat's decisions to this one head.
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from blokus_jax.env import Env
from blokus_jax.observe import Observation

#: Logit given to illegal actions: far below any real logit, yet finite so that ``0 * logit`` stays 0.
MASKED_LOGIT = -1e9


def orientation_centres(env: Env) -> tuple[tuple[int, int], ...]:
    """Per orientation, the ``(row, col)`` offset of the centre cell of its bounding box from the top-left corner
    (rounded down); :class:`PolicyValueNet` reads each placement's logit there."""
    return tuple((int(c[:, 0].max()) // 2, int(c[:, 1].max()) // 2) for c in env.tables.orientation_cells)


def centre_gather_table(centres: tuple[tuple[int, int], ...], rows: int, cols: int) -> tuple[np.ndarray, int]:
    """The gather table of the policy head and the padding it needs: ``(int32[O * H * W], pad)``. Entry ``a`` of the
    table is the flat index, into a ``[H + pad, W + pad, O]`` logit tensor, of placement ``a``'s orientation plane at
    the centre cell of its bounding box."""
    offsets = np.asarray(centres, np.int64)  # [O, 2]
    pad = int(offsets.max(initial=0))
    o, r, c = np.meshgrid(np.arange(len(offsets)), np.arange(rows), np.arange(cols), indexing="ij")
    rr, cc = r + offsets[o, 0], c + offsets[o, 1]
    return ((rr * (cols + pad) + cc) * len(offsets) + o).reshape(-1).astype(np.int32), pad


class Conv3x3(nn.Module):
    """A 3x3 'same' convolution written as nine shifted copies of the input and one dense layer (im2col).

    Same function as ``nn.Conv(features, (3, 3))``, but its gradient stays fast on XLA:CPU inside ``lax.scan``
    (the trainer's minibatch loop), where the native convolution's backward pass measured ~30x slower.
    """

    features: int

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        rows, cols = x.shape[-3:-1]
        padded = jnp.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
        patches = jnp.concatenate([padded[:, i : i + rows, j : j + cols] for i in range(3) for j in range(3)], -1)
        return nn.Dense(self.features)(patches)


class ResidualBlock(nn.Module):
    """Two 3x3 convolutions with a skip connection (pre-activation style, no normalisation)."""

    channels: int

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        y = Conv3x3(self.channels)(nn.relu(x))
        y = Conv3x3(self.channels)(nn.relu(y))
        return x + y


class PolicyValueNet(nn.Module):
    """Residual conv policy-value network for one variant; ``__call__(obs) -> (logits f32[..., A], value f32[...])``.

    ``logits`` covers every action (``A = num_orientations * H * W + 1``, pass last) *before* masking (see
    :func:`masked_logits`). Build it with :func:`make_network` so that the orientation centres match the variant.
    """

    centres: tuple[tuple[int, int], ...]
    channels: int = 32
    blocks: int = 2
    value_hidden: int = 64

    @nn.compact
    def __call__(self, obs: Observation) -> tuple[jax.Array, jax.Array]:
        batch = obs.planes.shape[:-3]
        rows, cols = obs.planes.shape[-3:-1]
        x = obs.planes.reshape(-1, *obs.planes.shape[-3:])
        n = x.shape[0]
        extra = jnp.concatenate([obs.pieces.reshape(n, -1), obs.to_move.reshape(n, -1)], axis=-1)
        x = Conv3x3(self.channels)(x) + nn.Dense(self.channels)(extra)[:, None, None, :]
        for _ in range(self.blocks):
            x = ResidualBlock(self.channels)(x)
        x = nn.relu(x)

        table, pad = centre_gather_table(self.centres, rows, cols)
        planes = nn.Dense(len(self.centres))(x)  # 1x1 conv: [N, H, W, O]
        planes = jnp.pad(planes, ((0, 0), (0, pad), (0, pad), (0, 0)))
        placement = planes.reshape(n, -1)[:, table]
        logits = jnp.concatenate([placement, jnp.zeros((n, 1), placement.dtype)], axis=-1)

        pooled = jnp.concatenate([x.mean(axis=(1, 2)), x.max(axis=(1, 2)), extra], axis=-1)
        value = nn.Dense(1)(nn.relu(nn.Dense(self.value_hidden)(pooled)))[:, 0]
        return logits.reshape(*batch, -1), value.reshape(batch)


def make_network(env: Env, channels: int = 32, blocks: int = 2, value_hidden: int = 64) -> PolicyValueNet:
    """A :class:`PolicyValueNet` for ``env``'s variant with ``channels`` conv channels and ``blocks`` residual
    blocks; returns the (unbound) flax module."""
    return PolicyValueNet(orientation_centres(env), channels, blocks, value_hidden)


def masked_logits(logits: jax.Array, mask: jax.Array) -> jax.Array:
    """``logits`` with illegal actions (``mask`` false) set to :data:`MASKED_LOGIT`, so that sampling, log-probs and
    entropy only see legal actions; returns an array of the same shape."""
    return jnp.where(mask, logits, MASKED_LOGIT)


def sample_masked(key: jax.Array, logits: jax.Array, mask: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Sample one legal action per row of ``logits`` (``[..., A]``) under ``mask``; returns ``(action int32[...],
    log_prob f32[...])``. An illegal action has probability exactly 0 (``exp(-1e9)`` underflows)."""
    logp = jax.nn.log_softmax(masked_logits(logits, mask), axis=-1)
    action = jax.random.categorical(key, logp, axis=-1).astype(jnp.int32)
    return action, jnp.take_along_axis(logp, action[..., None], axis=-1)[..., 0]
