"""The CRM stand-in's own record, as it goes over the wire.

The stand-in plays a foreign system, so it does not share Tollgate's contracts: its record
carries what a real CRM keeps about a customer (contact details, free-text notes), most of which
Tollgate must never read. The context adapter picks the few fields it needs and ignores the rest.
"""

from __future__ import annotations

from pydantic import AwareDatetime, BaseModel, ConfigDict, StrictBool


class CrmRecord(BaseModel):
    """One customer of one tenant. Unknown fields are refused (a 400), as a real CRM would."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tenant_id: str
    customer_id: str
    first_name: str
    locale: str = "en"
    pet_name: str | None = None
    consent_messaging: StrictBool
    updated_at: AwareDatetime
    notes: str | None = None
    phone: str | None = None
    email: str | None = None
    address: str | None = None


#: The demo customers ``seed_demo`` loads. Contact details are fictional (example domains,
#: 555 numbers); the notes read like what staff type into a real CRM.
DEMO_CUSTOMERS: tuple[dict[str, object], ...] = (
    {"tenant_id": "acme", "customer_id": "C-1001", "first_name": "Lan", "pet_name": "Miu",
     "consent_messaging": True, "phone": "+1 202 555 0147", "email": "lan.tran@example.com",
     "address": "12 Willow Lane, Springfield, IL 62704",
     "notes": "Prefers texts after 5 pm. Miu gets anxious at the clinic; book the quiet room."},
    # consent revoked: the demo must never send to this customer
    {"tenant_id": "acme", "customer_id": "C-1002", "first_name": "Minh", "pet_name": "Bong",
     "consent_messaging": False, "phone": "+1 202 555 0198", "email": "minh.le@example.com",
     "address": "48 Harbor Road, Springfield, IL 62702",
     "notes": "Called in May to stop all reminders; update only by letter."},
    {"tenant_id": "globex", "customer_id": "C-2001", "first_name": "Ana", "pet_name": "Rex",
     "consent_messaging": True, "phone": "+1 415 555 0142", "email": "ana.ruiz@example.org",
     "address": "2210 Mission Street, San Francisco, CA 94110",
     "notes": "Rex is on a prescription diet. Owner travels often; confirm by email as well."},
)
