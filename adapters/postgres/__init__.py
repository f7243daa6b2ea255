"""The PostgreSQL stores (one file per concern), their shared pool and the numbered migrations."""
