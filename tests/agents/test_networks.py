"""The policy-value network: shapes, the centre-gather policy head, and masked sampling that is never illegal."""

from __future__ import annotations

import functools

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import blokus_jax
from blokus_agents.core.masking import MASKED_LOGIT, masked_logits, sample_masked
from blokus_agents.core.policies import network_policy
from blokus_agents.players.networks import (
    CONV_CHOICES,
    Conv3x3,
    centre_gather_table,
    hybrid_conv,
    make_network,
    orientation_centres,
    resolve_conv,
)
from blokus_jax.errors import ConfigError

#: The concrete convolution forms (every choice but "auto").
CONV_FORMS = tuple(form for form in CONV_CHOICES if form != "auto")


@pytest.fixture(scope="module")
def simple_states():
    """A batch of 64 positions of `simple` reached by random play (a mix of openings, middle games and passes)."""
    env = blokus_jax.make("simple")
    step = jax.jit(jax.vmap(env.step_autoreset))
    sample = jax.jit(jax.vmap(env.sample_action))
    states = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.key(0), 64))
    key = jax.random.key(1)
    for i in range(int(jax.random.randint(key, (), 5, 9))):
        states, _, _ = step(states, sample(jax.random.split(jax.random.fold_in(key, i), 64), states))
    # desynchronise the games so that the batch holds different phases
    keep = jnp.arange(64) % 3 == 0
    advanced, _, _ = step(states, sample(jax.random.split(jax.random.key(2), 64), states))
    return env, jax.tree.map(lambda a, b: jnp.where(keep.reshape((-1,) + (1,) * (a.ndim - 1)), a, b), states, advanced)


@pytest.mark.parametrize("variant", ["simple", "duo", "classic_2p"])
def test_network_outputs_one_logit_per_action_and_a_value(variant):
    env = blokus_jax.make(variant)
    net = make_network(env, channels=4, blocks=1, value_hidden=8)
    obs = env.observe(env.init())
    params = jax.jit(net.init)(jax.random.key(0), obs)
    logits, value = jax.jit(net.apply)(params, obs)
    assert logits.shape == (env.num_actions,) and value.shape == ()
    batched = jax.tree.map(lambda x: jnp.stack([x, x, x]), obs)
    logits3, value3 = jax.jit(net.apply)(params, batched)
    assert logits3.shape == (3, env.num_actions) and value3.shape == (3,)
    np.testing.assert_allclose(logits3[1], logits, rtol=1e-5, atol=1e-5)
    assert bool(jnp.all(logits[-1] == 0.0))  # the pass never competes with a placement


def test_gather_table_reads_each_placement_at_its_bounding_box_centre():
    env = blokus_jax.make("duo")
    rows, cols = env.board_shape
    centres = orientation_centres(env)
    table, pad = centre_gather_table(centres, rows, cols)
    assert table.shape == (env.num_actions - 1,) and pad == 2  # pentominoes: 5-cell boxes, centre offset 2
    rng = np.random.default_rng(0)
    for action in rng.integers(0, env.num_actions - 1, 200):
        o, rest = divmod(int(action), rows * cols)
        r, c = divmod(rest, cols)
        cell, channel = divmod(int(table[action]), env.num_orientations)
        pr, pc = divmod(cell, cols + pad)
        assert channel == o and (pr, pc) == (r + centres[o][0], c + centres[o][1])
    # a legal placement's centre cell is one of its bounding-box cells, inside the board
    legal = np.flatnonzero(np.asarray(env.init().legal_action_mask)[:-1])
    for action in legal:
        cell = int(table[action]) // env.num_orientations
        assert cell // (cols + pad) < rows and cell % (cols + pad) < cols


@pytest.mark.slow
def test_masked_sampling_never_picks_an_illegal_action(simple_states):
    env, states = simple_states
    mask = states.legal_action_mask
    assert bool(jnp.all(mask.any(-1)))
    # adversarial logits: illegal actions get the largest raw logits
    logits = jnp.where(mask, -30.0, 30.0) + jax.random.normal(jax.random.key(3), mask.shape)
    keys = jax.random.split(jax.random.key(4), 200)
    actions, log_probs = jax.vmap(lambda k: sample_masked(k, logits, mask))(keys)
    legal = jax.jit(jax.vmap(lambda a: jax.vmap(env.is_legal)(states, a)))(actions)
    assert bool(jnp.all(legal))
    assert bool(jnp.all(log_probs <= 0.0)) and bool(jnp.all(jnp.isfinite(log_probs)))
    # states with one legal action (forced passes) sample it with log-probability 0
    forced = mask.sum(-1) == 1
    np.testing.assert_allclose(np.asarray(log_probs)[:, np.asarray(forced)], 0.0, atol=1e-6)


def test_masked_logits_remove_illegal_actions_from_the_distribution(simple_states):
    _, states = simple_states
    mask = states.legal_action_mask
    logits = jax.random.normal(jax.random.key(5), mask.shape) * 10
    log_probs = jax.nn.log_softmax(masked_logits(logits, mask), axis=-1)
    probs = jnp.exp(log_probs)
    assert float(jnp.max(jnp.where(mask, 0.0, probs))) == 0.0
    np.testing.assert_allclose(probs.sum(-1), 1.0, rtol=1e-5)
    entropy = -jnp.sum(probs * log_probs, axis=-1)
    assert bool(jnp.all(jnp.isfinite(entropy))) and bool(jnp.all(entropy <= jnp.log(mask.sum(-1)) + 1e-4))
    assert float(masked_logits(logits, mask).min()) == MASKED_LOGIT


@pytest.mark.parametrize("greedy", [True, False])
def test_network_policy_plays_only_legal_moves_through_a_whole_game(greedy):
    env = blokus_jax.make("simple")
    net = make_network(env, channels=4, blocks=1, value_hidden=8)
    params = jax.jit(net.init)(jax.random.key(0), env.observe(env.init()))
    policy = network_policy(env, net, params, greedy)

    @jax.jit
    def play(key):
        def body(state, k):
            action = policy(k, state)
            return env.step(state, action), env.is_legal(state, action) | state.terminated

        return jax.lax.scan(body, env.init(), jax.random.split(key, 40))

    final, legal = play(jax.random.key(6))
    assert bool(final.terminated) and bool(jnp.all(legal))
    assert float(final.rewards.sum()) == pytest.approx(0.0, abs=1e-6) or float(final.rewards.max()) == 0.5


def _random_observations(env, key, batch):
    """Observations of ``batch`` random positions, with the feature planes replaced by random reals so that every
    input channel and every cell (edges included) carries a different value."""
    states = jax.jit(jax.vmap(env.init))(jax.random.split(key, batch))
    sample, step = jax.jit(jax.vmap(env.sample_action)), jax.jit(jax.vmap(env.step_autoreset))
    for i in range(3):
        states, _, _ = step(states, sample(jax.random.split(jax.random.fold_in(key, i), batch), states))
    obs = jax.jit(jax.vmap(env.observe))(states)
    noise = jax.random.normal(jax.random.fold_in(key, 99), obs.planes.shape)
    return obs.replace(planes=obs.planes.astype(jnp.float32) + noise)


def test_native_conv_kernel_order_matches_im2col():
    x = jax.random.normal(jax.random.key(0), (2, 5, 7, 3))
    params = Conv3x3(4, "im2col").init(jax.random.key(1), x)
    params = jax.tree.map(lambda p: jax.random.normal(jax.random.key(2), p.shape), params)
    a = Conv3x3(4, "im2col").apply(params, x)
    for form in ("native", "hybrid"):
        np.testing.assert_allclose(a, Conv3x3(4, form).apply(params, x), rtol=1e-5, atol=1e-5)
    # and both equal flax's own 3x3 'same' convolution with the kernel reshaped to HWIO
    kernel = params["params"]["Dense_0"]["kernel"].reshape(3, 3, 3, 4)
    ref = nn.Conv(4, (3, 3)).apply({"params": {"kernel": kernel, "bias": params["params"]["Dense_0"]["bias"]}}, x)
    np.testing.assert_allclose(a, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["simple", "duo"])
def test_every_conv_form_shares_parameters_outputs_and_gradients(variant):
    env = blokus_jax.make(variant)
    nets = {form: make_network(env, channels=8, blocks=2, value_hidden=16, conv=form) for form in CONV_FORMS}
    assert {form: net.conv for form, net in nets.items()} == {form: form for form in CONV_FORMS}
    obs = _random_observations(env, jax.random.key(7), 6)
    params = jax.jit(nets["im2col"].init)(jax.random.key(0), obs)
    kernel = params["params"]["Conv3x3_0"]["Dense_0"]["kernel"]
    assert kernel.shape == (9 * obs.planes.shape[-1], 8)
    logits_a, value_a = jax.jit(nets["im2col"].apply)(params, obs)

    def loss(net):
        def f(p):
            logits, value = net.apply(p, obs)
            return jnp.mean(jax.nn.log_softmax(logits) * jnp.linspace(-1, 1, logits.shape[-1])) + jnp.mean(value**2)

        return jax.jit(jax.grad(f))

    grads_a = loss(nets["im2col"])(params)
    for form in ("native", "hybrid"):
        # the same tree (names and shapes) and, from the same key, the same initial values: checkpoints load in all
        other = jax.jit(nets[form].init)(jax.random.key(0), obs)
        assert jax.tree.structure(params) == jax.tree.structure(other)
        jax.tree.map(lambda a, b: np.testing.assert_array_equal(a, b), params, other)
        logits_b, value_b = jax.jit(nets[form].apply)(params, obs)
        np.testing.assert_allclose(logits_a, logits_b, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(value_a, value_b, rtol=1e-5, atol=1e-5)
        grads_b = loss(nets[form])(params)
        assert jax.tree.structure(grads_a) == jax.tree.structure(grads_b)
        jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6), grads_a, grads_b)


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.bfloat16])
def test_hybrid_conv_gradient_equals_the_native_one_inside_a_scan(dtype):
    """`hybrid_conv`'s hand-written gradient (a forward convolution for the input, an im2col matmul for the
    kernel) is JAX's own gradient of the native convolution, in a `lax.scan` body as the trainers use it, and keeps
    the input's and the kernel's dtypes."""
    xs = jax.random.normal(jax.random.key(0), (3, 2, 5, 7, 3)).astype(dtype)
    kernel = jax.random.normal(jax.random.key(1), (3, 3, 3, 4)).astype(dtype)
    weights = jax.random.normal(jax.random.key(2), (2, 5, 7, 4)).astype(dtype)

    def grads(conv):
        def body(total, x):
            gx, gk = jax.grad(lambda x, k: jnp.sum(conv(x, k) * weights).astype(jnp.float32), (0, 1))(x, kernel)
            return total + gk.astype(jnp.float32), gx

        return jax.jit(lambda xs: jax.lax.scan(body, jnp.zeros(kernel.shape), xs))(xs)

    native = functools.partial(jax.lax.conv_general_dilated, window_strides=(1, 1), padding="SAME")
    (dk_a, dx_a), (dk_b, dx_b) = (
        grads(lambda x, k: native(x, k, dimension_numbers=("NHWC", "HWIO", "NHWC"))),
        grads(hybrid_conv),
    )
    assert dx_b.dtype == dtype
    tol = 1e-5 if dtype == jnp.float32 else 5e-2
    np.testing.assert_allclose(np.asarray(dx_a, np.float32), np.asarray(dx_b, np.float32), rtol=tol, atol=tol)
    np.testing.assert_allclose(dk_a, dk_b, rtol=tol, atol=tol * 10)


def test_auto_conv_is_hybrid_on_cpu_and_native_on_accelerators():
    assert resolve_conv("auto", "cpu") == "hybrid"
    expected = "hybrid" if jax.default_backend() == "cpu" else "native"
    assert resolve_conv("auto") == expected and make_network(blokus_jax.make("simple")).conv == expected
    for backend in ("gpu", "cuda", "rocm", "tpu"):
        assert resolve_conv("auto", backend) == "native"
    assert resolve_conv("native") == "native" and resolve_conv("im2col", "gpu") == "im2col"
    with pytest.raises(ConfigError, match="conv='winograd'"):
        resolve_conv("winograd")


@pytest.mark.parametrize("prior", ["model", "tuned"])
def test_a_network_with_the_model_prior_starts_as_the_model_and_learns_around_it(prior):
    from blokus_agents.players.networks import observation_model
    from blokus_agents.search.move_features import observation_phase, observation_planes, placement_scores

    env = blokus_jax.make("duo")
    net = make_network(env, channels=4, blocks=0, value_hidden=8, prior=prior)
    step, sample = jax.jit(env.step), jax.jit(env.sample_action)
    states = [env.init()]
    for t in range(9):
        states.append(step(states[-1], sample(jax.random.key(t), states[-1])))
    batch = jax.tree.map(lambda *x: jnp.stack(x), *states[::3])
    obs = jax.jit(jax.vmap(env.observe))(batch)
    params = jax.jit(net.init)(jax.random.key(0), jax.tree.map(lambda x: x[0], obs))
    model = observation_model("duo")
    np.testing.assert_array_equal(np.asarray(params["params"]["move_model"]), np.asarray(model.weights, np.float32))
    logits, _ = jax.jit(net.apply)(params, obs)
    host = jax.device_get(params)  # the players close over host parameters: the model's weights are constants
    np.testing.assert_allclose(jax.jit(lambda o: net.apply(host, o)[0])(obs), logits, rtol=1e-5, atol=1e-4)

    @jax.jit
    def model_scores(o):
        row = jnp.asarray(model.weights, jnp.float32)[observation_phase(env.tables, model.phases, o)]
        return placement_scores(env.tables, observation_planes(env.tables, o), row)

    for i in range(len(states[::3])):
        expected = model_scores(jax.tree.map(lambda x: x[i], obs))
        np.testing.assert_allclose(logits[i, :-1], expected, rtol=1e-5, atol=1e-4)  # the head starts at zero

    def loss(p):
        return jax.nn.log_softmax(masked_logits(net.apply(p, obs)[0], batch.legal_action_mask))[:, 0].sum()

    grads = jax.jit(jax.grad(loss))(params)["params"]
    tuned = np.any(np.asarray(grads["move_model"]))
    assert tuned == (prior == "tuned")  # "model" holds the prior fixed, "tuned" trains it
    head = [k for k in grads if k.startswith("Dense")]
    assert any(float(jnp.abs(g).sum()) > 0 for k in head for g in jax.tree.leaves(grads[k]))


def test_the_model_prior_is_refused_where_no_model_fits():
    with pytest.raises(ConfigError, match="no move model over observation planes"):
        make_network(blokus_jax.make("simple"), channels=4, blocks=0, prior="model")
    with pytest.raises(ConfigError, match="registered variant"):
        make_network(blokus_jax.make("duo", board_shape=(12, 12)), channels=4, blocks=0, prior="model")
    with pytest.raises(ConfigError, match="network prior"):
        make_network(blokus_jax.make("duo"), channels=4, blocks=0, prior="magic")
