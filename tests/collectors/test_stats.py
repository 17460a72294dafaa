"""benchdb.stats.summarize: the one summary of timing samples everyone shares."""

from __future__ import annotations

import numpy as np
import pytest

from benchdb.stats import NOISY_CV, summarize


def test_summary_matches_numpy() -> None:
    samples = [1.0, 1.1, 0.9, 1.05, 3.0, 0.95]
    st = summarize(samples)
    x = np.array(samples)
    assert st.n == 6
    assert st.t_min == 0.9
    assert st.t_median == pytest.approx(np.median(x))
    q75, q25 = np.percentile(x, [75, 25])
    assert st.t_iqr == pytest.approx(q75 - q25)
    assert st.t_cv == pytest.approx(np.std(x, ddof=1) / np.mean(x))


def test_noisy_flag_follows_threshold() -> None:
    quiet = summarize([1.0, 1.01, 0.99, 1.0, 1.0])
    loud = summarize([1.0, 2.0, 1.0, 1.0, 1.0])
    assert quiet.t_cv < NOISY_CV and not quiet.noisy
    assert loud.t_cv > NOISY_CV and loud.noisy


def test_one_sample_has_no_spread() -> None:
    st = summarize([2.5])
    assert (st.t_min, st.t_median, st.t_iqr, st.t_cv, st.noisy) == (2.5, 2.5, 0.0, 0.0, False)


@pytest.mark.parametrize("bad", [[], [1.0, float("nan")], [float("inf")]])
def test_rejects_empty_and_non_finite(bad: list[float]) -> None:
    with pytest.raises(ValueError):
        summarize(bad)
