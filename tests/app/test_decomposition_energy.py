"""Decompositions, the power model and the RAPL reader (no MPI)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchdb.app.decomposition import (
    Decomposition,
    check_decomposition,
    decompositions,
    parse_decomposition,
)
from benchdb.app.energy import PowerModel, RaplReader
from benchdb.errors import UserError


def test_parse_and_local_shape() -> None:
    d = parse_decomposition("2x3")
    assert (d.px, d.py, d.ranks, d.key) == (2, 3, 6, "2x3")
    assert d.local_shape((10, 9)) == (5, 3)
    assert d.origin((10, 9), (1, 2)) == (5, 6)


@pytest.mark.parametrize(("text", "needle"), [("0x2", "zero"), ("2by1", "PXxPY"), ("", "PXxPY")])
def test_parse_rejects(text: str, needle: str) -> None:
    with pytest.raises(UserError, match=needle):
        parse_decomposition(text)


def test_check_rejects_non_dividing_and_too_many() -> None:
    with pytest.raises(UserError, match="does not divide"):
        check_decomposition((15, 12), Decomposition(2, 1))
    with pytest.raises(UserError, match="more than the 2 allowed"):
        check_decomposition((16, 16), Decomposition(2, 2), max_ranks=2)


def test_enumeration_only_exact_divisors() -> None:
    assert decompositions((12, 9), 3) == [Decomposition(1, 3), Decomposition(3, 1)]
    assert decompositions((7, 7), 2) == []


def test_power_model_energy() -> None:
    pm = PowerModel(core_busy_w=10, core_idle_w=2, package_idle_w=5, dram_w=3)
    e = pm.energy(2.0, busy_cores=2, cores=4, nodes=1)
    assert e["package_j"] == pytest.approx(2.0 * (5 + 2 * 10 + 2 * 2))
    assert e["dram_j"] == pytest.approx(6.0)
    with pytest.raises(UserError, match="non-negative"):
        PowerModel(core_busy_w=-1)


def _domain(root: Path, name: str, label: str, energy: int, max_uj: int) -> Path:
    d = root / name
    d.mkdir(parents=True)
    (d / "name").write_text(label + "\n")
    (d / "energy_uj").write_text(f"{energy}\n")
    (d / "max_energy_range_uj").write_text(f"{max_uj}\n")
    return d


def test_rapl_reader_sums_package_and_dram_and_undoes_wrap(tmp_path: Path) -> None:
    pkg = _domain(tmp_path, "intel-rapl:0", "package-0", 900, 1000)
    dram = _domain(pkg, "intel-rapl:0:0", "dram", 100, 1000)
    _domain(pkg, "intel-rapl:0:1", "core", 5, 1000)  # a subdomain we do not count
    reader = RaplReader(tmp_path)
    assert reader.available and {d.kind for d in reader.domains} == {"package", "dram"}
    before = reader.snapshot()
    (pkg / "energy_uj").write_text("50\n")  # wrapped: 900 -> 1000 -> 50
    (dram / "energy_uj").write_text("400\n")
    e = reader.energy(before, reader.snapshot())
    assert e["package_j"] == pytest.approx(151e-6)
    assert e["dram_j"] == pytest.approx(300e-6)


def test_rapl_absent_says_why(tmp_path: Path) -> None:
    reader = RaplReader(tmp_path / "missing")
    assert not reader.available
    assert "absent" in reader.describe_absence()["reason"]
