"""``roofline probe``: measure this host and write a platform spec (needs the validate extra)."""

from __future__ import annotations

import argparse
from pathlib import Path

from roofline.cli.emit import print_rich, write_json
from roofline.files.writing import write_text
from roofline.cli.progress import progress_reporter


def run(args: argparse.Namespace) -> int:
    from roofline.validation.torch_env import require_torch

    require_torch()
    from roofline.catalog import load_platform_file
    from roofline.catalog.write import platform_toml
    from roofline.report.catalog_tables import render_platform
    from roofline.validation.platforms import save_probe
    from roofline.validation.probe import probe_platform, run_probe

    with progress_reporter("probe") as progress:
        result = run_probe(args.threads, quick=args.quick, progress=progress)
    platform = probe_platform(result, name=args.name)
    header = f"roofline probe of this host, {result.date}, {result.threads} threads (roofline probe --threads {result.threads})"
    text = platform_toml(platform, header=header)
    targets = []
    if args.output:
        targets.append(Path(args.output))
        write_text(args.output, text, force=args.force)
    targets += save_probe(text, result.threads, all_cores=result.threads == result.host.cores)
    # what was written validates and loads back (from the cache copy when -o is a FIFO or a device)
    platform = load_platform_file(next(t.resolve() for t in targets if t.resolve().is_file()))
    if args.json:
        write_json(platform, args.json, force=args.force)
        if args.json == "-":
            return 0
    print_rich(render_platform(platform))
    print(f"written: {', '.join(str(t) for t in targets)}")
    return 0
