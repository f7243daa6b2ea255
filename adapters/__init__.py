"""Ports (``base.py``) and one implementation per real system."""
