"""The settings tree: every environment variable Tollgate reads, parsed and validated here
(``settings.py``; docs/config.md is generated from it by ``python -m tollgate.config.docs``)."""
