"""The scores by which a search agent ranks and picks its candidate moves, for any search agent spec: its prior,
measured apart from the search (`benchmarks/prior_recall.py`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import jax
import jax.numpy as jnp

from blokus_agents.core.policies import AgentSpecError, agent_options, load_network, split_target
from blokus_agents.players.baselines import load_baseline
from blokus_agents.search.gumbel import finite_logits
from blokus_agents.search.mcts import mcts_evaluator, strong_spec
from blokus_agents.search.move_model import shipped_model
from blokus_agents.search.settings import PRIORS
from blokus_jax.env import Env, State


def move_prior(spec: str, env: Env) -> Callable[[State], jax.Array]:
    """The scores by which the search of agent `spec` ranks and picks its candidate moves, as a pure function.

    For `strong` that is the agent `strong` plays on the variant; for `baseline:NAME` and `az:RUN` (and an
    AlphaZero run directory) the network's logits, or the fitted move model's scores over them when the spec says
    `prior=model`; for `mcts` the rollout evaluator's move scores (corner and centre terms over `temperature`), or
    with `prior=model` the variant's network-free move model's.
    Building it loads a network at most: no search is compiled and no time budget calibrated.

    Args:
        spec: A search agent spec (`"strong"`, `"mcts:k=32"`, `"baseline:duo"`, `"baseline:duo,prior=model"`,
            `"az:runs/duo"`).
        env: The environment.

    Returns:
        `prior(state) -> f32[num_actions]`: higher is preferred; `-inf` exactly on the illegal actions (the pass
        scores 0 when it is the only legal action). Jittable and vmappable.

    Raises:
        AgentSpecError: `spec` is not a search agent, or one of its options is malformed.
        ConfigError: `prior=model` on a variant without a fitting shipped move model.
        CheckpointError: The run directory or baseline cannot be loaded.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise AgentSpecError(f"agent spec {spec!r} is empty; give a search agent such as 'strong' or 'baseline:duo'")
    name, _, rest = spec.partition(":")
    if name == "strong":
        seconds = agent_options(spec, env)[1].get("seconds", 2.0)  # checks the options
        return move_prior(strong_spec(env, seconds), env)
    if name == "mcts":
        options = agent_options(spec, env)[1]
        chosen = {k: v for k, v in options.items() if k in ("temperature", "centre", "margin", "playout")}
        evaluate = mcts_evaluator(env, options.get("prior", "network"), playouts=1, **chosen)

        def scores(state: State) -> jax.Array:
            return evaluate(None, jax.random.key(0), state, state.current_player)[0]

    else:
        if name in ("az", "baseline"):
            target, option_text = split_target(spec)  # the registry's reading: quoted targets too
        else:
            target, _, option_text = spec.partition(",")
        options = dict(item.split("=", 1) for item in (option_text or "").split(",") if "=" in item)
        if name == "baseline":
            network, params, _ = load_baseline(target, env)
        elif name == "az" or (name not in ("az", "baseline") and Path(target).is_dir()):
            network, params = load_network(target, env)
        else:
            raise AgentSpecError(
                f"{spec!r} is not a search agent; move_prior takes 'strong', 'mcts', 'baseline:NAME' or 'az:RUN' "
                f"(with their options)"
            )
        prior = options.get("prior", "network")
        if prior not in PRIORS:
            raise AgentSpecError(f"{spec!r}: prior={prior!r}; use one of {list(PRIORS)}")
        model = shipped_model(env.variant.name) if prior == "model" else None
        if model is not None:
            model.check(env.tables)

        def scores(state: State) -> jax.Array:
            logits = network.apply(params, env.observe(state))[0][: env.pass_action]
            if model is None:
                return logits
            return model.scores(env.tables, state, logits)[: env.pass_action]

    def prior_fn(state: State) -> jax.Array:
        placement = finite_logits(scores(state).astype(jnp.float32))
        full = jnp.concatenate([placement, jnp.zeros((1,), jnp.float32)])
        return jnp.where(state.legal_action_mask, full, -jnp.inf)

    return prior_fn


__all__ = ["move_prior"]
