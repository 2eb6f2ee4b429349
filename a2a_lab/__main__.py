"""``python -m a2a_lab`` runs the CLI."""

import sys

from a2a_lab.cli import main

sys.exit(main())
