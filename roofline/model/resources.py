"""What a step can use on a platform under an instance layout: the clock, the compute peaks, the
bandwidth of each memory level and what each level holds for one instance.

The layout is the paper's deployment: on each socket, ``instances`` instances of ``instance_cores``
cores, pinned to disjoint cores, sharing one copy of the weights per LLC domain. Figures are for
the whole platform (all instances together); a step's time at these resources is the time per
step amortised over the instances, and one instance's latency is that times the instances.
Every array broadcasts over a leading layout axis (``plan`` evaluates all layouts in one call).

Two memory models:

- ``levels`` (default): each tensor is priced at the level that holds it: L2 (private,
  ``instance_cores x`` its size), the LLC (one instance's share of its domain), else DRAM;
  bandwidths are capped by what the busy cores can pull (``cores x`` the per-core figure). It has
  two ceilings (:class:`~roofline.spec.vocab.Ceiling`):

  - the **bound**: nothing real may beat it. The highest clock the datasheet allows for the busy
    cores (the all-core turbo on a busy socket, the single-core boost when fewer cores are busy)
    and the theoretical DRAM bandwidth (the measured one where no theoretical figure is given);
  - the **attainable** ceiling: what the busy cores are stated to sustain, with no fitted
    efficiency in it. The nominal all-core clock of the ISA class (``frequency_ghz``: the base
    frequency Intel guarantees under every licence, AMD's all-core boost) on a busy socket; with fewer
    cores busy a clock that slides from the single-core boost at one core to that all-core clock
    (:data:`~roofline.spec.ceiling_inputs.TURBO_SLIDE`: no per-active-core licence table is published in
    the platform files; on a shared host, a guest, the all-core clock still: ``Platform.shared_host``),
    and STREAM-class DRAM bandwidth: the measured figure, else the theoretical one times
    :data:`~roofline.spec.ceiling_inputs.STREAM_FRACTION`.
- ``paper``: the reference paper's pricing, kept exactly: the nominal clock (``frequency_ghz``),
  X, Y and every non-GEMM tensor from DRAM, the weights from the LLC when the whole set fits one
  LLC domain (``B_eff``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from roofline.errors import UserError
from roofline.model.layout import Layout
from roofline.model.paths import PathChoice, choose_path
from roofline.spec.ceiling_inputs import STREAM_FRACTION, TURBO_SLIDE
from roofline.spec.platform import Platform
from roofline.spec.sourced import Sourced
from roofline.spec.vocab import Bandwidth, Ceiling, MemoryModel, NonGemmMode
from roofline.units import GIGA


@dataclass(frozen=True)
class Used:
    """One platform number as the step used it: the value (after layout caps) and where it came from."""

    what: str
    value: float | np.ndarray
    source: Sourced


class Resources:
    """The platform under a layout and a memory model (whole platform, all instances together)."""

    def __init__(self, platform: Platform, layout: Layout, memory_model: MemoryModel = MemoryModel.LEVELS,
                 bandwidth: Bandwidth | None = None, ceiling: Ceiling = Ceiling.ATTAINABLE) -> None:
        memory_model, ceiling = MemoryModel(memory_model), Ceiling(ceiling)
        self.platform, self.layout, self.memory_model, self.ceiling = platform, layout, memory_model, ceiling
        self.levels = memory_model is MemoryModel.LEVELS
        self.attainable = self.levels and ceiling is Ceiling.ATTAINABLE
        if bandwidth is None:  # by the ceiling: the paper's own figures are the measured ones
            bandwidth = Bandwidth.THEORETICAL if self.levels and ceiling is Ceiling.BOUND else Bandwidth.MEASURED
        self.bandwidth_kind = bandwidth = Bandwidth(bandwidth)
        self.used: dict[str, Used] = {}
        self.tier_share: np.ndarray | None = None
        """the share of a step's resident bytes read from the second memory tier (:meth:`tiered`); None: no tier"""
        self._paths: dict[str, PathChoice] = {}
        p, lay = platform, layout
        s = lay.sockets
        kind = p.dram_kind(bandwidth)
        dram = getattr(p.dram, f"{kind}_gb_per_s")
        self.used["dram"] = Used(f"dram.{kind}_gb_per_s", dram.value, dram)
        socket_dram = dram.value * GIGA
        if self.attainable and kind == "theoretical" and bandwidth is Bandwidth.MEASURED:
            # no measured figure: STREAM-class from the theoretical one
            self.used["stream_fraction"] = Used("ceiling_inputs.stream_fraction", STREAM_FRACTION.known_value,
                                                STREAM_FRACTION)
            socket_dram *= STREAM_FRACTION.value
        self.dram_kind: Literal["measured", "theoretical", "stream-class"] = (
            "stream-class" if "stream_fraction" in self.used else kind)
        self.b_dram = s * self._capped("dram", socket_dram, p.dram.read_gb_per_s_per_core)
        if lay.spans_sockets and lay.tensor_parallel == 1:  # a split's ranks read their own domain's weights
            self.b_dram = np.minimum(self.b_dram, self._spanning_cap())
        llc = p.llc.read_gb_per_s
        self.b_llc = (s * self._capped("llc", llc.known_value * GIGA, p.llc.read_gb_per_s_per_core) if llc.known
                      else None)
        if llc.known:
            self.used["llc"] = Used("llc.read_gb_per_s", llc.known_value, llc)
        self.b_l2 = self._l2_bandwidth() if self.levels else None
        self.llc_domain = p.llc_domain_bytes
        self.used["llc_size"] = Used("llc.size_mib", p.llc.size_mib.known_value, p.llc.size_mib)
        self.l2_capacity = (lay.instance_cores * p.l2.size_kib.value * 1024.0
                            if self.levels and p.l2 is not None and self.b_l2 is not None else 0.0 * lay.instance_cores)
        domains = p.llc.domains_per_socket
        per_socket = p.cores_per_socket.value
        spans = np.maximum(1.0, lay.instance_cores * domains / per_socket)
        sharing = np.maximum(1.0, lay.instances / domains)
        self._llc_share = spans / sharing  # an instance's share of LLC domains (times the domain's free bytes)

    # ----------------------------------------------------------------- clock and compute

    def clock(self, isa_class: str) -> float | np.ndarray:
        """Hz. Paper: the nominal clock. Levels: when all the socket's cores are busy, the bound takes the
        all-core turbo (the boost where the all-core figure is not published) and the attainable ceiling the
        nominal all-core clock; when fewer are, the bound the single-core boost, the attainable ceiling a clock
        sliding from that boost at one busy core to the nominal all-core clock at all of them
        (:data:`~roofline.spec.ceiling_inputs.TURBO_SLIDE`; on a shared host, a guest, the all-core clock: its
        other cores are other guests'); never below nominal."""
        p = self.platform
        nominal = p.frequency_ghz[isa_class]
        if not self.levels:
            self.used[f"f.{isa_class}"] = Used(f"frequency_ghz.{isa_class}", nominal.known_value, nominal)
            return nominal.known_value * GIGA
        boost_table = "max_turbo_ghz" if isa_class in p.max_turbo_ghz else "frequency_ghz"
        boost = p.max_turbo_ghz.get(isa_class, nominal)
        if self.attainable:
            all_table, all_core = "frequency_ghz", nominal
        else:
            all_table = "all_core_turbo_ghz" if isa_class in p.all_core_turbo_ghz else boost_table
            all_core = p.all_core_turbo_ghz.get(isa_class, boost)
        few = self.layout.busy_cores < p.cores_per_socket.value
        if self.attainable and p.shared_host:  # the host's other cores are other guests': no boost is promised
            few = np.zeros(np.shape(few), dtype=bool)
        few_ghz = boost.known_value
        if self.attainable and np.any(few):  # one core at the boost, all of them at the all-core clock
            n = float(p.cores_per_socket.known_value)
            busy = np.minimum(np.asarray(self.layout.busy_cores, dtype=float), n)
            drop = ((busy - 1.0) / max(n - 1.0, 1.0)) ** TURBO_SLIDE.value
            few_ghz = boost.known_value - (boost.known_value - all_core.known_value) * drop
            self.used["turbo_slide"] = Used("ceiling_inputs.turbo_slide", TURBO_SLIDE.known_value, TURBO_SLIDE)
        ghz = np.maximum(np.where(few, few_ghz, all_core.known_value), nominal.known_value)
        if np.any(few):
            self.used[f"f.{isa_class}.few"] = Used(f"{boost_table}.{isa_class}", boost.known_value, boost)
        if not np.all(few):
            self.used[f"f.{isa_class}.all"] = Used(f"{all_table}.{isa_class}", all_core.known_value, all_core)
        return float(ghz) * GIGA if np.ndim(ghz) == 0 else ghz * GIGA

    def path(self, dtype: str) -> PathChoice:
        """The fastest path for ``dtype`` on the active cores at this clock (chosen once per dtype)."""
        if dtype in self._paths:
            return self._paths[dtype]
        choice = self._paths[dtype] = choose_path(self.platform, dtype, self.layout.sockets, self.layout.active_cores, self.clock)
        ops = self.platform.compute[choice.name].ops_per_cycle
        self.used[f"ops.{choice.name}"] = Used(f"compute.{choice.name}.ops_per_cycle", ops.known_value, ops)
        return choice

    @property
    def vector_peak(self) -> float | np.ndarray:
        """The FP32 vector path: element-wise work, dequantization, quantization passes."""
        return self.path("fp32").peak

    @property
    def int_alu_peak(self) -> float | np.ndarray:
        """The vector integer ALU in the FP32 path's unit (a 256-bit instruction over 32 weights is 16 ops): the FP32
        vector peak times the core's integer ops per cycle over its FP32 ones (:mod:`roofline.spec.cores`); a core the
        table does not know, the FP32 vector peak (its FMA rate: slower than any core's integer issue)."""
        from roofline.spec.cores import int_alu_ops_per_cycle

        found = int_alu_ops_per_cycle(self.platform.core)
        if found is None:
            return self.vector_peak
        ops, source = found
        fp32 = self.platform.compute[self.path("fp32").name].ops_per_cycle.known_value
        self.used["int_alu"] = Used(f"cores.int_alu_bits.{self.platform.core}", source.known_value, source)
        return self.vector_peak * max(ops / fp32, 1.0)

    @property
    def line_transfer_s(self) -> float:
        """One cache line's transfer between two cores, seconds: the platform's ``core_to_core_ns``, else its core's
        (:mod:`roofline.spec.core_latency`); a process over both sockets takes its core's two-socket figure (half
        its pairs cross the sockets; a tensor-parallel rank's threads are on one socket)."""
        return self._line_s(self.layout.spans_sockets and self.layout.tensor_parallel == 1, "core_to_core")

    @property
    def rank_line_s(self) -> float:
        """One cache line's transfer between two tensor-parallel ranks' cores, seconds: as :attr:`line_transfer_s`,
        across the sockets when the ranks are on two (half their pairs cross them)."""
        return self._line_s(self.layout.sockets > 1, "rank_to_rank")

    def _line_s(self, spanning: bool, used: str) -> float:
        from roofline.spec.core_latency import line_transfer_ns

        given = self.platform.core_to_core_ns
        ns, key = ((given, "core_to_core_ns") if given.known and not spanning
                   else line_transfer_ns(self.platform.core, spanning))
        self.used[used] = Used(key, ns.known_value, ns)
        return float(ns.known_value) * 1e-9

    def non_gemm_peaks(self, mode: NonGemmMode) -> tuple[str, float | np.ndarray, float | np.ndarray]:
        """``(activation dtype, matmul peak, vector peak)`` of the non-GEMM work in a mode: ``fp32`` runs
        everything on the FP32 paths; ``amp-bf16`` keeps BF16 activations and runs attention on the BF16
        path where native; ``int8`` (fully INT8 pipelines) keeps INT8 activations and runs attention on
        the INT8 path. Vector math is FP32 in all of them."""
        act = NonGemmMode(mode).activation_dtype
        return act, self.path(act).peak, self.vector_peak

    # ----------------------------------------------------------------- memory levels

    def _spanning_cap(self) -> float:
        """``4 L``: one process over two sockets, its pages spread over both sockets' memory, reads half its bytes
        ``W`` on each socket, half of that from the other's: ``W / 4`` crosses the link each way (``L`` bytes/s,
        the platform's ``socket_link_gb_per_s``) while each socket's memory serves ``W / 2``, so a step's stream
        takes ``max(W / (2 B_socket), W / (4 L))``."""
        p, lay = self.platform, self.layout
        if lay.sockets != 2:
            raise UserError(f"--instance-cores: one process over {lay.sockets} sockets is not priced (two sockets are)")
        link = p.socket_link_gb_per_s
        if not link.known:
            cores = int(lay.active_cores.max())
            raise UserError(f"{p.name}: socket_link_gb_per_s is not given, and one process over both sockets reads half "
                            "its pages across the link between them; give the links' bandwidth each way in the platform "
                            f"file (UPI: links x GT/s x 2 bytes), or run an instance per socket (--instance-cores {cores})")
        self.used["socket_link"] = Used("socket_link_gb_per_s", link.known_value, link)
        return 4.0 * link.known_value * GIGA

    def _capped(self, what: str, socket_bps: float, per_core: Sourced) -> float | np.ndarray:
        """A socket's bandwidth, capped by what the busy cores can pull (in the paper model only when fewer
        cores than the socket's are used: the paper's own setups use every core)."""
        all_cores = bool(np.all(self.layout.active_cores >= self.platform.cores_per_socket.value))
        if not per_core.known or (not self.levels and all_cores):
            return socket_bps
        self.used[f"{what}_per_core"] = Used(f"{what}.read_gb_per_s_per_core", per_core.known_value, per_core)
        return np.minimum(socket_bps, self.layout.active_cores * per_core.value * GIGA)

    def _l2_bandwidth(self) -> float | np.ndarray | None:
        """All instances' L2 together: the datasheet read width x the core clock x the active cores (what
        the hardware allows: a measurement below it says more about the measuring kernel), or the measured
        per-socket figure scaled to the active cores where the width is not given."""
        p, lay = self.platform, self.layout
        l2 = p.l2
        if l2 is None:
            return None
        measured, width = l2.read_gb_per_s, l2.read_bytes_per_cycle
        if width.known:
            self.used["l2"] = Used("l2.read_bytes_per_cycle", width.known_value, width)
            hz = np.max([np.max(self.clock(c)) for c in p.frequency_ghz])
            return lay.sockets * lay.active_cores * width.known_value * hz
        if measured.known:
            self.used["l2"] = Used("l2.read_gb_per_s", measured.known_value, measured)
            return lay.sockets * measured.known_value * GIGA * lay.active_cores / p.cores_per_socket.known_value
        return None

    def llc_capacity(self, resident_weight_bytes: float | np.ndarray = 0.0) -> np.ndarray:
        """What one instance's activations can keep in the LLC: its share of its LLC domain(s) (levels
        model; 0 in the paper model, where activations always come from DRAM). Weights and activations
        are each checked against the LLC on their own, although they compete for it in a real run: the
        ceiling stays an upper bound, and monotone in the LLC's size."""
        if not self.levels or self.b_llc is None:
            return 0.0 * self.layout.instance_cores
        return self.llc_domain * self._llc_share + 0.0 * np.asarray(resident_weight_bytes)

    def tiered(self, resident_per_socket: ArrayLike) -> Resources:
        """These resources with DRAM's bandwidth blended with the platform's second memory tier for a step whose
        resident bytes per socket are ``resident_per_socket`` (:mod:`roofline.calc.tiers`: the share it reads from
        the tier, at the tier's bandwidth, the rest at DRAM's); themselves without a tier."""
        import copy

        from roofline.calc.tiers import blended_bandwidth, tier_share
        from roofline.spec.vocab import TierUse

        if not self.platform.memory_tiers:
            return self
        t, p, lay = self.platform.memory_tiers[0], self.platform, self.layout
        # the figure DRAM is priced at: theoretical for the bound, else measured, else STREAM-class from theoretical
        measured = self.bandwidth_kind is Bandwidth.MEASURED and t.measured_gb_per_s.known
        fig = t.measured_gb_per_s if measured else t.theoretical_gb_per_s
        kind = "measured" if measured else "theoretical"
        socket_bps = fig.known_value * GIGA
        if self.attainable and self.bandwidth_kind is Bandwidth.MEASURED and not measured:
            socket_bps *= STREAM_FRACTION.known_value
            self.used["stream_fraction"] = Used("ceiling_inputs.stream_fraction", STREAM_FRACTION.known_value,
                                                STREAM_FRACTION)
        dram_bytes = 0.0
        if t.use is TierUse.AFTER_DRAM:
            if not p.dram.capacity_gb.known:
                raise UserError(f"{p.name}: memory_tiers[0] ({t.name}) holds what DRAM cannot; give dram.capacity_gb "
                                "in the platform file")
            dram_bytes = p.dram.capacity_gb.known_value * GIGA
            self.used["dram_capacity"] = Used("dram.capacity_gb", p.dram.capacity_gb.known_value, p.dram.capacity_gb)
        share = tier_share(t.use, resident_per_socket, t.capacity_gb.known_value * GIGA, dram_bytes,
                           t.interleave_share)
        tier_bps = lay.sockets * self._capped("dram", socket_bps, p.dram.read_gb_per_s_per_core)
        out = copy.copy(self)
        out.used = self.used  # one record of the inputs used, whichever copy priced them
        out.b_dram = blended_bandwidth(share, tier_bps, self.b_dram, at_once=t.use is TierUse.INTERLEAVE)
        self.used["tier"] = Used(f"memory_tiers[0].{kind}_gb_per_s ({t.name}, {t.use})", fig.known_value, fig)
        self.used["tier_capacity"] = Used(f"memory_tiers[0].capacity_gb ({t.name})", t.capacity_gb.known_value,
                                          t.capacity_gb)
        out.tier_share = share
        return out

    def bandwidths(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(B_L2, B_LLC, B_DRAM)``. A level that is not modelled gets the next level's; and a level is never
        slower than one below it (data a fast level holds is held by the slower ones too)."""
        dram = np.asarray(self.b_dram, dtype=float)
        llc = dram if self.b_llc is None else np.maximum(np.asarray(self.b_llc, dtype=float), dram)
        l2 = llc if self.b_l2 is None else np.maximum(np.asarray(self.b_l2, dtype=float), llc)
        return l2, llc, dram

    def core_stream_bandwidths(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(B_L2, B_LLC,c, B_DRAM,c)``: what the active cores pull from each level on their own, one core's read
        bandwidth (the platform's ``read_gb_per_s_per_core``) times the cores busy, over all sockets, not capped by
        the socket's: the per-core side of a kernel that streams its weights between its own arithmetic
        (:func:`~roofline.calc.core_stream.serial_kernel_seconds`). L2's is its own (already per core); NaN where the
        platform gives no per-core figure for the level (that side is then not priced)."""
        p, lay = self.platform, self.layout
        cores = lay.sockets * np.asarray(lay.active_cores, dtype=float)
        def level(per_core: Sourced, what: str) -> np.ndarray:
            if not per_core.known:
                return np.full(np.shape(cores), np.nan)
            self.used[f"{what}_per_core"] = Used(f"{what}.read_gb_per_s_per_core", per_core.known_value, per_core)
            return cores * per_core.value * GIGA
        l2 = self.bandwidths()[0]
        return np.asarray(l2, dtype=float), level(p.llc.read_gb_per_s_per_core, "llc"), level(
            p.dram.read_gb_per_s_per_core, "dram")

    def provenance(self) -> list[Used]:
        return list(self.used.values())
