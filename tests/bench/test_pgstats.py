"""What ``--pg-stats`` shows: the statements that took PostgreSQL's time, per event, and what its
backends waited on. Pure arithmetic over rows as pg_stat_statements gives them."""

from __future__ import annotations

from tollgate.bench.pgstats import TOP_STATEMENTS, top_statements, wait_shares
from tollgate.bench.render import _pg_stats


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


def test_json_keeps_every_statement_and_the_report_prints_the_top_ten() -> None:
    """An A/B run of a PostgreSQL change compares statements that a top 10 would have dropped:
    what ``stop()`` stores (``--json``) ranks every one; the printed report shows the first
    ``TOP_STATEMENTS`` and says how many there were."""
    rows = [{"query": f"SELECT {n} FROM t", "calls": 10, "total_exec_time": float(n),
             "rows": 10, "blocks": 10} for n in range(1, 26)]
    stored = top_statements(rows, events=10)
    assert [s["statement"] for s in stored] == [f"SELECT {n} FROM t" for n in range(25, 0, -1)]
    printed = _pg_stats({"statements": stored, "active_backends_by_wait": {},
                         "autovacuum_by_work": {}, "wait_samples": 0})
    shown = [line for line in printed if line.endswith(" FROM t")]
    assert len(shown) == TOP_STATEMENTS == 10
    assert shown[0].endswith("SELECT 25 FROM t") and shown[-1].endswith("SELECT 16 FROM t")
    assert "the top 10 of 25" in "\n".join(printed)
