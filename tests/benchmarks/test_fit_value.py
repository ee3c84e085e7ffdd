"""``benchmarks/fit_value.py``'s board features (the fitted leaf value of ``search_variant_ladder.py``) on hand-checked
Duo positions."""

from __future__ import annotations

import math

import jax
import numpy as np
import pytest
from helpers import ROOT, load_script

import blokus_jax


@pytest.fixture(scope="module")
def fit_value():
    return load_script(ROOT / "benchmarks" / "fit_value.py")


def test_value_features_of_the_start_and_after_one_piece(fit_value):
    env = blokus_jax.make("duo")
    features = jax.jit(lambda state: fit_value.value_features(env, state))
    names = list(fit_value.FEATURES)
    start = env.init()
    f = np.asarray(features(start))
    assert f.shape == (len(names),)
    assert f[names.index("own_log_mobility")] == pytest.approx(math.log1p(int(start.legal_action_mask[:-1].sum())))
    # Duo's start is symmetric: both colours see the same board, so every difference is 0
    np.testing.assert_allclose(f[0:4], f[4:8])
    assert f[names.index("own_squares_left/10")] == pytest.approx(8.9)
    assert f[names.index("score_diff/10")] == 0.0 and f[names.index("bias")] == 1.0
    # colour 0 places a piece: colour 1 is to move, behind by that piece's squares, and colour 0 has attach points
    action = int(np.flatnonzero(np.asarray(start.legal_action_mask[:-1]))[-1])
    after = env.step(start, action)
    size = 89 + int(after.scores[0])
    g = np.asarray(features(after))
    assert int(after.current_color) == 1 and size >= 1
    assert g[names.index("score_diff/10")] == pytest.approx(-size / 10)
    assert g[names.index("opp_squares_left/10")] == pytest.approx((89 - size) / 10)
    assert g[names.index("own_log_mobility")] == pytest.approx(math.log1p(int(after.legal_action_mask[:-1].sum())))
    assert g[names.index("opp_attach/10")] > 0
