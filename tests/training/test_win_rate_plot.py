"""The learning-curve plot draws each opponent's win rate with its 95 % interval as a band."""

from __future__ import annotations

import pytest

from blokus_agents.training.curves import plot_win_rates

pytest.importorskip("matplotlib")


def test_each_series_gets_a_band_of_its_intervals_and_records_without_them_get_none(tmp_path):
    records = [
        {"update": 0, "env_steps": 0, "win_rate_vs_random": 0.5, "win_rate_ci_vs_random": [0.3, 0.7]},
        {"update": 1, "env_steps": 64, "policy_loss": 0.1},
        {
            "update": 2,
            "env_steps": 128,
            "win_rate_vs_random": 0.8,
            "win_rate_ci_vs_random": [0.6, 0.9],
            "win_rate_vs_greedy": 0.2,  # an older record without its interval
        },
    ]
    fig = plot_win_rates(records, tmp_path / "curve.png", "a run")
    assert (tmp_path / "curve.png").stat().st_size > 0
    ax = fig.axes[0]
    assert len(ax.lines) == 2 and len(ax.collections) == 1  # a band for random only
    band = ax.collections[0].get_paths()[0].vertices
    assert band[:, 1].min() == pytest.approx(0.3) and band[:, 1].max() == pytest.approx(0.9)
