"""Payload encryption: the key ring and codec every client uses, and the codec server that
decrypts for the Web UI and the ``temporal`` CLI."""
