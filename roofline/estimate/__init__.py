"""The estimate: specs in, a :class:`~roofline.estimate.result.EstimateResult` out (the JSON contract)."""
