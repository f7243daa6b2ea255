"""The outside systems Tollgate reaches over HTTP: the CRM, the messaging target and the
target declarations they share."""
