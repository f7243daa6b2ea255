"""For the HTTP tests that need a reviewer: the Authorization header of a dev token."""

from __future__ import annotations

from tollgate.http.deps import Services
from tollgate.runtime.identity import issue_dev_token


def bearer(svc: Services, user: str, *, tenant: str = "acme",
           role: str = "reader") -> dict[str, str]:
    token = issue_dev_token(svc.settings.state_dir, reviewer=user, role=role, tenant=tenant)
    return {"Authorization": f"Bearer {token}"}
