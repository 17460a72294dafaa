"""The lines a benchmark job prints for its launcher (no MPI import: the launcher uses it).

Rank 0 prints ``benchdb-progress {json}`` after each point and
``benchdb-result {json}`` at the end on stdout; a failing rank prints one
``benchdb-comm-error: ...`` line on stderr before aborting the job.
"""

PROGRESS = "benchdb-progress"
RESULT = "benchdb-result"
ERROR = "benchdb-comm-error"

BENCHMARKS = ("pingpong", "exchange", "pairs", "halo2d", "allreduce")
