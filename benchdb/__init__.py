"""benchdb: database-driven empirical benchmarking and performance lookup.

The method is that of Osprey et al. (HPCS 2014; [003] in docs/design.md):
benchmark an application's own loops over a well-chosen set of problem sizes,
store every measurement, and look performance up by memory footprint.
"""

from typing import Any


def __getattr__(name: str) -> Any:
    """``__version__`` read from the installed metadata when first asked for: importing
    ``importlib.metadata`` costs every command 20 ms of start-up, and few need it."""
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("benchdb")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0.0.0+unknown"
