"""The 2D halo exchange: four neighbours, periodic, non-blocking, on an MPI Cartesian grid.

POP's boundary exchange (paper 001 section 3.2): phase X then phase Y, each
two ``MPI_Irecv`` + two ``MPI_Isend`` + ``MPI_Waitall``, with packing and
unpacking of the strips (:func:`native.halo_exchange`).  Every configuration
is checked once before timing: after one exchange every halo cell, corners
included, must hold its periodic neighbour's value.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from mpi4py import MPI

from . import native
from .collective_timing import measure
from .placement import RankInfo, group_placement, node_count, node_mapping
from .results import CommPoint, Skip, point_key


def _initial(fields: int, local: tuple[int, int], h: int, coords, dims) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Global-index values everywhere, inner points only (halos hold -1)."""
    nx, ny = local
    gnx, gny = nx * dims[0], ny * dims[1]
    a = np.full((fields, nx + 2 * h, ny + 2 * h), -1.0)
    gx = (coords[0] * nx + np.arange(-h, nx + h)) % gnx
    gy = (coords[1] * ny + np.arange(-h, ny + h)) % gny
    f = np.arange(fields)[:, None, None]
    expected = (f * gnx + gx[None, :, None]) * gny + gy[None, None, :]
    a[:, h : h + nx, h : h + ny] = expected[:, h : h + nx, h : h + ny]
    return a, expected


def exchange_checked(cart: MPI.Cartcomm, fields: int, local: tuple[int, int], h: int):  # type: ignore[no-untyped-def]
    """Arrays, buffers and neighbours for one configuration, verified by one exchange."""
    dims = cart.Get_topo()[0]
    coords = cart.Get_coords(cart.rank)
    nbr = np.array([*cart.Shift(0, 1), *cart.Shift(1, 1)], dtype=np.int64)
    comm, _, double, _ = native.handles(cart)
    a, expected = _initial(fields, local, h, coords, dims)
    sbuf, rbuf, req = native.halo_buffers(fields, local, h)
    tmpi = np.zeros(2)
    err = native.halo_exchange(a, h, 1, cart.rank, nbr, sbuf, rbuf, req, comm, double, tmpi)
    if err or not np.array_equal(a, expected):
        raise RuntimeError(
            f"halo exchange gave wrong halo values for local {local}, halo {h}, "
            f"fields {fields} (MPI error code {err})"
        )
    return a, nbr, sbuf, rbuf, req, comm, double


def _runner(cart, a, h, nbr, sbuf, rbuf, req, c, double):  # type: ignore[no-untyped-def]
    """run(reps) -> (elapsed, MPI seconds in X, MPI seconds in Y) of this rank."""

    def run(reps: int) -> tuple[float, float, float]:
        tmpi = np.zeros(2)
        t0 = MPI.Wtime()
        err = native.halo_exchange(a, h, reps, cart.rank, nbr, sbuf, rbuf, req, c, double, tmpi)
        elapsed = MPI.Wtime() - t0
        if err:
            raise RuntimeError(f"MPI error {err} in the halo exchange")
        return elapsed, tmpi[0], tmpi[1]

    return run


def halo2d(
    comm: MPI.Comm,
    infos: list[RankInfo],
    dims: tuple[int, int],
    configs: list[tuple[int, int, int]],
    samples: int,
    min_time: float,
    skip: Skip,
) -> Iterator[CommPoint]:
    """``configs``: (local edge n for an n×n block, halo width, fields)."""
    cart = comm.Create_cart(list(dims), periods=[True, True], reorder=False)
    placement = group_placement(infos, range(comm.size))
    try:
        for n, h, fields in configs:
            sx, sy = n * h * fields * 8, (n + 2 * h) * h * fields * 8
            key = f"decomp={dims[0]}x{dims[1]};local={n}x{n};halo={h};fields={fields}"
            if skip(point_key("halo2d", comm.size, 1, placement, max(sx, sy), key)):
                continue
            a, nbr, sbuf, rbuf, req, c, double = exchange_checked(cart, fields, (n, n), h)

            timed = measure(
                cart,
                _runner(cart, a, h, nbr, sbuf, rbuf, req, c, double),
                samples=samples,
                min_time=min_time,
            )
            yield CommPoint.measured(
                timed,
                benchmark="halo2d",
                ranks=comm.size,
                nodes=node_count(infos),
                pairs=1,
                placement=placement,
                message_bytes=max(sx, sy),
                params_key=key,
                params={
                    "decomp": list(dims),
                    "local": [n, n],
                    "halo": h,
                    "fields": fields,
                    "word_bytes": 8,
                    "periodic": [True, True],
                    "node_of": node_mapping(infos),
                    "message_bytes": {"x": sx, "y": sy},
                    "time": "one exchange (X then Y), slowest rank",
                    "mpi_x_samples": timed.extra[0],
                    "mpi_y_samples": timed.extra[1],
                    "mpi_note": "seconds inside MPI per phase (post to Waitall), slowest rank",
                },
            )
    finally:
        cart.Free()
