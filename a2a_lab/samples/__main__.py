"""``python -m a2a_lab.samples DIR [--seed N]``: write the bundled sample into ``DIR``.

The committed sample (``a2a_lab/samples/data``) is this command's output with the default
seed; a test regenerates it and compares bytes.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from a2a_lab.samples._sample import SAMPLE_SEED, write_sample


def main(argv: Sequence[str] | None = None) -> int:
    """Write the sample and print one line per file."""
    parser = argparse.ArgumentParser(prog="python -m a2a_lab.samples", description=__doc__)
    parser.add_argument("directory", help="where to write the log directory")
    parser.add_argument("--seed", type=int, default=SAMPLE_SEED, help="seed (default: %(default)s)")
    args = parser.parse_args(argv)
    summary = write_sample(args.directory, args.seed)
    for name, lines, events in summary.files:
        print(f"{name}: {lines} lines, {events} events")
    print(f"{summary.events} events, {len(summary.malformed)} malformed lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
