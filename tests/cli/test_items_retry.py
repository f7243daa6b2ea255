"""`tollgate items retry ITEM --token T`: only the owner named by a verified token retries, and
only a FAILED job; a stranger (or the owner's id in another tenant) hears the same "no tagging
job" as for a missing item; no token is one line, exit 8."""

from __future__ import annotations

import uuid
from pathlib import Path

import asyncpg

from adapters.postgres.tagging import TaggingStore
from contracts.tagging import ItemCapture, JobFailure, JobState
from tests.cli.helpers import base_env, tollgate
from tollgate.runtime.exits import Exit
from tollgate.runtime.identity import issue_dev_token


async def test_only_the_owner_with_a_token_retries_a_failed_job(
        pool: asyncpg.Pool, database_url: str, tmp_path: Path) -> None:
    store, owner = TaggingStore(pool), f"u-{uuid.uuid4().hex[:8]}"
    saved = await store.save_item("acme", ItemCapture(user_id=owner, url="https://e.com/r",
                                                      title="t"))
    # Temporal at an address nobody answers: the retry stands and waits for the relay.
    env = base_env(tmp_path, DATABASE_URL=database_url, TEMPORAL_ADDRESS="127.0.0.1:1")

    def retry(user: str | None, tenant: str = "acme") -> tuple[int, str]:
        """Exit code and the command's own answer (stdout, else its one stderr line)."""
        token = ([] if user is None else
                 ["--token", issue_dev_token(tmp_path, reviewer=user, role="reader",
                                             tenant=tenant)])
        said = tollgate("items", "retry", str(saved.item_id), *token, env=env)
        assert said.clean(), said.text
        return said.code, (said.out or said.err).strip()

    code, text = retry(owner)
    assert code == Exit.REFUSED and "only a FAILED job" in text  # PENDING: still going
    await store.record_failure(JobFailure(item_id=saved.item_id, attempt=3, final=True,
                                          error="retryable: provider_503"))
    for who, tenant in ((f"u-{uuid.uuid4().hex[:8]}", "acme"), (owner, "globex")):
        code, text = retry(who, tenant)
        assert code == Exit.USAGE and "no tagging job" in text
    code, text = retry(None)
    assert code == Exit.NO_IDENTITY and text.count("\n") == 0
    assert (await store.get_job(saved.item_id)).state == JobState.FAILED  # type: ignore[union-attr]

    code, text = retry(owner)
    assert code == Exit.OK, text
    assert text == f"item {saved.item_id}: PENDING (run 2), queued (the relay will start it)"
    assert (saved.item_id, 2) in await store.unstarted()
