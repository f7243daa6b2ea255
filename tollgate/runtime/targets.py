"""The action adapters, one per configured target, as every process that talks to a target
builds them: the main worker (sends, lookups, the sweep) and ``tollgate ops close``, whose one
lookup of an unresolved write must ask the target exactly as the sweep does."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from adapters.http.messaging import MessagingHttpAdapter
    from tollgate.config.settings import Settings

#: Every target this build can send to, and the setting that names its URL: a worker polls a
#: target's task queue only with that URL set (``tollgate/runtime/workers.py``).
URL_VARIABLES = {"messaging": "TOLLGATE_MESSAGING_URL", "helpdesk": "TOLLGATE_HELPDESK_URL"}


def action_adapters(settings: Settings) -> dict[str, MessagingHttpAdapter]:
    """Adapter name -> adapter, each with the capabilities ``TOLLGATE_TARGETS`` declares for it.
    The caller closes them (``aclose``). Each is there only when its URL is set (or the
    running stack names it); a main worker refuses to start without messaging's."""
    # Here, not at the top: `ops state` and `ops status` read URL_VARIABLES only, and the
    # adapters bring httpx (docs/performance.md, "CLI start-up").
    from adapters.http.helpdesk import HelpdeskHttpAdapter
    from adapters.http.messaging import MessagingHttpAdapter

    targets, connections = settings.targets.capabilities, settings.targets.connections
    adapters: dict[str, MessagingHttpAdapter] = {}
    if settings.messaging_url:
        adapters["messaging"] = MessagingHttpAdapter(settings.messaging_url,
                                                     capabilities=targets.get("messaging"),
                                                     connections=connections)
    if settings.helpdesk_url:  # the triage domain's target (docs/triage.md)
        adapters["helpdesk"] = HelpdeskHttpAdapter(settings.helpdesk_url,
                                                   capabilities=targets.get("helpdesk"),
                                                   connections=connections)
    return adapters
