"""MPI communication benchmarks (run under ``mpiexec`` or ``srun``).

``python -m benchdb.collectors.mpi`` runs ping-pong, k concurrent pairs, a 2D
halo exchange and allreduce on every rank of ``MPI_COMM_WORLD``, gathers the
results on rank 0 and writes them in one transaction, only if every rank
succeeded.  ``benchdb comm collect --ranks N`` starts it under the mpich
wheel's ``mpiexec`` (:mod:`.launcher`); on a cluster start it yourself::

    srun -n 64 python -m benchdb.collectors.mpi --db postgresql+psycopg://host/db
"""

import mpi4py

# Initialise MPI as a C benchmark's MPI_Init does (MPI_THREAD_SINGLE), not with
# mpi4py's default MPI_THREAD_MULTIPLE, whose thread-safety locks would sit on
# every timed call.  Set before any module here imports mpi4py.MPI.
mpi4py.rc.thread_level = "single"
