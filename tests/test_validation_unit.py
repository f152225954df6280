"""The validation harness's pure parts: host detection, kernel naming, probe -> platform, datasheet scaling."""

from __future__ import annotations

import dataclasses

import pytest
from roofline.validation.compiled import kernels_in_code
from roofline.validation.host import Cache, HostInfo, catalog_match, detect_host
from roofline.validation.probe import GemmPeak, Level, ProbeResult, probe_platform

from roofline.catalog import load_platform
from roofline.model.shape import shape_ceiling

CPUINFO_EMR = """processor\t: {i}
vendor_id\t: GenuineIntel
cpu family\t: 6
model\t\t: 207
model name\t: Intel(R) Xeon(R) Processor
cpu MHz\t\t: 2100.000
physical id\t: 0
core id\t\t: {i}
flags\t\t: fpu avx2 fma avx512f avx512bw avx512vl avx512_vnni avx512_bf16 amx_tile amx_int8 amx_bf16 hypervisor

"""


def fake_host(tmp_path, cpus=16, l3="307200K", mem_kb: int | None = 24683652):
    proc, sys_cpu, sys_node = tmp_path / "proc", tmp_path / "cpu", tmp_path / "node"
    proc.mkdir(parents=True)
    (proc / "cpuinfo").write_text("".join(CPUINFO_EMR.format(i=i) for i in range(cpus)))
    if mem_kb is not None:
        (proc / "meminfo").write_text(f"MemTotal:       {mem_kb} kB\nMemFree:         1000 kB\n")
    for idx, (level, ctype, size, shared) in enumerate(
            [(1, "Data", "48K", "0"), (2, "Unified", "2048K", "0"), (3, "Unified", l3, f"0-{cpus - 1}")]):
        d = sys_cpu / "cpu0" / "cache" / f"index{idx}"
        d.mkdir(parents=True)
        for name, value in (("level", level), ("type", ctype), ("size", size), ("shared_cpu_list", shared)):
            (d / name).write_text(f"{value}\n")
    (sys_node / "node0").mkdir(parents=True)
    return detect_host(proc, sys_cpu, sys_node)


def test_detect_host_from_proc_and_sysfs(tmp_path):
    h = fake_host(tmp_path)
    assert (h.vendor, h.family, h.model, h.microarchitecture) == ("GenuineIntel", 6, 207, "Emerald Rapids")
    assert (h.sockets, h.cores, h.threads, h.numa_nodes) == (1, 16, 16, 1)
    assert h.flags["amx_int8"] and h.flags["avx512_vnni"] and not h.flags["avx_vnni"]
    assert h.llc == Cache(3, "Unified", 300 * 2**20, 16)
    assert h.mhz == 2100.0 and h.hypervisor and h.memory_kib == 24683652
    assert catalog_match(h) == "emr-16vcpu"
    assert catalog_match(fake_host(tmp_path / "b", cpus=4)) == "emr"


def test_detect_this_host():
    h = detect_host()
    assert h.threads >= 1 and h.cores >= 1 and h.cpu_model
    assert "avx2" in h.flags


QLINEAR_CODE = """
buf0 = empty_strided_cpu((128, 768), (768, 1), torch.uint8)
cpp_fused_quantize_0(arg0_1, buf0)
buf1 = torch.ops.onednn.qlinear_pointwise.tensor(buf0, buf2, buf3, _frozen_param0, _frozen_param1, None, 1.0, 0, torch.float32, 'none', [None], '')
assert_size_stride(buf1, (128, 768), (768, 1))
# torch.ops.mkl._mkl_linear.default(x) in a comment does not count
buf4 = buf0; del buf0  # reuse
buf5 = torch.ops.onednn.qlinear_pointwise.binary_tensor(buf4, buf2, buf3, _frozen_param2, _frozen_param3, arg1_1, None, 1.0, 0, torch.float32, 1.0, 0, 'sum', 1.0, 'none', [], '')
"""
FLOAT_CODE = """
buf0 = torch.ops.mkl._mkl_linear.default(arg0_1, _frozen_param0, _frozen_param1, None, 128)
buf1 = extern_kernels.addmm(arg1_1, buf0, reinterpret_tensor(arg2_1, (768, 768), (1, 768), 0), alpha=1, beta=1, out=buf2)
"""
TEMPLATE_CODE = """
cpp_fused_qlinear_0 = async_compile.cpp_pybinding(['const uint8_t*', 'const int8_t*'], '''
template <bool accum> inline void cpp_CppMicroGemmAVX512VNNI_kernel_micro_gemm(const uint8_t* A, const int8_t* B) {}
''')
def call(args):
    cpp_fused_qlinear_0(buf0, buf1)
    cpp_fused_qlinear_0(buf2, buf3)
"""


def test_kernel_naming_from_generated_code():
    q = kernels_in_code([QLINEAR_CODE])
    assert q.calls == {"onednn.qlinear_pointwise": 2}
    assert q.activation_dtype == "uint8" and q.primary == "onednn.qlinear_pointwise"
    f = kernels_in_code([FLOAT_CODE])
    assert f.calls == {"mkl._mkl_linear": 1, "aten.addmm": 1}
    t = kernels_in_code([TEMPLATE_CODE])
    assert t.calls == {"cpp GEMM template (int8)": 2} and t.template_kernels == ["cpp_fused_qlinear_0"]
    assert kernels_in_code(["x = y + 1"]).describe() == "none"


def synthetic_probe(host: HostInfo, threads: int = 16, llc_bw: float = 175e9, clock: float = 2.1e9) -> ProbeResult:
    g = {d: GemmPeak(d, k, (2048, 2048, 2048), v, 1e-7) for d, k, v in
         (("fp32", "aten.mm (fp32)", 1.43e12), ("bf16", "aten.mm (bf16)", 3.33e12),
          ("int8", "onednn.qlinear_pointwise (u8 x s8)", 5.45e12))}
    return ProbeResult(host=host, threads=threads, date="2026-11-30", clock_hz=clock, clock_source="add chain",
                       dram=Level(2**31, threads, 85.7e9, 68.8e9, 70e9), llc=Level(150 * 2**20, threads, llc_bw, 0.6 * llc_bw),
                       l2=Level(16 * 2**20, threads, 900e9, 800e9, 850e9),
                       dram_one_core=Level(2**31, 1, 12e9, 10e9, 11e9), llc_one_core=Level(150 * 2**20, 1, 40e9, 30e9),
                       gemm=g, versions={"torch": "2.11", "torchao": "0.18"})


def test_probe_platform_reproduces_measured_peaks(tmp_path):
    from roofline.catalog.write import platform_toml
    from roofline.model.paths import path_peak

    p = probe_platform(synthetic_probe(fake_host(tmp_path)))
    # each level's bandwidth: the fastest of its kernels; per core: one thread alone
    assert p.dram.measured_gb_per_s.value == pytest.approx(85.7) and not p.dram.theoretical_gb_per_s.known
    assert p.dram.read_gb_per_s_per_core.value == pytest.approx(12.0)
    assert p.llc.read_gb_per_s.value == pytest.approx(175.0) and p.llc.size_mib.value == 300
    assert p.llc.read_gb_per_s_per_core.value == pytest.approx(40.0)
    assert p.l2.read_gb_per_s.value == pytest.approx(900.0) and p.l2.size_kib.value == 2048
    assert p.frequency_ghz["measured"].value == pytest.approx(2.1) and "add chain" in p.frequency_ghz["measured"].source
    assert "hypervisor" in p.shared_host  # the fake host is a guest (its cpuinfo flags): no boost is promised
    # DRAM capacity per socket, GB: MemTotal's KiB x 1024 / 1e9 (what the OS can hand out)
    assert p.dram.capacity_gb.value == pytest.approx(25.28) and "MemTotal 24,683,652 kB" in p.dram.capacity_gb.source
    assert path_peak(p, "int8-measured", 1) == pytest.approx(5.45e12, rel=1e-3)  # cores x clock x ops/cycle
    for s in (p.sockets, p.cores_per_socket, p.compute["fp32-measured"].ops_per_cycle):
        assert s.kind == "measured" and s.date == "2026-11-30" and s.threads == 16 and s.tool == "roofline probe"
    path = tmp_path / "host.toml"
    path.write_text(platform_toml(p))
    assert load_platform(str(path)) == p


def test_probe_without_meminfo_leaves_the_capacity_unknown(tmp_path):
    p = probe_platform(synthetic_probe(fake_host(tmp_path, mem_kb=None)))
    assert not p.dram.capacity_gb.known and "meminfo" in p.dram.capacity_gb.unknown


def test_probe_with_a_slow_llc_reading_leaves_it_unknown(tmp_path):
    p = probe_platform(synthetic_probe(fake_host(tmp_path), llc_bw=50e9))
    assert not p.llc.read_gb_per_s.known and "below DRAM" in p.llc.read_gb_per_s.unknown


def test_probe_names_ops_per_cycle_above_the_datasheet(tmp_path):
    """A clock reading too low makes the derived ops/cycle exceed the ISA's rate: the notes say so. The
    Emerald Rapids guest's datasheet INT8 rate is 2048 (AMX); at 0.1 GHz the measured 5.45 Tops/s over 16
    cores would be 3406 ops/cycle."""
    slow = probe_platform(synthetic_probe(fake_host(tmp_path), clock=0.1e9))
    assert any(n.startswith("INT8:") and "above the 2048" in n for n in slow.notes)
    fine = probe_platform(synthetic_probe(fake_host(tmp_path / "b")))
    assert not any("above the" in n for n in fine.notes)


def test_datasheet_scaled_to_the_threads_used(tmp_path):
    from roofline.validation.platforms import datasheet_for

    host = fake_host(tmp_path)
    measured = probe_platform(synthetic_probe(host, threads=4))
    sheet, file = datasheet_for(host, 4, measured)
    assert sheet.name == "emr-16vcpu@4t" and file.endswith("emr-16vcpu.toml")
    assert sheet.cores_per_socket.value == 4 and sheet.dram == measured.dram
    # datasheet AMX INT8: 4 cores x 2048 ops/cycle at the highest clock 4 of the guest's 16 cores may run:
    # the 3.9 GHz boost (the paper model's nominal clock is the 2.1 GHz TSC)
    c = shape_ceiling(sheet, "int8-static", 4096, 4096, 4096, ceiling="bound")
    assert c.peak_ops_per_s == pytest.approx(4 * 3.9e9 * 2048) and c.bound == "compute"
    # the attainable ceiling of its 4 busy cores: the nominal 2.1 GHz
    assert shape_ceiling(sheet, "int8-static", 4096, 4096, 4096).peak_ops_per_s == pytest.approx(4 * 2.1e9 * 2048)
    paper = shape_ceiling(sheet, "int8-static", 4096, 4096, 4096, memory_model="paper")
    assert paper.peak_ops_per_s == pytest.approx(4 * 2.1e9 * 2048)


def test_shape_ceiling_counts_a_reused_weight_as_cache_resident():
    gnr = load_platform("gnr")
    small = shape_ceiling(gnr, "int8-static", 256, 1024, 1024, memory_model="paper")
    assert small.llc_resident and small.bandwidth_bytes_per_s > gnr.dram_bytes_per_s(2)
    one = dataclasses.replace(gnr, llc=dataclasses.replace(gnr.llc, size_mib=dataclasses.replace(gnr.llc.size_mib, value=0.5)))
    big = shape_ceiling(one, "int8-static", 256, 1024, 1024, memory_model="paper")
    assert not big.llc_resident and big.bandwidth_bytes_per_s == pytest.approx(gnr.dram_bytes_per_s(2))
    # the memory-level model: the 1 MiB weight and X, Y fit the L2 of the 128 cores running the kernel
    levels = shape_ceiling(one, "int8-static", 256, 1024, 1024)
    assert levels.bandwidth_bytes_per_s > one.llc_bytes_per_s(2) and levels.attainable_ops_per_s > big.attainable_ops_per_s


def test_the_encoder_ceiling_validate_reports_is_the_one_check_compares_with():
    from roofline.catalog import load_model
    from roofline.model.harness import encoder_run, realistic_encoder

    p, spec = load_platform("genoa"), load_model("bert-base")
    for precision, mode in (("fp32", "fp32"), ("bf16", "amp-bf16"), ("int8-static", "fp32")):
        h = encoder_run(p, spec, precision, 2, 1, 128, mode)
        assert float(h.step.step_time) == pytest.approx(realistic_encoder(p, spec, precision, 2, 1, 128, mode).ceiling_s)


def test_a_report_with_rows_above_their_ceilings_says_so():
    """The printed report marks each violating row (!), and one warning names the suspect inputs."""
    import json

    from clitools import REPO
    from rich.console import Console
    from roofline.validation.report import render_validate, violation_line

    from roofline.catalog.validate import validate
    from roofline.results.validate import ValidateResult

    data = json.loads((REPO / "validation" / "results" / "zen4-2vcpu-bert-base.json").read_text())
    assert violation_line(validate(ValidateResult, data, "r.json")) is None
    shape = next(s for s in data["shapes"] if s["precision"] == "int8-static")
    shape.update(ceiling_violation=True, suspect="peak", flags=["ceiling violation: measured 25 Gops/s ..."])
    row = next(e for e in data["end_to_end"] if e["precision"] == "int8-static" and e["baseline"] == "fp32")
    row.update(ceiling_violation=True, suspect="peak")
    r = validate(ValidateResult, data, "r.json")
    line = violation_line(r)
    assert line.startswith(f"warning: 2 row(s) ran faster than their ceiling ({shape['name']} int8-static, "
                           "int8-static vs fp32)") and "suspect the peak (2 rows)" in line
    console = Console(width=200, record=True)
    console.print(render_validate(r))
    text = console.export_text()
    assert "warning: 2 row(s) ran faster than their ceiling" in text
    assert text.count("% !") >= 2
