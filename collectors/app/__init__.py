"""The distributed (mpi4py) shallow-water run: the measured side of the application model.

``collect.run_app`` validates, launches ``worker`` under ``mpiexec`` and stores
the result as one ``app_run`` row; see ``benchdb app run``.
"""
