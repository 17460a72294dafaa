"""Slurm: collections on many nodes and MPI jobs across nodes, into one shared database.

benchdb drives the cluster's own machinery rather than replacing it:
:mod:`.script` writes the batch script, :mod:`.submit` checks the request
against the cluster (``sinfo``) and hands the script to ``sbatch``.  Every
node writes into the one database the ``--db`` URL names; nodes of one node
class pool their points (:mod:`benchdb.node_class`), and each records its
Slurm node name (``SLURMD_NODENAME``) as its host.
"""
