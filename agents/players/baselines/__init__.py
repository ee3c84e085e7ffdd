"""Shipped baseline agents: trained networks that come with the package, named `baseline:NAME` in agent specs.

Design notes: `docs/design.md`.
"""

from blokus_agents.players.baselines.export import MAX_EXPORT_BYTES, export_baseline, write_baseline
from blokus_agents.players.baselines.shipped import (
    BASELINE_OPTIONS,
    FORMAT_VERSION,
    MAX_FILE_BYTES,
    PACKAGE_DIR,
    available,
    baseline_memory,
    baseline_policy,
    baseline_source,
    baseline_variant,
    check_meta,
    load_baseline,
)

__all__ = [
    "FORMAT_VERSION",
    "MAX_EXPORT_BYTES",
    "MAX_FILE_BYTES",
    "PACKAGE_DIR",
    "BASELINE_OPTIONS",
    "available",
    "baseline_memory",
    "baseline_policy",
    "baseline_source",
    "baseline_variant",
    "check_meta",
    "export_baseline",
    "load_baseline",
    "write_baseline",
]
