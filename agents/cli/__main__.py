"""`python -m blokus_agents.cli`: the `blokus-jax` command."""

import sys

from blokus_agents.cli import main

sys.exit(main())
