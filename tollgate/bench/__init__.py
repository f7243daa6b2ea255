"""The benchmark: the full pipeline against a bare Temporal workflow of the same shape.

``command`` runs it, ``run`` drives the rounds, ``tally`` counts, ``spread`` pairs the rounds
of Tollgate and each baseline, ``report`` prints, ``worker`` is the worker process of each
pipeline, ``baseline`` the bare workflow (docs/performance.md).
"""
