"""``python -m tollgate.bench``: the benchmark without the rest of the CLI."""

from tollgate.bench.command import main

main()
