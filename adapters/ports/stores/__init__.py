"""Store ports: what each activity asks of the PostgreSQL stores, named by the role it gives them.

Each Protocol holds only the methods its activities call; the stores in ``adapters/postgres/``
match several at once (``PostgresStore`` is the activities' ``StepStore``, ``EventGate``,
``ReviewStore`` and ``SendStore``). The result types a store hands back live here with the
port, so an activity reads them without importing the store.

One module per part of the event's life the roles serve: ``events`` (the steps, the idempotency
gate, review, the context's contacts), ``sending`` (the send step's reads, its action token, the
reconciler's resend checks), ``receipts`` (attempts, settling, the sweep), ``controls`` (kill
switches, rollout, the circuit, dead letters), ``fanout`` (a business event's consumers) and
``tagging`` (the tagging job). Nothing is re-exported here: an import names the module
(``from adapters.ports.stores.receipts import ReceiptLedger``).
"""
