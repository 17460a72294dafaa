"""``benchdb ab``: two versions measured in one run, each in a worker process of its own.

* :mod:`.protocol`: the sides, the request a worker plans from, and the JSON lines
  the coordinator and a worker exchange;
* :mod:`.worker`: the worker (``python -m benchdb.collectors.ab.worker``), run by
  each side's own Python with its own environment;
* :mod:`.process`: a worker as the coordinator sees it (start, ask, stop);
* :mod:`.pairing`: one point measured on both sides, sample pairs in randomized
  interleaved order (RMIT) or started together on two cores (duet);
* :mod:`.coordinator`: the sweep over the points, stored as two linked runs and
  continued after Ctrl-C or a crash.

The judging of the pairs is :mod:`benchdb.regress.paired`.
"""
