"""Serving simulations: how many requests per second a server takes under an SLO.

Between the pure calculators (:mod:`roofline.calc`) and the estimates that wire them to catalogs
(:mod:`roofline.estimate`). Like the calculators these are pure numpy, vectorised over scenarios
and free of I/O; unlike them they check their inputs and raise
:class:`roofline.errors.UserError`, because the plan passes the user's rates, lengths and SLOs
straight through to them.

- :mod:`~roofline.serving.request_lengths`: fixed, truncated-lognormal or histogram lengths;
- :mod:`~roofline.serving.dynamic_batching`: one server's ``c`` instances behind one FCFS queue
  with dynamic batching (encoders): p50/p99 latency, ``max_rate`` under a p99 SLO, offline
  throughput, latency-vs-load curves;
- :mod:`~roofline.serving.continuous_batching`: decoders with continuous batching: TTFT, TPOT,
  tokens/s, the highest rate meeting TTFT and TPOT SLOs;
- :mod:`~roofline.serving.rate_search`, :mod:`~roofline.serving.sampling`,
  :mod:`~roofline.serving.checks`: the scan over loads, run sizes and confidence intervals,
  input checks.

The closed forms they are tested against (Erlang C, M/D/1, Allen-Cunneen) are calculators:
:mod:`roofline.calc.queueing_closed`.
"""
