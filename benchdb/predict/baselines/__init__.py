"""Analytic baselines the lookup is judged against (paper 003 §IV; ESCAPE D3.5).

A baseline module provides ``NAME``, ``SUMMARY``, ``fit(data: MachineData) ->
params`` (JSON-able, fitted per machine from all its kernels) and
``evaluate(params, basis, footprint) -> rates`` in the kernel's unit, NaN where
the baseline has nothing to say (eq. 5 for a kernel without flops).
"""

from __future__ import annotations

from types import ModuleType

from . import eq5, escape, roofline

BASELINES: dict[str, ModuleType] = {m.NAME: m for m in (eq5, roofline, escape)}
