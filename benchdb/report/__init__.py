"""Static HTML reports (``benchdb report``): no server, opens from disk."""

from .build import Report, write_report

__all__ = ["Report", "write_report"]
