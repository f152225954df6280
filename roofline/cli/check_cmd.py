"""``roofline check`` and ``roofline calibrate``."""

from __future__ import annotations

import argparse

from roofline.catalog import find_file, load_model_file
from roofline.cli.estimate_cmd import calibration_arg, model_arg, platform_arg, stack_arg
from roofline.cli.emit import emit, print_rich
from roofline.catalog.reports import load_report
from roofline.errors import UserError
from roofline.model.amdahl import Overrides
from roofline.files.writing import check_target, write_text
from roofline.results.check import CheckResult


def _report_platform(report, args, path: str):
    ref = args.cpu or report.platform.file
    try:
        platform = platform_arg(ref)[0]
    except UserError:
        raise UserError(f"{path}: its platform file {report.platform.file} is not here; give the probe with --cpu") from None
    if platform.name != report.platform.name:
        raise UserError(f"{path}: the report was measured on '{report.platform.name}', not '{platform.name}' "
                        f"(--cpu {args.cpu if isinstance(args.cpu, str) else platform.name})")
    return platform


def _report_model(report, args, path: str):
    given = model_arg(args.model).name if args.model else report.model
    if given != report.model:
        raise UserError(f"{path}: the report is for model '{report.model}', not '{given}'")
    from roofline.fidelity.check import report_model

    return report_model(report, load_model_file(find_file("models", report.model)))


def compute(args: argparse.Namespace) -> CheckResult:
    from roofline.fidelity.check import check_report, check_typed

    calibration, calibration_name = calibration_arg(args.calibration)
    if args.report:
        if args.throughput_speedup is not None or args.linear_speedup is not None:
            raise UserError("give either --report or the measured speedups, not both")
        report = load_report(args.report)
        result = check_report(report, _report_platform(report, args, args.report), _report_model(report, args, args.report),
                              calibration=calibration, source=args.report, calibration_name=calibration_name,
                              precision=args.precision, baseline=(args.baseline or "fp32") if args.precision else None,
                              calibration_any_platform=args.calibration_any_platform)
        if not result.comparisons:
            raise UserError(f"{args.report}: no timed INT8 comparison"
                            + (f" of {args.precision} vs {args.baseline or 'fp32'}" if args.precision else ""))
    elif args.phase == "decode":
        from roofline.fidelity.check_decode import Engine, check_decode

        missing = [f for f, v in (("--model", args.model), ("--cpu", args.cpu), ("--precision", args.precision),
                                  ("--throughput-speedup", args.throughput_speedup)) if v is None]
        if missing:
            raise UserError(f"check --phase decode needs {', '.join(missing)}")
        if args.linear_speedup is not None:
            raise UserError("--linear-speedup: not with --phase decode (its throughput speedup is tokens/s)")
        model, platform = model_arg(args.model), platform_arg(args.cpu)[0]
        from roofline.model.estimate import default_baseline

        result = check_decode(
            platform, model, args.precision, args.baseline or default_baseline(platform, model),
            throughput_speedup=args.throughput_speedup, batch=args.batch, context=args.context,
            engine=Engine(args.engine_ops_per_cycle, args.dequant, args.widen_weights, args.engine_kv_dtype),
            calibration=calibration, calibration_name=calibration_name,
            calibration_any_platform=args.calibration_any_platform, stack=stack_arg(args.stack),
            memory_model=args.memory_model)
    else:
        missing = [f for f, v in (("--model", args.model), ("--cpu", args.cpu), ("--precision", args.precision),
                                  ("--throughput-speedup", args.throughput_speedup)) if v is None]
        if missing:
            raise UserError(f"check needs {', '.join(missing)} (or --report REPORT.json)")
        result = check_typed(
            platform_arg(args.cpu)[0], model_arg(args.model),
            args.precision, args.baseline or "fp32", throughput_speedup=args.throughput_speedup,
            linear_speedup=args.linear_speedup, batch=args.batch, seq_len=args.seq_len,
            overrides=Overrides(args.f_gemm, args.gemm_speedup, args.non_gemm_speedup), calibration=calibration,
            calibration_name=calibration_name, memory_model=args.memory_model, stack=stack_arg(args.stack),
            calibration_any_platform=args.calibration_any_platform,
        )
    return result


def check(args: argparse.Namespace) -> int:
    result = compute(args)

    def render():
        from roofline.report.check_tables import render_check

        return render_check(result, brief=args.brief)

    return emit(result, args, render)


def _loads_back(text: str, path: str) -> None:
    """What is about to be written validates as a calibration (checked before the file is touched)."""
    from roofline.files.reading import parse_toml
    from roofline.catalog.validate import validate
    from roofline.spec.calibration import Calibration

    validate(Calibration, parse_toml(text.encode("utf-8"), path), path)


def calibrate(args: argparse.Namespace) -> int:
    from roofline.catalog.write import calibration_toml
    from roofline.fidelity.calibrate import fit_calibration

    if args.records is not None:
        if args.report:
            raise UserError("give either validate reports (a host calibration) or --records (a stack profile), not both")
        return _calibrate_stack(args)
    if not args.report:
        raise UserError("calibrate needs validate reports (a host calibration) or --records (a stack profile)")
    reports = [(load_report(path), path) for path in args.report]
    platform = _report_platform(reports[0][0], args, reports[0][1])
    for report, path in reports[1:]:
        if report.platform.name != platform.name or report.host.cpu_model != reports[0][0].host.cpu_model:
            raise UserError(f"{path}: measured on '{report.platform.name}' ({report.host.cpu_model}), not on the host of "
                            f"{reports[0][1]} ({reports[0][0].host.cpu_model}): calibrate one host at a time")
    c = fit_calibration([(r, _report_model(r, args, path), path) for r, path in reports], platform)
    text = calibration_toml(c, header=f"roofline calibrate {' '.join(args.report)}"
                            + (f" --cpu {args.cpu}" if args.cpu else "") + f" -o {args.output}")
    _loads_back(text, args.output)
    write_text(args.output, text, force=args.force)
    from roofline.report.check_tables import render_calibration

    print_rich(render_calibration(c))
    print(f"written: {args.output}")
    return 0


def _calibrate_stack(args: argparse.Namespace) -> int:
    from roofline.catalog.records import load_records
    from roofline.catalog.write import spec_toml
    from roofline.fidelity.accuracy import fit_profile

    command = "roofline calibrate --records" + "".join(f" {p}" for p in args.records) + \
        (f" --stack {args.stack}" if args.stack != "torch-inductor" else "") + f" -o {args.output}"
    from roofline.files.reading import parse_toml
    from roofline.catalog.validate import validate
    from roofline.spec.stack import StackProfile

    check_target(args.output, force=args.force)  # before the fit: a path that cannot be written fails first
    profile = fit_profile(load_records(args.records or None), args.stack, command)
    text = spec_toml(profile, header=command)
    validate(StackProfile, parse_toml(text.encode("utf-8"), args.output), args.output)  # it loads back
    write_text(args.output, text, force=args.force)
    a = profile.accuracy
    print(f"written: {args.output}: {len(profile.gemm_efficiency)} path classes from {len(profile.records)} records; "
          f"leave-one-platform-out |error| median {a.median_abs_error:.0%}, worst {a.worst_abs_error:.0%} "
          f"over {a.figures} figures on {a.platforms} platforms")
    return 0
