"""How far apart are independent calibrations of the time-stamp counter's rate?

Every benchmark process turns its clock ticks into seconds with one rate,
calibrated once (:func:`benchdb.kernels.clock.tick_rate`).  Its error goes
into every loop time of that process, whole: a rate 1 % high makes every curve
point of a sweep 1 % fast.  The true rate does not change (an invariant TSC;
docs/findings/collection.md, "Tick rate"), so the spread of many calibrations
is their error.  This calibrates ``--calibrations`` times (the cache cleared
each time) and prints each one's deviation from their median.  Run it with
the machine idle and with both cores busy (a sweep or an app validation in
progress): a process preempted between its clock reads is what a calibration
has to survive.

    python benchmarks/tick_rate.py --calibrations 40
"""

from __future__ import annotations

import argparse
import statistics

from benchdb.kernels.clock import tick_rate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calibrations", type=int, default=40)
    args = ap.parse_args()
    rates = []
    for _ in range(args.calibrations):
        tick_rate.cache_clear()
        rates.append(tick_rate())
    mid = statistics.median(rates)
    dev = [r / mid - 1 for r in rates]
    print(f"median rate {mid / 1e9:.6f} GHz; each calibration's deviation from it (ppm):")
    print(" ".join(f"{1e6 * d:+.0f}" for d in dev))
    print(
        f"median |deviation| {1e6 * statistics.median(map(abs, dev)):.0f} ppm, "
        f"worst {1e6 * max(dev, key=abs):+.0f} ppm, "
        f"beyond 1000 ppm: {sum(abs(d) > 1e-3 for d in dev)} of {len(dev)}"
    )


if __name__ == "__main__":
    main()
