"""Errors that mean *the user asked for something we cannot do*.

The CLI turns a :class:`UserError` into one line on stderr and exit status 2
(docs/design.md "Conventions"); anything else is a bug and keeps its traceback.
Messages name the problem *and* the fix.
"""


class UserError(Exception):
    """Bad input or an unusable environment; the message says how to fix it."""


class NoDatabase(UserError):
    """No database where one was named: a reader refuses, ``benchdb kernels`` lists anyway."""
