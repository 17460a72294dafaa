"""Static HTML reports (``benchdb report``): no server, opens from disk."""

from .build import write_report

__all__ = ["write_report"]
