"""`python -m blokus_agents` runs the `blokus-jax` command."""

import sys

from blokus_agents.cli import main

sys.exit(main())
