"""The estimate: specs in, a :class:`~roofline.results.estimate.EstimateResult` out (the JSON contract)."""
