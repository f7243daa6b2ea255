"""Ports: what the activities need from the outside world, as Protocols, one module per family.

``targets`` (the systems of record and the targets written to), ``models`` (drafting and
tagging models), ``stores`` (a package: the PostgreSQL stores, by the role each activity gives
them, one module per part of an event's life), ``notify`` (reviewer notice channels), ``watch``
(the step watch), ``bus`` (a consumer's dead-letter queue). Nothing is re-exported here: an
import names the module (``from adapters.ports.stores.receipts import ReceiptLedger``), so a
reader sees the family at once.

Implementations live one package per technology beside this one (``adapters/postgres/``,
``adapters/http/``, ``adapters/models/``, ``adapters/notify/``) and do not inherit the
Protocols: they match them structurally, and mypy checks the match where the shell wires them
(``tollgate/runtime/workers.py``). Adapters never import ``temporalio``; they raise the
taxonomy's exceptions from ``contracts.errors`` and the activities turn those into Temporal
failures.
"""
