"""The Python API: each command as a function, its keyword arguments the command's flags.

    >>> import roofline
    >>> r = roofline.estimate(model="bert-large", cpu="icx")   # the result --json prints
    >>> round(r.speedups[0].end_to_end_ceiling, 2)
    3.15

A flag ``--seq-len`` is the argument ``seq_len``; a switch (``--separate-qkv``) takes True; a list flag
(``--precision``) takes a list or a comma-separated string. ``model``, ``cpu``, ``calibration`` and
``stack`` also take the objects themselves (a :class:`~roofline.spec.model.ModelSpec`, a
:class:`~roofline.spec.platform.Platform`, ...). Values are checked as the command line checks them,
and a bad one raises :class:`roofline.errors.UserError` with the message the command would print.
Results are the typed objects behind the JSON contract; ``result.to_json()`` is exactly what
``--json`` prints.
"""

from __future__ import annotations

import argparse
from typing import Any

from roofline.errors import UserError

#: flags that shape the printed output or write files: the caller has the result object instead
_NOT_ARGUMENTS = {"help", "json", "force", "brief", "plot", "output", "mib", "best_only"}


def _parser(command: str) -> tuple[argparse.ArgumentParser, dict[str, argparse.Action]]:
    """The command's parser, raising UserError on a bad value, and its flags by argument name."""
    from roofline.cli import build_parser

    parser = build_parser().commands[command]
    parser.raise_errors = True
    return parser, {a.dest: a for a in parser._actions if a.option_strings and a.dest not in _NOT_ARGUMENTS}


def _flag_value(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise TypeError
    return str(value)


def _namespace(command: str, kwargs: dict[str, Any]) -> argparse.Namespace:
    """``kwargs`` parsed as the command's flags: the command line's defaults, ranges and messages."""
    parser, actions = _parser(command)
    argv: list[str] = []
    objects: dict[str, Any] = {}
    for key, value in kwargs.items():
        action = actions.get(key)
        if action is None:
            raise UserError(f"{command}: no argument '{key}'; the arguments: {', '.join(sorted(actions))}")
        if value is None:
            continue
        flag = max(action.option_strings, key=len)
        if action.nargs == 0:  # a switch
            if not isinstance(value, bool):
                raise UserError(f"{command}: {key}={value!r}: give True or False")
            argv += [flag] if value else []
            continue
        if not isinstance(value, (str, int, float, list, tuple)) or isinstance(value, bool):
            objects[key] = value  # a Platform, ModelSpec, Calibration or StackProfile: checked by its loader
            argv.append(f"{flag}=-")
            continue
        items = list(value) if isinstance(value, (list, tuple)) else [value]
        try:
            texts = [_flag_value(v) for v in items]
        except TypeError:
            raise UserError(f"{command}: {key}={value!r}: give a string or a number") from None
        if isinstance(action, argparse._AppendAction):
            argv += [f"{flag}={t}" for t in texts]
        elif action.nargs in ("*", "+"):
            argv += [flag, *texts]
        elif len(texts) == 1:
            argv.append(f"{flag}={texts[0]}")
        else:
            raise UserError(f"{command}: {key} takes one value, not {len(texts)}")
    try:
        args = parser.parse_args(argv)
    except UserError as e:  # argparse names the flags: name the arguments instead
        message = str(e)
        for key, action in sorted(actions.items(), key=lambda kv: -len(max(kv[1].option_strings, key=len))):
            message = message.replace(f"argument {'/'.join(action.option_strings)}", key)
            message = message.replace(max(action.option_strings, key=len), key)
        raise UserError(f"{command}: {message}") from None
    for key, obj in objects.items():
        setattr(args, key, obj)
    return args


def estimate(model: Any = None, cpu: Any = None, **flags: Any):
    """``roofline estimate``: the roofline ceilings of ``model``'s GEMMs on ``cpu``, the end-to-end Amdahl ceiling
    and the realistic estimate; returns the :class:`~roofline.results.estimate.EstimateResult`.

    Flags: precision, baseline, batch, seq_len, phase, context, bandwidth, memory_model, cores, instance_cores,
    sockets, group_size, kv_dtype, quantize_lm_head, calibration, stack, separate_qkv, f_gemm, gemm_speedup,
    non_gemm_speedup, calibration_any_platform (``roofline estimate --help``)."""
    from roofline.cli.estimate_cmd import compute

    return compute(_namespace("estimate", {"model": model, "cpu": cpu, **flags}))


def footprint(model: Any = None, precision: str | None = None, **flags: Any):
    """``roofline footprint``: bytes of ``model``'s tensors before and after quantizing to ``precision``; returns
    the :class:`~roofline.results.footprint.FootprintResult`.

    Flags: base_dtype, group_size, quantize_lm_head, quantize_embeddings, count_tied_lm_head_copy."""
    from roofline.cli.footprint_cmd import compute

    return compute(_namespace("footprint", {"model": model, "precision": precision, **flags}))


def check(**flags: Any):
    """``roofline check``: measured speedups (typed, or a validate ``report``) beside the ceilings and the
    realistic estimate, the gap split into named terms; returns the :class:`~roofline.results.check.CheckResult`.

    Flags: model, cpu, precision, baseline, throughput_speedup, linear_speedup, report, calibration, stack,
    batch, seq_len, memory_model, f_gemm, gemm_speedup, non_gemm_speedup, calibration_any_platform."""
    from roofline.cli.check_cmd import compute

    return compute(_namespace("check", flags))


def accuracy(records: list[str] | None = None):
    """``roofline accuracy``: every measurement record (files or folders; default: the built-in ones) against
    the ceiling and the realistic estimate, leave-one-platform-out; returns the
    :class:`~roofline.results.accuracy.AccuracyResult`."""
    from roofline.cli.accuracy_cmd import compute

    if isinstance(records, str):
        records = [records]
    return compute(_namespace("accuracy", {"records": records}))


def plan(model: Any = None, cpu: Any = None, **flags: Any):
    """``roofline plan``: instance layouts, requests per second per server under the SLO, servers needed and cost,
    per CPU (``cpu``: one, a list, or a comma-separated string); returns the
    :class:`~roofline.results.plan.PlanResult`.

    Flags: precision, scenario, target_rps, p99_ms, price_per_hour, utilization, seq_len, seq_len_mean,
    seq_len_dist, seq_len_sigma, seq_len_histogram, max_batch_tokens, max_wait_ms, output_len, ttft_ms, tpot_ms,
    memory_gb, max_sequences, kv_dtype, phase, stack, cores, memory_model, bandwidth, seed
    (``roofline plan --help``)."""
    from roofline.cli.plan_cmd import compute

    objects = None
    if isinstance(cpu, (list, tuple)) and any(not isinstance(c, str) for c in cpu):
        objects, cpu = list(cpu), "-"  # Platform objects: parsed as a placeholder, then given as they are
    args = _namespace("plan", {"model": model, "cpu": cpu, **flags})
    if objects is not None:
        args.cpu = objects
    return compute(args)
