"""``benchdb ab``'s default footprints: three a cache, from the machine read."""

from __future__ import annotations

import pytest
from benchdb.collectors.ab.coordinator import default_footprints

from benchdb.errors import UserError
from benchdb.machine import detect_machine

KiB, MiB = 2**10, 2**20


def test_an_eighth_a_quarter_and_half_of_each_cache() -> None:
    machine = detect_machine().with_caches([32 * KiB, 1 * MiB, 32 * MiB])
    assert default_footprints(machine) == (
        "4KiB,8KiB,16KiB,128KiB,256KiB,512KiB,4096KiB,8192KiB,16384KiB"
    )


def test_a_large_last_level_cache_keeps_three_sizes_below_the_cap() -> None:
    # 300 MiB: half of it would be 150 MiB, so the cap (32 MiB) and its quarter and half
    machine = detect_machine().with_caches([48 * KiB, 2 * MiB, 300 * MiB])
    assert default_footprints(machine).split(",")[-3:] == ["8192KiB", "16384KiB", "32768KiB"]


def test_a_machine_without_caches_is_told_to_give_the_sizes() -> None:
    with pytest.raises(UserError, match="--footprints"):
        default_footprints(detect_machine().with_caches([]))
