"""The policy-value network: a small residual conv net over the egocentric observation of the player to move.

Design notes: `docs/design.md`.
"""

from __future__ import annotations

import functools

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

import blokus_jax
from blokus_agents.core.options import MODEL_PRIORS, NETWORK_PRIORS, PRECISION_CHOICES
from blokus_agents.search.move_features import observation_phase, observation_planes, placement_scores
from blokus_agents.search.move_model import MoveModel, shipped_model
from blokus_jax.env import Env
from blokus_jax.errors import ConfigError
from blokus_jax.observe import Observation


def orientation_centres(env: Env) -> tuple[tuple[int, int], ...]:
    """Per orientation, the `(row, col)` offset of the centre cell of its bounding box from the top-left corner
    (rounded down); `PolicyValueNet` reads each placement's logit there."""
    return tuple((int(c[:, 0].max()) // 2, int(c[:, 1].max()) // 2) for c in env.tables.orientation_cells)


def centre_gather_table(centres: tuple[tuple[int, int], ...], rows: int, cols: int) -> tuple[np.ndarray, int]:
    """The gather table of the policy head and the padding it needs.

    Entry `a` of the table is the flat index, into a `[H + pad, W + pad, O]` logit tensor, of placement `a`'s
    orientation plane at the centre cell of its bounding box.

    Args:
        centres: Each orientation's centre cell, as a `(row, col)` offset from its bounding box's top-left cell.
        rows: The board's rows, `H`.
        cols: The board's columns, `W`.

    Returns:
        `(int32[O * H * W], pad)`: the table and the padding, the largest offset.
    """
    offsets = np.asarray(centres, np.int64)  # [O, 2]
    pad = int(offsets.max(initial=0))
    o, r, c = np.meshgrid(np.arange(len(offsets)), np.arange(rows), np.arange(cols), indexing="ij")
    rr, cc = r + offsets[o, 0], c + offsets[o, 1]
    return ((rr * (cols + pad) + cc) * len(offsets) + o).reshape(-1).astype(np.int32), pad


#: The equivalent forms of the policy head's read-out (`place_logits`).
HEAD_FORMS = ("gather", "slices")


def place_logits(planes: jax.Array, centres: tuple[tuple[int, int], ...], form: str = "slices") -> jax.Array:
    """The placement logits of the policy head: orientation plane `o` of `planes` read at each placement's centre.

    Placement `a = (o * H + r) * W + c` takes `planes[n, r + dr_o, c + dc_o, o]` (zero outside the board), where
    `(dr_o, dc_o)` is orientation `o`'s centre offset (`orientation_centres`). Both forms compute exactly that:
    "gather" pads the planes and gathers with `centre_gather_table`; "slices" cuts one shifted window per run of
    consecutive orientations with the same offset and concatenates them (no gather, so its backward pass is no
    scatter).

    Args:
        planes: `[N, H, W, O]` logits per cell and orientation.
        centres: the `O` centre offsets `(dr, dc)`.
        form: one of `HEAD_FORMS`.

    Returns:
        `[N, O * H * W]` logits in action order.
    """
    n, rows, cols, _ = planes.shape
    if form == "gather":
        table, pad = centre_gather_table(centres, rows, cols)
        padded = jnp.pad(planes, ((0, 0), (0, pad), (0, pad), (0, 0)))
        return padded.reshape(n, -1)[:, table]
    if form != "slices":
        raise ConfigError(f"unknown policy head form {form!r}; use one of {list(HEAD_FORMS)}")
    offsets = np.asarray(centres, np.int64).reshape(-1, 2)
    pad = int(offsets.max(initial=0))
    starts = [0] + [o for o in range(1, len(offsets)) if tuple(offsets[o]) != tuple(offsets[o - 1])]
    runs = tuple((a, b, int(offsets[a, 0]), int(offsets[a, 1])) for a, b in zip(starts, starts[1:] + [len(offsets)]))
    padded = jnp.pad(jnp.moveaxis(planes, -1, 1), ((0, 0), (0, 0), (0, pad), (0, pad)))  # [N, O, H + pad, W + pad]
    return _windows(padded, runs, rows, cols).reshape(n, -1)


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2, 3))
def _windows(padded: jax.Array, runs: tuple, rows: int, cols: int) -> jax.Array:
    """`[N, O, rows, cols]`: for each run `(a, b, dr, dc)`, orientations `a:b` of `padded` read from `(dr, dc)`."""
    return jnp.concatenate([padded[:, a:b, dr : dr + rows, dc : dc + cols] for a, b, dr, dc in runs], axis=1)


def _windows_fwd(padded: jax.Array, runs: tuple, rows: int, cols: int) -> tuple[jax.Array, None]:
    return _windows(padded, runs, rows, cols), None


def _windows_bwd(runs: tuple, rows: int, cols: int, _, cotangent: jax.Array) -> tuple[jax.Array]:
    """The transpose of `_windows`: each run's cotangent padded back to its offset. (XLA's own transpose pads every
    window to the whole `[N, O, H + pad, W + pad]` and sums them, which measured 20x slower than the gather.)"""
    pad = max(max(dr, dc) for _, _, dr, dc in runs)
    widths = lambda dr, dc: ((0, 0), (0, 0), (dr, pad - dr), (dc, pad - dc))  # noqa: E731
    return (jnp.concatenate([jnp.pad(cotangent[:, a:b], widths(dr, dc)) for a, b, dr, dc in runs], axis=1),)


_windows.defvjp(_windows_fwd, _windows_bwd)


#: The convolution implementations of `Conv3x3` ("auto" picks one from the JAX backend at build time).
CONV_CHOICES = ("auto", "im2col", "native", "hybrid")

_SAME = {"window_strides": (1, 1), "padding": "SAME", "dimension_numbers": ("NHWC", "HWIO", "NHWC")}


def _patches(x: jax.Array) -> jax.Array:
    """The nine shifted copies of `x [N, H, W, C]` ('same' padding), concatenated in row-major `(i, j)` order on
    the channel axis: `[N, H, W, 9 * C]`, the input of a 3x3 convolution computed as one matmul (im2col)."""
    rows, cols = x.shape[1:3]
    padded = jnp.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    return jnp.concatenate([padded[:, i : i + rows, j : j + cols] for i in range(3) for j in range(3)], -1)


@jax.custom_vjp
def hybrid_conv(x: jax.Array, kernel: jax.Array) -> jax.Array:
    """The 3x3 'same' convolution of `x [N, H, W, Cin]` with `kernel [3, 3, Cin, Cout]` (HWIO), computed natively,
    with a hand-written gradient that stays fast on XLA:CPU inside `lax.scan` (the trainers' minibatch loops).

    There, the transposed convolutions that JAX derives for the gradient of `lax.conv_general_dilated` run 20-50x
    slower than outside a loop (docs/benchmarks.md, "The hybrid convolution"). Here the input's gradient is a 'same'
    convolution in the forward layout (the kernel flipped in space, its channel axes swapped), and the kernel's
    gradient is one matmul of the input's nine shifted copies (`_patches`) with the output's gradient.
    """
    return jax.lax.conv_general_dilated(x, kernel, **_SAME)


def _hybrid_fwd(x: jax.Array, kernel: jax.Array) -> tuple[jax.Array, tuple[jax.Array, jax.Array]]:
    return hybrid_conv(x, kernel), (x, kernel)


def _hybrid_bwd(residuals: tuple[jax.Array, jax.Array], cotangent: jax.Array) -> tuple[jax.Array, jax.Array]:
    x, kernel = residuals
    dx = jax.lax.conv_general_dilated(cotangent, jnp.flip(kernel, (0, 1)).swapaxes(2, 3), **_SAME)
    patches = _patches(x).reshape(-1, 9 * x.shape[-1])
    dk = (patches.T @ cotangent.reshape(-1, cotangent.shape[-1])).reshape(kernel.shape)
    return dx.astype(x.dtype), dk.astype(kernel.dtype)


hybrid_conv.defvjp(_hybrid_fwd, _hybrid_bwd)

#: Backends on which "auto" picks the native convolution.
NATIVE_CONV_BACKENDS = ("gpu", "cuda", "rocm", "tpu")


def resolve_conv(conv: str = "auto", backend: str | None = None) -> str:
    """The concrete convolution form for `conv`: "im2col", "native" or "hybrid" unchanged; "auto" is "native" on
    an accelerator backend (`backend`, default `jax.default_backend()`, in `NATIVE_CONV_BACKENDS`) and "hybrid"
    on CPU. Raises `ConfigError` for any other value."""
    if conv not in CONV_CHOICES:
        raise ConfigError(f"unknown convolution form conv={conv!r}; use one of {list(CONV_CHOICES)}")
    if conv != "auto":
        return conv
    backend = jax.default_backend() if backend is None else backend
    return "native" if backend.lower() in NATIVE_CONV_BACKENDS else "hybrid"


#: Backends on which "auto" computes in bfloat16.
BF16_BACKENDS = NATIVE_CONV_BACKENDS

#: The JAX dtype of each concrete precision.
PRECISION_DTYPES = {"f32": jnp.float32, "bf16": jnp.bfloat16}


def resolve_precision(precision: str = "auto", backend: str | None = None) -> str:
    """The concrete compute precision for `precision`.

    "f32" and "bf16" are returned unchanged; "auto" is "bf16" on an accelerator backend (`backend`, default
    `jax.default_backend()`, one of `BF16_BACKENDS`) and "f32" on CPU, where bfloat16 matmuls are emulated and slow.

    Args:
        precision: "auto", "f32" or "bf16".
        backend: the JAX backend name to decide "auto" for (default: the current one).

    Returns:
        "f32" or "bf16".

    Raises:
        ConfigError: `precision` is none of `PRECISION_CHOICES`.
    """
    if precision not in PRECISION_CHOICES:
        raise ConfigError(f"unknown precision {precision!r}; use one of {list(PRECISION_CHOICES)}")
    if precision != "auto":
        return precision
    backend = jax.default_backend() if backend is None else backend
    return "bf16" if backend.lower() in BF16_BACKENDS else "f32"


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

    `conv="im2col"` computes it that way (nine shifted copies and one matmul). `conv="native"` reshapes the same
    kernel to `[3, 3, Cin, Cout]` (HWIO) and calls `lax.conv_general_dilated`, the fast path on GPU/TPU, and on
    XLA:CPU 4-8x faster forward than im2col; but there JAX's own gradient of it is 20-50x slower inside `lax.scan`
    (the trainers' minibatch loops). `conv="hybrid"` is the native convolution with a gradient of native forward
    convolutions and one im2col matmul (`hybrid_conv`), fast on CPU inside loops too. All forms compute the same
    function with the same parameter tree, so checkpoints move freely between them; "auto" picks by backend
    (`resolve_conv`).
    `dtype` is the compute dtype (input, kernel and output); the parameters are always float32.
    """

    features: int
    conv: str = "auto"
    dtype: jnp.dtype = jnp.float32

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        channels = x.shape[-1]
        x = x.astype(self.dtype)
        conv = resolve_conv(self.conv)
        if conv == "im2col":
            return nn.Dense(self.features, dtype=self.dtype, param_dtype=jnp.float32, name="Dense_0")(_patches(x))
        kernel, bias = _DenseParams(self.features, name="Dense_0")(9 * channels)
        kernel, bias = kernel.astype(self.dtype), bias.astype(self.dtype)
        # kernel row (i * 3 + j) * Cin + c is input channel c at offset (i - 1, j - 1): exactly HWIO [i, j, c, :]
        kernel = kernel.reshape(3, 3, channels, self.features)
        out = hybrid_conv(x, kernel) if conv == "hybrid" else jax.lax.conv_general_dilated(x, kernel, **_SAME)
        return out + bias


class ResidualBlock(nn.Module):
    """Two 3x3 convolutions with a skip connection (pre-activation style, no normalisation)."""

    channels: int
    conv: str = "auto"
    dtype: jnp.dtype = jnp.float32

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        y = Conv3x3(self.channels, self.conv, self.dtype)(nn.relu(x))
        y = Conv3x3(self.channels, self.conv, self.dtype)(nn.relu(y))
        return x + y


class PolicyValueNet(nn.Module):
    """Residual conv policy-value network for one variant; `__call__(obs) -> (logits f32[..., A], value)` with
    `value` `f32[...]` when `value_dim` is 1 and `f32[..., value_dim]` (per seat, egocentric) otherwise.

    `logits` covers every action (`A = num_orientations * H * W + 1`, pass last) *before* masking (see
    `masked_logits`). Build it with `make_network` so that the orientation centres match the variant.
    `conv` chooses how the 3x3 convolutions are computed (`Conv3x3`); it does not change the parameters.
    `value_dim` only changes the shape of the value head's last layer (`[value_hidden, value_dim]`).
    `precision` ("f32" or "bf16") is the dtype the layers compute in; parameters are float32 either way (the same
    tree, so checkpoints load under any precision) and the logits and values are returned as float32, so that the
    masked softmax, losses and advantages that use them are computed in float32.

    `prior="model"` adds the fitted move model of `variant` over the mover's observation
    (`blokus_agents.search.move_features.observation_planes`, the shipped `move_model_VARIANT_observation.json`) to
    the placement logits, and the policy head starts at zero, so an untrained network plays the model's policy
    and learning refines it. The model's weights are the parameter `move_model` (`f32[phases, features]`),
    initialised from the fit and held fixed (no gradient reaches them: their backward pass doubles a CPU update's
    time, `benchmarks/ppo_split.py`); `prior="tuned"` trains them with the rest of the network instead. A
    checkpoint stores them, so a run keeps the model it was trained with when the shipped file is refitted. The
    model's scores are computed in float32 under every precision.
    """

    centres: tuple[tuple[int, int], ...]
    channels: int = 32
    blocks: int = 2
    value_hidden: int = 64
    conv: str = "auto"
    value_dim: int = 1
    precision: str = "f32"
    head: str = "slices"
    prior: str = "none"
    variant: str = ""

    @nn.compact
    def __call__(self, obs: Observation, prior_scores: jax.Array | None = None) -> tuple[jax.Array, jax.Array]:
        """`(logits, value)` of a batch of observations (any leading shape). `prior_scores`, with `prior="model"`
        only, are the move model's placement scores of these observations computed beforehand
        (`model_scores`, the same values): a trainer that reads the same positions several times computes them
        once."""
        dtype = PRECISION_DTYPES[resolve_precision(self.precision)]
        dense = functools.partial(nn.Dense, dtype=dtype, param_dtype=jnp.float32)
        batch = obs.planes.shape[:-3]
        rows, cols = obs.planes.shape[-3:-1]
        x = obs.planes.reshape(-1, *obs.planes.shape[-3:])
        n = x.shape[0]
        extra = jnp.concatenate([obs.pieces.reshape(n, -1), obs.to_move.reshape(n, -1)], axis=-1).astype(dtype)
        x = Conv3x3(self.channels, self.conv, dtype)(x) + dense(self.channels)(extra)[:, None, None, :]
        for _ in range(self.blocks):
            x = ResidualBlock(self.channels, self.conv, dtype)(x)
        x = nn.relu(x)

        head_init = nn.initializers.zeros_init() if self.prior in MODEL_PRIORS else nn.initializers.lecun_normal()
        planes = dense(len(self.centres), kernel_init=head_init)(x)  # 1x1 conv: [N, H, W, O]
        placement = place_logits(planes, self.centres, self.head).astype(jnp.float32)
        if self.prior in MODEL_PRIORS:
            flat = jax.tree.map(lambda a: a.reshape(n, *a.shape[len(batch) :]), obs)
            weights = jnp.asarray(self.param("move_model", lambda _: jnp.asarray(self.model().weights, jnp.float32)))
            if prior_scores is not None and self.prior != "model":
                raise ConfigError("prior_scores are for prior='model' (fixed weights); a tuned prior is recomputed")
            if self.prior == "model":
                weights = jax.lax.stop_gradient(weights)  # a fixed prior, stored with the network
            if prior_scores is None:
                # the tuned model's gradient is fast through im2col on CPU; a fixed one needs only the forward pass
                prior_scores = model_scores(
                    self.variant, weights, flat, "im2col" if self.prior == "tuned" else "native"
                )
            placement = placement + prior_scores.reshape(n, -1)
        logits = jnp.concatenate([placement, jnp.zeros((n, 1), placement.dtype)], axis=-1)

        pooled = jnp.concatenate([x.mean(axis=(1, 2)), x.max(axis=(1, 2)), extra], axis=-1)
        value = dense(self.value_dim)(nn.relu(dense(self.value_hidden)(pooled))).astype(jnp.float32)
        if self.value_dim == 1:
            return logits.reshape(*batch, -1), value[:, 0].reshape(batch)
        return logits.reshape(*batch, -1), value.reshape(*batch, self.value_dim)

    def model(self) -> MoveModel:
        """The shipped observation move model of this network's variant."""
        return observation_model(self.variant)


def model_scores(variant: str, weights: jax.Array, obs: Observation, conv: str = "native") -> jax.Array:
    """`f32[N, A - 1]`: the move model's placement scores of a batch of observations of registered variant
    `variant`, the prior that `PolicyValueNet` adds to its logits.

    Args:
        variant: the variant's name (its shipped observation model, `observation_model`).
        weights: `f32[phases, features]`, the network's parameter `move_model`.
        obs: a batch of observations `[N, ...]`.
        conv: the form of the correlation (`blokus_agents.search.move_features.placement_scores`): "native", or
            "im2col" where the weights are trained on CPU.

    Returns:
        The scores, legal placements or not (mask them).
    """
    model = observation_model(variant)
    tables = blokus_jax.make(variant).tables
    weights = jnp.asarray(weights)

    def one(o: Observation) -> jax.Array:
        row = weights[observation_phase(tables, model.phases, o)]
        return placement_scores(tables, observation_planes(tables, o), row, conv)

    return jax.vmap(one)(obs)


@functools.lru_cache(maxsize=8)
def observation_model(variant: str) -> MoveModel:
    """The shipped move model over observation planes of registered variant `variant` (read once), checked
    against the variant; `ConfigError` when none is shipped."""
    model = shipped_model(variant, "observation")
    model.check(blokus_jax.make(variant).tables)
    return model


def make_network(
    env: Env,
    channels: int = 32,
    blocks: int = 2,
    value_hidden: int = 64,
    conv: str = "auto",
    value_dim: int = 1,
    precision: str = "auto",
    head: str = "slices",
    prior: str = "none",
) -> PolicyValueNet:
    """A `PolicyValueNet` for `env`'s variant.

    Args:
        env: The environment (its variant).
        channels: Conv channels.
        blocks: Residual blocks.
        value_hidden: Hidden units of the value head.
        conv: "auto", "im2col", "native" or "hybrid" (see `Conv3x3`), resolved here from the backend at build
            time; every form has the same parameters, so any checkpoint loads.
        value_dim: 1 (a scalar value head) or `env.num_players` (a value per seat).
        precision: "auto", "f32" or "bf16" (see `resolve_precision`), resolved here too; it changes no parameter.
        head: The policy head's form (`place_logits`), which changes no result.
        prior: One of `NETWORK_PRIORS` ("model" and "tuned" need a registered variant with a shipped observation
            model, see `PolicyValueNet`).

    Returns:
        The (unbound) flax module.

    Raises:
        ConfigError: An unknown `prior`, `head`, `conv` or `precision`, a model prior on a variant that is not the
            registered one unchanged (or has no shipped model), or another `value_dim`.
    """
    value_dim = int(value_dim)
    if prior not in NETWORK_PRIORS:
        raise ConfigError(f"unknown network prior {prior!r}; use one of {list(NETWORK_PRIORS)}")
    if prior in MODEL_PRIORS:
        observation_model(env.variant.name)  # shipped and fitting the variant, else ConfigError
        if env.variant != blokus_jax.make(env.variant.name).variant:
            raise ConfigError(
                f"prior={prior!r} needs the registered variant {env.variant.name!r} unchanged (its move model was "
                f"fitted there); this one has other fields"
            )
    if head not in HEAD_FORMS:
        raise ConfigError(f"unknown policy head form {head!r}; use one of {list(HEAD_FORMS)}")
    if value_dim not in (1, env.num_players):
        raise ConfigError(
            f"value_dim={value_dim}: the value head predicts the mover's result (1) or every seat's "
            f"({env.num_players} for {env.variant.name!r})"
        )
    return PolicyValueNet(
        orientation_centres(env),
        channels,
        blocks,
        value_hidden,
        resolve_conv(conv),
        value_dim,
        resolve_precision(precision),
        head,
        prior,
        env.variant.name if prior in MODEL_PRIORS else "",
    )


def value_size(num_players: int, per_seat: bool) -> int:
    """Outputs of a value head for a variant of `num_players` players: 1 (the result of the player to move) with
    one or two players or when the head predicts the mover's result alone, else `num_players` (every seat's result
    in the mover's egocentric seat order, `blokus_agents.search.gumbel.egocentric_seats`)."""
    return int(num_players) if per_seat and num_players > 2 else 1


def config_network(config, env: Env, conv: str = "auto") -> PolicyValueNet:
    """The network of a training run's `config` (a `blokus_agents.players.configs.PPOConfig` or
    `blokus_agents.players.configs.AZConfig`) for `env` (its variant): its `channels`, `blocks` and
    `value_hidden`, and the value size of its algorithm (`blokus_agents.players.configs.RunConfig.value_dim`),
    computing in its `precision` (configs saved before that field read back as "auto"), with its `prior`
    ("none" for configs saved before that field).

    Trainers, checkpoints and run-directory agents all build a run's network here.

    Args:
        config: The run's config.
        env: The environment (its variant).
        conv: "auto", "im2col", "native" or "hybrid" (see `make_network`).

    Returns:
        The (unbound) flax module.

    Raises:
        ConfigError: As `make_network`, e.g. an unknown `conv`.
    """
    value_dim = config.value_dim(env.num_players)
    return make_network(
        env,
        config.channels,
        config.blocks,
        config.value_hidden,
        conv,
        value_dim,
        config.precision,
        prior=getattr(config, "prior", "none"),
    )
