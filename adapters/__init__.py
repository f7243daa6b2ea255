"""The ports (``ports/``, one module per family) and their implementations, one package per
technology."""
