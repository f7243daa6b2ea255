"""What operators run beyond reading rows: sweeps, dead-letter replay, backup and restore,
the event chain (``tollgate trace``) and the release gate (``tollgate certify``)."""
