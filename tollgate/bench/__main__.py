"""``python -m tollgate.bench``: the benchmark without the rest of the CLI."""

import sys

# Through the console script, for its one-line errors and exit codes. An entry point: nothing
# imports it, so this import of the CLI closes no loop (the acyclic contract in .importlinter).
from tollgate.cli import main

main(["bench", *sys.argv[1:]], prog_name="python -m tollgate.bench")
