"""The settings tree: every environment variable Tollgate reads, parsed and validated here."""
