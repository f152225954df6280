"""``roofline calibrate``: a host calibration from validate reports, or a stack profile from records."""

from __future__ import annotations

import argparse

from roofline import arguments as A
from roofline.cli import flags

DESCRIPTION = ("Fit a calibration (GEMM efficiency per precision in the model and alone, quantization and non-GEMM "
               "efficiency, dispatch costs) from one or more validate reports of one host (several pool: the geometric "
               "mean), each value with the reports it came from. Stored beside the platform files, never over their "
               "datasheet numbers. With --records: a software stack's profile fitted from measurement records.")
EXAMPLES = ["roofline calibrate report.json -o my-host.toml",
            "roofline calibrate --records -o torch-inductor.toml"]


def parser(name: str) -> argparse.ArgumentParser:
    p = flags.command_parser(name, DESCRIPTION, EXAMPLES)
    flags.add(p, A.CALIBRATE)
    p.add_argument("-o", "--output", required=True, help="calibration (or stack profile) TOML to write")
    flags.add_outputs(p, json=False, brief=False)
    return p


def run(args: argparse.Namespace) -> int:
    from roofline.api import calibrate
    from roofline.catalog.validate import validate
    from roofline.catalog.write import calibration_toml, spec_toml
    from roofline.files.reading import parse_toml
    from roofline.files.writing import write_text
    from roofline.spec.calibration import Calibration
    from roofline.spec.stack import StackProfile

    a = flags.values(A.CALIBRATE, args)
    fitted = calibrate(**a)
    if isinstance(fitted, StackProfile):
        header = fitted.accuracy.command + f" -o {args.output}"
        text = spec_toml(fitted, header=header)
    else:
        header = (f"roofline calibrate {' '.join(a.report)}" + (f" --cpu {a.cpu}" if a.cpu else "")
                  + f" -o {args.output}")
        text = calibration_toml(fitted, header=header)
    validate(type(fitted), parse_toml(text.encode("utf-8"), args.output), args.output)  # it loads back
    write_text(args.output, text, force=args.force)
    if isinstance(fitted, StackProfile):
        acc = fitted.accuracy
        from roofline.report.fmt import loo_said

        print(f"written: {args.output}: {len(fitted.gemm_efficiency)} path classes from {len(fitted.records)} records; "
              f"leave-one-platform-out |error| {loo_said(acc)}")
        return 0
    from roofline.cli.emit import print_rich
    from roofline.report.check_tables import render_calibration

    assert isinstance(fitted, Calibration)
    print_rich(render_calibration(fitted))
    print(f"written: {args.output}")
    return 0
