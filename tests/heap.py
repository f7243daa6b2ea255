"""The test process's heap, frozen once collection has imported everything (pytest hook).

A full garbage collection walks every object the collector tracks; after collection a test
process holds a great many (Temporal's SDK, pydantic's models, every test module), all of them
alive for the whole session. The console script collects on its way out (``tollgate.cli.output
.finish``: the Temporal client's Rust side must be dropped while the interpreter is whole), so a
test that runs ``tollgate.cli.main`` in process paid a walk of that heap on every call: 0.27 s a
call on a loaded host, 19 of the 20 s of tests/cli/test_edge_arguments.py. Python's own gen-2
collections walk it too. ``gc.freeze()`` moves what exists now to the permanent generation,
which no collection walks; what a test makes is collected as before (a client it built
included), so ``finish`` does what it does in the console script. Frozen objects are left out
of ``gc.get_objects()``: the hang guard's look for unfinished tasks is unaffected, as no task
exists before the first test.
"""

from __future__ import annotations

import gc

import pytest


def pytest_collection_finish(session: pytest.Session) -> None:
    gc.collect()  # what collection left as garbage goes now, not frozen for the session
    gc.freeze()
