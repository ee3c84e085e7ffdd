"""The policy-value network: a small residual conv net over the egocentric observation of the player to move.

Design notes: `docs/design.md`.
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from blokus_jax.env import Env
from blokus_jax.errors import ConfigError
from blokus_jax.observe import Observation


def orientation_centres(env: Env) -> tuple[tuple[int, int], ...]:
    """Per orientation, the `(row, col)` offset of the centre cell of its bounding box from the top-left corner
    (rounded down); `PolicyValueNet` reads each placement's logit there."""
    return tuple((int(c[:, 0].max()) // 2, int(c[:, 1].max()) // 2) for c in env.tables.orientation_cells)


def centre_gather_table(centres: tuple[tuple[int, int], ...], rows: int, cols: int) -> tuple[np.ndarray, int]:
    """The gather table of the policy head and the padding it needs: `(int32[O * H * W], pad)`. Entry `a` of the
    table is the flat index, into a `[H + pad, W + pad, O]` logit tensor, of placement `a`'s orientation plane at
    the centre cell of its bounding box."""
    offsets = np.asarray(centres, np.int64)  # [O, 2]
    pad = int(offsets.max(initial=0))
    o, r, c = np.meshgrid(np.arange(len(offsets)), np.arange(rows), np.arange(cols), indexing="ij")
    rr, cc = r + offsets[o, 0], c + offsets[o, 1]
    return ((rr * (cols + pad) + cc) * len(offsets) + o).reshape(-1).astype(np.int32), pad


#: The convolution implementations of `Conv3x3` ("auto" picks one from the JAX backend at build time).
CONV_CHOICES = ("auto", "im2col", "native")

#: Backends on which "auto" picks the native convolution.
NATIVE_CONV_BACKENDS = ("gpu", "cuda", "rocm", "tpu")


def resolve_conv(conv: str = "auto", backend: str | None = None) -> str:
    """The concrete convolution form for `conv`: "im2col" or "native" unchanged; "auto" is "native" on an
    accelerator backend (`backend`, default `jax.default_backend()`, in `NATIVE_CONV_BACKENDS`) and
    "im2col" on CPU. Raises `ConfigError` for any other value."""
    if conv not in CONV_CHOICES:
        raise ConfigError(f"unknown convolution form conv={conv!r}; use one of {list(CONV_CHOICES)}")
    if conv != "auto":
        return conv
    backend = jax.default_backend() if backend is None else backend
    return "native" if backend.lower() in NATIVE_CONV_BACKENDS else "im2col"


class _DenseParams(nn.Module):
    """The parameters of an `nn.Dense(features)` over `in_features` inputs (same names, shapes and
    initialisers), returned instead of applied: the native form of `Conv3x3` reshapes them into a conv
    kernel, so that both forms share one parameter tree."""

    features: int

    @nn.compact
    def __call__(self, in_features: int) -> tuple[jax.Array, jax.Array]:
        kernel = self.param("kernel", nn.initializers.lecun_normal(), (in_features, self.features), jnp.float32)
        bias = self.param("bias", nn.initializers.zeros_init(), (self.features,), jnp.float32)
        return kernel, bias


class Conv3x3(nn.Module):
    """A 3x3 'same' convolution whose parameters are one dense layer `Dense_0` (`kernel [9 * Cin, Cout]`, bias)
    over the nine shifted copies of the input, concatenated in row-major `(i, j)` order.

    `conv="im2col"` computes it that way (nine shifted copies and one matmul): its gradient stays fast on XLA:CPU
    inside `lax.scan` (the trainer's minibatch loop), where the native convolution's backward pass measured ~30x
    slower. `conv="native"` reshapes the same kernel to `[3, 3, Cin, Cout]` (HWIO) and calls
    `lax.conv_general_dilated`, which is the fast path on GPU/TPU. Both forms compute the same function with the
    same parameter tree, so checkpoints move freely between them; "auto" picks by backend (`resolve_conv`).
    """

    features: int
    conv: str = "auto"

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        rows, cols, channels = x.shape[-3:]
        if resolve_conv(self.conv) == "im2col":
            padded = jnp.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
            patches = jnp.concatenate([padded[:, i : i + rows, j : j + cols] for i in range(3) for j in range(3)], -1)
            return nn.Dense(self.features, name="Dense_0")(patches)
        kernel, bias = _DenseParams(self.features, name="Dense_0")(9 * channels)
        # kernel row (i * 3 + j) * Cin + c is input channel c at offset (i - 1, j - 1): exactly HWIO [i, j, c, :]
        out = jax.lax.conv_general_dilated(
            x,
            kernel.reshape(3, 3, channels, self.features),
            window_strides=(1, 1),
            padding="SAME",
            dimension_numbers=("NHWC", "HWIO", "NHWC"),
        )
        return out + bias


class ResidualBlock(nn.Module):
    """Two 3x3 convolutions with a skip connection (pre-activation style, no normalisation)."""

    channels: int
    conv: str = "auto"

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        y = Conv3x3(self.channels, self.conv)(nn.relu(x))
        y = Conv3x3(self.channels, self.conv)(nn.relu(y))
        return x + y


class PolicyValueNet(nn.Module):
    """Residual conv policy-value network for one variant; `__call__(obs) -> (logits f32[..., A], value)` with
    `value` `f32[...]` when `value_dim` is 1 and `f32[..., value_dim]` (per seat, egocentric) otherwise.

    `logits` covers every action (`A = num_orientations * H * W + 1`, pass last) *before* masking (see
    `masked_logits`). Build it with `make_network` so that the orientation centres match the variant.
    `conv` chooses how the 3x3 convolutions are computed (`Conv3x3`); it does not change the parameters.
    `value_dim` only changes the shape of the value head's last layer (`[value_hidden, value_dim]`).
    """

    centres: tuple[tuple[int, int], ...]
    channels: int = 32
    blocks: int = 2
    value_hidden: int = 64
    conv: str = "auto"
    value_dim: int = 1

    @nn.compact
    def __call__(self, obs: Observation) -> tuple[jax.Array, jax.Array]:
        batch = obs.planes.shape[:-3]
        rows, cols = obs.planes.shape[-3:-1]
        x = obs.planes.reshape(-1, *obs.planes.shape[-3:])
        n = x.shape[0]
        extra = jnp.concatenate([obs.pieces.reshape(n, -1), obs.to_move.reshape(n, -1)], axis=-1)
        x = Conv3x3(self.channels, self.conv)(x) + nn.Dense(self.channels)(extra)[:, None, None, :]
        for _ in range(self.blocks):
            x = ResidualBlock(self.channels, self.conv)(x)
        x = nn.relu(x)

        table, pad = centre_gather_table(self.centres, rows, cols)
        planes = nn.Dense(len(self.centres))(x)  # 1x1 conv: [N, H, W, O]
        planes = jnp.pad(planes, ((0, 0), (0, pad), (0, pad), (0, 0)))
        placement = planes.reshape(n, -1)[:, table]
        logits = jnp.concatenate([placement, jnp.zeros((n, 1), placement.dtype)], axis=-1)

        pooled = jnp.concatenate([x.mean(axis=(1, 2)), x.max(axis=(1, 2)), extra], axis=-1)
        value = nn.Dense(self.value_dim)(nn.relu(nn.Dense(self.value_hidden)(pooled)))
        if self.value_dim == 1:
            return logits.reshape(*batch, -1), value[:, 0].reshape(batch)
        return logits.reshape(*batch, -1), value.reshape(*batch, self.value_dim)


def make_network(
    env: Env, channels: int = 32, blocks: int = 2, value_hidden: int = 64, conv: str = "auto", value_dim: int = 1
) -> PolicyValueNet:
    """A `PolicyValueNet` for `env`'s variant with `channels` conv channels and `blocks` residual
    blocks; returns the (unbound) flax module. `conv` ("auto", "im2col" or "native", see `Conv3x3`) is
    resolved here, from the backend at build time; every form has the same parameters, so any checkpoint loads.
    `value_dim` is 1 (a scalar value head) or `env.num_players` (a value per seat); `ConfigError` otherwise."""
    value_dim = int(value_dim)
    if value_dim not in (1, env.num_players):
        raise ConfigError(
            f"value_dim={value_dim}: the value head predicts the mover's result (1) or every seat's "
            f"({env.num_players} for {env.variant.name!r})"
        )
    return PolicyValueNet(orientation_centres(env), channels, blocks, value_hidden, resolve_conv(conv), value_dim)


def value_size(num_players: int, per_seat: bool) -> int:
    """Outputs of a value head for a variant of `num_players` players: 1 (the result of the player to move) with
    one or two players or when the head predicts the mover's result alone, else `num_players` (every seat's result
    in the mover's egocentric seat order, `blokus_agents.search.gumbel.egocentric_seats`)."""
    return int(num_players) if per_seat and num_players > 2 else 1


def config_network(config, env: Env, conv: str = "auto") -> PolicyValueNet:
    """The network of a training run's `config` (a `PPOConfig` or
    `AZConfig`) for `env` (its variant): its `channels`, `blocks` and
    `value_hidden`, and the value size of its algorithm (`value_dim`).
    Trainers, checkpoints and run-directory agents all build a run's network here."""
    value_dim = config.value_dim(env.num_players)
    return make_network(env, config.channels, config.blocks, config.value_hidden, conv, value_dim)
