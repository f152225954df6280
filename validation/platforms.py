"""The platforms a validation compares against: the host's own measurement, and the datasheet.

- measured: ``--cpu host`` uses this machine's probe at the thread count asked for, cached under
  the roofline cache folder with its date (a fresh probe when there is none, or with
  ``--reprobe``); ``--cpu FILE`` a saved probe; a catalog name that catalog entry.
- datasheet: the catalog entry the host is an instance of (by CPU family and model), its per-core
  compute rates and clocks applied to the threads used. A VM or a thread subset gets no
  datasheet share of a socket's bandwidth, so its bandwidths come from the measured platform.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from roofline.validation.canary import ProbeCanary
from roofline.validation.host import HostInfo, catalog_match

from roofline.catalog import find_file, host_probe_path, load_platform, load_platform_file
from roofline.catalog.cache import cache_dir
from roofline.catalog.write import platform_toml
from roofline.errors import UserError
from roofline.files.writing import write_text
from roofline.spec.platform import Platform
from roofline.spec.sourced import Sourced


def probe_path(threads: int) -> Path:
    return cache_dir() / "probes" / f"host-{threads}t.toml"


def save_probe(text: str, threads: int, all_cores: bool, canary: ProbeCanary | None = None) -> list[Path]:
    """Cache a probe's TOML as this host's probe at ``threads`` (and as `host` when it used all cores), with
    its contention canary beside it (what ``validate`` checks its own canary against)."""
    from roofline.validation.canary import save_probe_canary

    paths = [probe_path(threads)] + ([host_probe_path()] if all_cores else [])
    for path in paths:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UserError(f"cannot create the probe cache {path.parent} ({e.strerror or e}); "
                            "set ROOFLINE_CACHE_DIR to a writable folder") from None
        write_text(path, text)
        if canary is not None:
            save_probe_canary(path, canary)
    return paths


def host_platform(threads: int, reprobe: bool, quick: bool, progress) -> tuple[Platform, Path, bool]:
    """(platform, file, fresh): the cached probe for ``threads`` threads, or a new one (``quick``: the quick
    probe's budget)."""
    from roofline.validation.host import detect_host
    from roofline.validation.probe import probe_platform, run_probe

    path = probe_path(threads)
    if path.is_file() and not reprobe:
        return load_platform_file(path.resolve()), path, False
    result = run_probe(threads, quick=quick, progress=progress)
    text = platform_toml(probe_platform(result, name="host"),
                         header=f"roofline probe of this host, {result.date}, {threads} threads")
    save_probe(text, threads, all_cores=threads == detect_host().cores, canary=result.canary)
    return load_platform_file(path.resolve()), path, True


def resolve_measured(cpu: str, threads: int, reprobe: bool, quick: bool, progress) -> tuple[Platform, Path, bool]:
    if cpu == "host":
        return host_platform(threads, reprobe, quick, progress)
    path = find_file("platforms", cpu)
    return load_platform_file(path), path, False


def datasheet_for(host: HostInfo, threads: int, measured: Platform) -> tuple[Platform, str] | None:
    name = catalog_match(host)
    if name is None:
        return None
    sheet = load_platform(name)
    derived = Sourced(value=threads, kind="derived", source=f"threads used by the validation (host has {host.cores} cores)")
    turbo = sheet.all_core_turbo_ghz
    if threads < sheet.cores_per_socket.value:  # a VM or a thread subset: few of the socket's cores are busy
        turbo = {c: Sourced(value=f.value, kind="derived", source=f"max turbo ({threads} of the socket's "
                            f"{sheet.cores_per_socket.value:g} cores busy): {f.source}")
                 for c, f in sheet.max_turbo_ghz.items()}
    scaled = dataclasses.replace(
        sheet, name=f"{sheet.name}@{threads}t", sockets=Sourced(value=1, kind="derived", source="one socket's share"),
        cores_per_socket=derived, dram=measured.dram, llc=measured.llc, all_core_turbo_ghz=turbo,
        description=f"{sheet.description}: datasheet per-core rates x {threads} cores; bandwidths as measured",
    )
    return scaled, str(find_file("platforms", name))
