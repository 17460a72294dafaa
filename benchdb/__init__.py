"""benchdb: database-driven empirical benchmarking and performance lookup.

The method is that of Osprey et al. (HPCS 2014; [003] in docs/design.md):
benchmark an application's own loops over a well-chosen set of problem sizes,
store every measurement, and look performance up by memory footprint.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("benchdb")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"
