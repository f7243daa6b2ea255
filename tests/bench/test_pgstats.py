"""What ``--pg-stats`` shows: the statements that took PostgreSQL's time, per event, and what its
backends waited on. Pure arithmetic over rows as pg_stat_statements gives them."""

from __future__ import annotations

from tollgate.bench.pgstats import top_statements, wait_shares


def test_pg_statements_are_ranked_by_time_and_given_per_event() -> None:
    rows = [{"query": "SELECT  1\n FROM kill_switches", "calls": 200, "total_exec_time": 20.0,
             "rows": 200, "blocks": 400},
            {"query": "SELECT audit_chain_link($1)", "calls": 1200, "total_exec_time": 1500.0,
             "rows": 1200, "blocks": 423_600},
            {"query": "UPDATE receipts SET x = $1", "calls": 100, "total_exec_time": 170.0,
             "rows": 100, "blocks": 4_500}]
    top = top_statements(rows, events=100, limit=2)
    assert [t["statement"] for t in top] == ["SELECT audit_chain_link($1)",
                                             "UPDATE receipts SET x = $1"]
    assert top[0] == {"statement": "SELECT audit_chain_link($1)", "calls_per_event": 12.0,
                      "ms_per_event": 15.0, "ms_per_call": 1.25, "rows_per_call": 1.0,
                      "blocks_per_call": 353.0}  # a statement that scans shows it per call
    assert top_statements(rows, events=0)[0]["ms_per_event"] == 1500.0  # never divides by 0
    assert list(wait_shares({"CPU:-": 16, "IO:WalSync": 64}, 628)) == ["IO:WalSync", "CPU:-"]
    assert wait_shares({"IO:WalSync": 64}, 0) == {}
