"""The one registry every kind of plug-in uses (methods, baselines, detectors)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from benchdb.errors import UserError
from benchdb.plugin_registry import Registry, check_names
from benchdb.predict.baselines import BASELINES
from benchdb.predict.methods import METHODS
from benchdb.regress.detectors import DETECTORS


@dataclass(frozen=True)
class Entry:
    name: str


def test_entries_are_found_by_name_in_the_order_registered() -> None:
    reg: Registry[Entry] = Registry("widget")
    a, b = Entry("b"), Entry("a")
    assert reg.register(a) is a  # returns the entry, so it also serves as a decorator
    reg.register(b)
    assert reg.names() == ["b", "a"]
    assert reg.get("a") is b and "a" in reg and "c" not in reg


def test_an_unknown_name_is_a_user_error_naming_the_known_ones() -> None:
    reg: Registry[Entry] = Registry("widget")
    reg.register(Entry("one"))
    reg.register(Entry("two"))
    with pytest.raises(UserError, match=r"^unknown widget 'three'; use one of: one, two$"):
        reg.get("three")


def test_a_name_is_registered_once() -> None:
    reg: Registry[Entry] = Registry("widget")
    reg.register(Entry("one"))
    with pytest.raises(ValueError, match="widget 'one' is registered twice"):
        reg.register(Entry("one"))
    with pytest.raises(ValueError, match="registered twice"):
        METHODS.register(METHODS.get("pchip"))
    assert METHODS.names() == ["linear", "pchip", "logcurve"]  # the refused one left no trace


def test_one_option_may_choose_among_several_kinds() -> None:
    check_names(["pchip", "roofline"], METHODS, BASELINES)
    known = "linear, pchip, logcurve, eq5, roofline, escape"
    with pytest.raises(UserError, match=f"^unknown method 'cubic'; use one of: {known}$"):
        check_names(["pchip", "cubic"], METHODS, BASELINES)


def test_every_kind_lists_its_entries_as_the_command_line_names_them() -> None:
    assert METHODS.names() == ["linear", "pchip", "logcurve"]
    assert BASELINES.names() == ["eq5", "roofline", "escape"]
    assert DETECTORS.names() == ["potts", "zscore"]
    for reg in (METHODS, BASELINES, DETECTORS):
        assert all(reg.get(n).name == n for n in reg.names())
