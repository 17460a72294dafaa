"""Static HTML reports (``benchdb report``): no server, opens from disk."""

from .build import Report, check_report_folder, write_report

__all__ = ["Report", "check_report_folder", "write_report"]
