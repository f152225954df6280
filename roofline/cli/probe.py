"""``roofline probe``: measure this host and write a platform spec (needs the validate extra)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from roofline import arguments as A
from roofline.cli import flags

DESCRIPTION = ("Measure this host: DRAM and LLC read bandwidth, FP32/BF16/INT8 GEMM peaks on the fastest real path, "
               "and write a platform TOML in the catalog's schema (every number 'measured'). Needs the validate extra "
               "(torch).")
EXAMPLES = ["roofline probe -o host.toml"]


def parser(name: str) -> argparse.ArgumentParser:
    p = flags.command_parser(name, DESCRIPTION, EXAMPLES)
    p.add_argument("-o", "--output", metavar="FILE", help="where to write the platform TOML (it is also cached as the "
                   "host probe that `validate --cpu host` uses)")
    flags.add(p, A.PROBE)
    flags.add_outputs(p, brief=False)
    return p


def run(args: argparse.Namespace) -> int:
    from roofline.validation.torch_env import require_torch

    a = flags.values(A.PROBE, args)
    require_torch()
    from roofline.catalog import load_platform_file
    from roofline.catalog.write import platform_toml
    from roofline.cli.emit import print_rich, write_json
    from roofline.cli.progress import progress_reporter
    from roofline.files.writing import write_text
    from roofline.report.catalog_tables import render_platform
    from roofline.validation.platforms import save_probe
    from roofline.validation.probe import probe_platform, run_probe

    with progress_reporter("probe") as progress:
        result = run_probe(a.threads, quick=a.quick, progress=progress)
    platform = probe_platform(result, name=a.name)
    header = f"roofline probe of this host, {result.date}, {result.threads} threads (roofline probe --threads {result.threads})"
    text = platform_toml(platform, header=header)
    targets = []
    if args.output:
        targets.append(Path(args.output))
        write_text(args.output, text, force=args.force)
    targets += save_probe(text, result.threads, all_cores=result.threads == result.host.cores, canary=result.canary)
    # what was written validates and loads back (from the cache copy when -o is a FIFO or a device)
    platform = load_platform_file(next(t.resolve() for t in targets if t.resolve().is_file()))
    if args.json:
        write_json(platform, args.json, force=args.force)
        if args.json == "-":
            return 0
    print_rich(render_platform(platform))
    print(f"written: {', '.join(str(t) for t in targets)}")
    if result.seconds is not None:
        sys.stderr.write(f"roofline probe: {result.seconds:.0f} s on {result.host.cpu_model}\n")
    return 0
