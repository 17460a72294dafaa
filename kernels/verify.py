"""Collect-time verification: compiled results against a reference (docs/design.md,
"Collect-time verification").

Before a sweep, each benchmark with a numpy reference runs a few repetitions
on a small shape, compiled exactly as it will be timed, and the reference runs
the same repetitions; every output array must agree to within a tolerance
relative to the reference's largest value.  The tolerance admits what
``fastmath`` may reorder (round-off of order 1e-15 in float64 per operation,
growing with the repetitions) and refuses a wrong coefficient, index or
boundary, whose error is of the order of the field itself.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .api import KernelError, Shape, Verification

TOLERANCE = {"float64": 1e-9, "float32": 1e-4}
"""Largest error allowed, relative to the reference's largest absolute value."""


def as_arrays(output: np.ndarray | Sequence[np.ndarray]) -> list[np.ndarray]:
    """One output array, or several, as a list."""
    return [output] if isinstance(output, np.ndarray) else list(output)


def compare(
    benchmark: str,
    shape: Shape,
    precision: str,
    threads: int,
    got: Sequence[np.ndarray],
    expected: Sequence[np.ndarray],
    tolerance: float | None = None,
) -> Verification:
    """The :class:`Verification` of ``got`` against ``expected``; KernelError if they differ."""
    tol = TOLERANCE[precision] if tolerance is None else tolerance
    where = f"at {'x'.join(map(str, shape))} ({precision}, {threads} thread(s))"
    if len(got) != len(expected):
        raise KernelError(
            f"{benchmark} gives {len(got)} output array(s) {where} but its reference "
            f"{len(expected)}; make the outputs match"
        )
    worst = 0.0
    for g, e in zip(got, expected, strict=True):
        g, e = np.asarray(g, dtype=np.float64), np.asarray(e, dtype=np.float64)
        if g.shape != e.shape:
            raise KernelError(
                f"{benchmark} gives an output of shape {g.shape} {where} where its reference "
                f"gives {e.shape}; make the outputs match"
            )
        scale = max(float(np.max(np.abs(e))) if e.size else 0.0, np.finfo(np.float64).tiny)
        diff = np.abs(g - e)
        err = float(np.max(diff)) / scale if diff.size else 0.0
        worst = max(worst, err if np.isfinite(err) else np.inf)
    if not worst <= tol:
        raise KernelError(
            f"{benchmark} disagrees with its reference {where}: max error {worst:.2g} of the "
            f"reference's largest value, tolerance {tol:g}; fix the kernel (or its reference) "
            "before benchmarking it"
        )
    return Verification(
        benchmark,
        tuple(shape),
        precision,
        threads,
        f"max error {worst:.1e} of the reference's largest value (tolerance {tol:g})",
    )
