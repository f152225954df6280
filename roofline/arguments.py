"""Every argument of every command, defined once: its name, its type and range, its default and its
help. The Python API (:mod:`roofline.api`) checks keyword arguments with these definitions; the
command line (:mod:`roofline.cli`) builds its flags from them. So ``roofline estimate --batch 0`` and
``roofline.estimate(batch=0)`` are refused by the same check, with the same words.

A value reads text (a flag's) or a Python value (the API's), checks its type and range, and returns
the typed value, or raises ``ValueError`` with what is wrong (``"0 is out of range: 1 to 1,000,000"``).
"""

from __future__ import annotations

import math
from enum import Enum
from typing import Any, Callable

from roofline.report.listing import WORST_LISTED
from roofline.spec.vocab import Bandwidth, Ceiling, MemoryModel, Phase, Scenario

#: the largest grid `roofline sweep` evaluates: more points is a typo, not a study
MAX_SWEEP_POINTS = 100_000_000
MAX_BATCH = 1_000_000
MAX_TOKENS = 1 << 27
"""sequence lengths and contexts: the largest max_position_embeddings a model file may give"""
SPEEDUP = (1e-3, 1e4)
KV_DTYPES = ("fp32", "bf16", "fp16", "int8")


def _fmt(v: float) -> str:
    return f"{int(v):,}" if float(v).is_integer() and abs(v) < 1e15 else f"{v:g}"


def _shown(v: Any) -> str:
    """A value as an error message shows it: short, and an object by its type."""
    if isinstance(v, (str, bytes, int, float, bool, list, tuple, dict, set)) or v is None:
        text = repr(v)
        return text if len(text) <= 40 else text[:37] + "..."
    return f"a {type(v).__name__}"


def _whole(v: Any) -> int | None:
    """``v`` as an int when it is a whole number of any integer type (numpy's too), never a bool."""
    import numbers

    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        return None
    return int(v)


def _is_real(v: Any) -> bool:
    """A real number of any type (numpy's, a Fraction, a Decimal), never a bool."""
    import numbers

    if isinstance(v, numbers.Real) and not isinstance(v, bool):
        return True
    return type(v).__name__ == "Decimal" and type(v).__module__ == "decimal"  # a Number, not registered as Real


def _range(text: Any, lo: float, hi: float, what: str) -> ValueError:
    return ValueError(f"{text} is out of range: {what + ', ' if what else ''}{_fmt(lo)} to {_fmt(hi)}")


# ------------------------------------------------------------------------------- values


class _Value:
    """A value's definition: its parameters, named (plain classes: a command's arguments are read at every
    start, and a dataclass costs a millisecond to define)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(repr(getattr(self, s)) for s in self.__slots__)})"


class Int(_Value):
    """A whole number in ``[lo, hi]``."""

    __slots__ = ("lo", "hi", "what")

    def __init__(self, lo: int, hi: int, what: str = "") -> None:
        self.lo, self.hi, self.what = lo, hi, what

    def __call__(self, v: Any) -> int:
        if isinstance(v, str):
            try:
                n = int(v)
            except ValueError:
                raise ValueError(f"'{v}' is not a whole number") from None
        elif _whole(v) is not None:
            n = _whole(v)
        else:
            raise ValueError(f"{_shown(v)} is not a whole number")
        if not self.lo <= n <= self.hi:
            raise _range(v, self.lo, self.hi, self.what)
        return n

    def span(self) -> str:
        return f"{_fmt(self.lo)} to {_fmt(self.hi)}"


class Float(_Value):
    """A finite number in ``[lo, hi]``."""

    __slots__ = ("lo", "hi", "what")

    def __init__(self, lo: float, hi: float, what: str = "") -> None:
        self.lo, self.hi, self.what = lo, hi, what

    def __call__(self, v: Any) -> float:
        if isinstance(v, str):
            try:
                x = float(v)
            except ValueError:
                raise ValueError(f"'{v}' is not a number") from None
        elif _is_real(v):
            try:
                x = float(v)
            except OverflowError:  # an integer past the largest float
                raise _range(_shown(v), self.lo, self.hi, self.what) from None
        else:
            raise ValueError(f"{_shown(v)} is not a number")
        if not math.isfinite(x):
            raise ValueError(f"'{v}' is not a finite number")
        if not self.lo <= x <= self.hi:
            raise _range(v, self.lo, self.hi, self.what)
        return x


class FloatList(_Value):
    """Comma-separated finite numbers (or a list of numbers), each in ``[lo, hi]``."""

    __slots__ = ("lo", "hi")

    def __init__(self, lo: float, hi: float) -> None:
        self.lo, self.hi = lo, hi

    def __call__(self, v: Any) -> list[float]:
        one = Float(self.lo, self.hi)
        if isinstance(v, str):
            items = [t.strip() for t in v.split(",") if t.strip()]
            if not items:
                raise ValueError(f"'{v}' holds no number")
            return [one(t) for t in items]
        if isinstance(v, (list, tuple)):
            return [one(x) for x in v]
        return [one(v)]


class Choice(_Value):
    """One word of a vocabulary (an enum, or a tuple of words)."""

    __slots__ = ("words",)

    def __init__(self, words: type[Enum] | tuple[str, ...]) -> None:
        self.words = words

    @property
    def choices(self) -> tuple[str, ...]:
        return self.words if isinstance(self.words, tuple) else tuple(m.value for m in self.words)

    def __call__(self, v: Any) -> Any:
        if not isinstance(v, str) or v not in self.choices:
            raise ValueError(f"invalid choice: {_shown(v)} (choose from {', '.join(self.choices)})")
        return v if isinstance(self.words, tuple) else self.words(v)


class Text(_Value):
    """A string (a name or a path)."""

    __slots__ = ()

    def __call__(self, v: Any) -> str:
        if isinstance(v, str):
            return v
        import os

        if isinstance(v, os.PathLike):
            path = os.fspath(v)
            if isinstance(path, str):
                return path
        raise ValueError(f"{_shown(v)}: give a string")


class Axis(_Value):
    """A sweep axis: comma-separated whole numbers or ``start:stop[:step]`` ranges (stop included), each
    value in ``[lo, hi]``, or a list of whole numbers; ranges stay lazy (their size is checked before
    anything is built)."""

    __slots__ = ("lo", "hi")

    def __init__(self, lo: int, hi: int) -> None:
        self.lo, self.hi = lo, hi

    def __call__(self, v: Any) -> list[range]:
        one = Int(self.lo, self.hi)
        if isinstance(v, range):
            for x in (v[0], v[-1]) if v else ():
                one(x)
            if not v:
                raise ValueError(f"{v!r} holds no value")
            return [v]
        if _whole(v) is not None:
            n = one(v)
            return [range(n, n + 1)]
        if not isinstance(v, str):
            raise ValueError(f"{_shown(v)}: give whole numbers or start:stop[:step]")
        out = []
        for item in (t.strip() for t in v.split(",")):
            if not item:
                continue
            if ":" not in item:
                n = one(item)
                out.append(range(n, n + 1))
                continue
            parts = item.split(":")
            if len(parts) not in (2, 3):
                raise ValueError(f"'{item}' is not start:stop[:step]")
            try:
                start, stop, step = (int(parts[0]), int(parts[1]), int(parts[2]) if len(parts) > 2 else 1)
            except ValueError:
                raise ValueError(f"'{item}' is not start:stop[:step]") from None
            if step == 0:
                raise ValueError(f"'{item}': the step must not be 0")
            r = range(start, stop + (1 if step > 0 else -1), step)
            if not r:
                raise ValueError(f"'{item}' holds no value (a step of {step} never reaches {stop})")
            for x in (r[0], r[-1]):
                one(str(x))
            out.append(r)
        if not out:
            raise ValueError(f"'{v}' holds no value")
        return out


def _switch(v: Any) -> bool:
    if not isinstance(v, bool):
        raise ValueError(f"{_shown(v)}: give True or False")
    return v


# ------------------------------------------------------------------------------- arguments


class Arg:
    """One argument of a command."""

    FIELDS = ("name", "help", "value", "default", "flags", "many", "switch", "required", "positional", "nargs",
              "metavar", "group", "objects")
    __slots__ = FIELDS

    def __init__(self, name: str, help: str, value: Callable[[Any], Any] | None = None, default: Any = None,
                 flags: tuple[str, ...] = (), many: bool = False, switch: bool = False, required: bool = False,
                 positional: bool = False, nargs: str | None = None, metavar: str | None = None,
                 group: str | None = None, objects: tuple[str, ...] = ()) -> None:
        self.name = name
        """the Python keyword; the flag is ``--`` and the name with dashes (unless ``flags``)"""
        self.help = help
        self.value = value if value is not None else Text()
        self.default = default
        self.flags = flags
        self.many = many
        """a list: the flag repeats or comma-separates (``--precision a --precision b,c``), the keyword takes a
        list or a comma-separated string"""
        self.switch = switch
        self.required = required
        self.positional = positional
        self.nargs = nargs
        """a positional's or a flag's count (``*``, ``?``) when it takes several words at once"""
        self.metavar = metavar
        self.group = group
        """the help section the flag is listed under"""
        self.objects = objects
        """kinds of Python object the API takes as they are (``platform``, ``model``, ...), checked by their loader"""

    def __repr__(self) -> str:
        return f"Arg({self.name!r})"

    @property
    def option_strings(self) -> tuple[str, ...]:
        if self.positional:
            return ()
        return self.flags or (f"--{self.name.replace('_', '-')}",)

    @property
    def flag(self) -> str:
        return max(self.option_strings, key=len) if self.option_strings else self.name

    def but(self, **changes: Any) -> Arg:
        """This argument with another default, help or requirement in one command."""
        return Arg(**{f: changes.get(f, getattr(self, f)) for f in self.FIELDS})

    def check(self, v: Any) -> Any:
        """The typed value of ``v`` (text or a Python value), or ValueError."""
        if v is None:
            return None
        if self.switch:
            return _switch(v)
        if self.objects and _is_object(v):
            return v  # a Platform, ModelSpec, Calibration or StackProfile: checked by its loader
        if self.nargs == "*":
            import os

            if isinstance(v, (str, os.PathLike)):
                v = [v]
            elif not isinstance(v, (list, tuple)):
                raise ValueError(f"{_shown(v)}: give a list of paths (or one path)")
            return [self.value(x) for x in v]
        if not self.many:
            if isinstance(v, (list, tuple)):
                raise ValueError(f"takes one value, not {len(v)}")
            return self.value(v)
        out: list = []
        if isinstance(v, (set, frozenset, dict)):
            raise ValueError(f"{_shown(v)}: give a list (in order) or a comma-separated string")
        for item in list(v) if isinstance(v, (list, tuple)) else [v]:
            if self.objects and _is_object(item):
                out.append(item)
            elif isinstance(self.value, (FloatList, Axis)):
                out += self.value(item)
            elif isinstance(item, str):
                out += [self.value(t.strip()) for t in item.split(",") if t.strip()]
            else:
                out.append(self.value(item))
        if not out:
            raise ValueError("no value given (the value is empty); give at least one")
        return out


def _is_object(v: Any) -> bool:
    """A loaded spec object (not a name, a number, a list, an array, an iterator or a path): an object of another
    class is named by the loader it goes to; a value (a numpy array, a generator) is checked as a value."""
    return not isinstance(v, (str, bytes, int, float, list, tuple, dict, set)) and not hasattr(v, "__fspath__") \
        and not hasattr(v, "__array__") and not hasattr(v, "__iter__")


class Command:
    """A command's arguments, in the order its help lists them."""

    __slots__ = ("name", "args")

    def __init__(self, name: str, args: tuple[Arg, ...]) -> None:
        self.name, self.args = name, args

    def __iter__(self):
        return iter(self.args)

    def arg(self, name: str) -> Arg:
        return next(a for a in self.args if a.name == name)

    def values(self, given: dict[str, Any]) -> dict[str, Any]:
        """``given`` (keyword arguments, or parsed flags) checked and with every default filled in; an
        unknown name or a bad value raises ValueError naming the argument."""
        known = {a.name: a for a in self.args}
        for key in given:
            if key not in known:
                raise KeyError(key)
        missing = [a.name for a in self.args if a.required and given.get(a.name) is None]
        if missing:
            raise MissingArguments(missing)
        out = {}
        for a in self.args:
            v = given.get(a.name)
            if v is None or (a.switch and v is False):
                out[a.name] = a.default
                continue
            try:
                out[a.name] = a.check(v)
            except ValueError as e:
                raise ArgumentError(a, str(e)) from None
        return out


class MissingArguments(ValueError):
    """Required arguments not given."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        super().__init__(f"the following arguments are required: {', '.join(names)}")


class ArgumentError(ValueError):
    """A bad value for one argument."""

    def __init__(self, arg: Arg, reason: str) -> None:
        self.arg, self.reason = arg, reason
        super().__init__(f"{arg.name}: {reason}")


# ------------------------------------------------------------------------------- shared definitions

BATCH = Int(1, MAX_BATCH)
TOKENS = Int(1, MAX_TOKENS)
CONTEXT = Int(0, MAX_TOKENS)
CORES = Int(1, 4096)
A_SPEEDUP = Float(*SPEEDUP, "a speedup is a positive number")
SLO_MS = Float(1e-6, 1e9, "milliseconds")

MODEL = Arg("model", "catalog name (roofline models), a config.json, a .toml or .gguf path, or a Hugging Face id in "
            "the local cache", required=True, objects=("model",))
CPU = Arg("cpu", "catalog name (roofline platforms) or a platform .toml path", required=True, objects=("platform",))
PRECISIONS = Arg("precision", "repeat or comma-separate; default: fp32, bf16 where native, int8-static (fp32, bf16, "
                 "int8-dynamic, int8-static, int8-mixed-bf16, int8-weight-only, int4-weight-only, w4a8)", many=True,
                 metavar="NAME")
BASELINE = Arg("baseline", "precision the speedups are relative to (default: fp32; bf16 for decoders on platforms "
               "with native BF16)")
BATCH_ARG = Arg("batch", f"sequences per step, 1 to {MAX_BATCH:,} (default 1)", BATCH, default=1)
SEQ_LEN = Arg("seq_len", f"tokens per request, or the prompt length for prefill, 1 to {MAX_TOKENS:,} (default 256)",
              TOKENS, default=256)
PHASE = Arg("phase", "forward (encoders, the default), prefill (decoders, the default) or decode", Choice(Phase))
CONTEXT_ARG = Arg("context", f"tokens already in the KV cache, 0 to {MAX_TOKENS:,}: a decode step's (default 1024), or "
                  "a prefill's before its prompt (default 0)", CONTEXT)
BANDWIDTH = Arg("bandwidth", "DRAM bandwidth figures to use (default: the ceiling's own: measured or STREAM-class for "
                "the attainable ceiling, theoretical for the bound): measured where the platform file has them, or "
                "theoretical (datasheet)", Choice(Bandwidth))
CEILING = Arg("ceiling", "attainable (default): the nominal all-core clock of the busy cores' ISA (with fewer cores busy, "
              "sliding up to the single-core boost at one), STREAM-class DRAM "
              "bandwidth, datasheet ops per cycle; bound: the highest clock the datasheet allows and the theoretical "
              "bandwidth, which no real run may beat (levels memory model)", Choice(Ceiling), default=Ceiling.ATTAINABLE)
MEMORY_MODEL = Arg("memory_model", "levels (default): each tensor priced at the cache level that holds it (L2, LLC, "
                   "DRAM), at the highest clock the busy cores allow; paper: the reference paper's pricing (X, Y and "
                   "non-GEMM work from DRAM, weights from the LLC when they fit) at the nominal clock",
                   Choice(MemoryModel), default=MemoryModel.LEVELS)
CORES_ARG = Arg("cores", "cores used per socket, 1 to 4,096 (default: all; a VM or a partial socket is this flag)",
                CORES)
INSTANCE_CORES = Arg("instance_cores", "cores per instance, 1 to 4,096 (default 4, the reference paper's, or the "
                     "largest divisor of the cores used below 4); instances share one copy of the weights per LLC "
                     "domain", CORES)
SOCKETS = Arg("sockets", "sockets used, 1 to 64 (default: all the platform has)", Int(1, 64))
TENSOR_PARALLEL = Arg("tensor_parallel", "decoders: split the model over this many ranks (SGLang's --tp: one per "
                      "socket or sub-NUMA domain), one instance of every core used, each rank on an equal share of one "
                      "socket's cores, two all-reduces per layer (default 1: not split)", Int(1, 1024), default=1)
GROUP_SIZE = Arg("group_size", "group size of per-group INT4 recipes, 1 to 65,536 (default 128)", Int(1, 1 << 16))
KV_DTYPE = Arg("kv_dtype", "KV-cache element type (default: the activation dtype)", Choice(KV_DTYPES))
QUANTIZE_LM_HEAD = Arg("quantize_lm_head", "decoders: quantize the lm_head too", switch=True, default=False)
CALIBRATION = Arg("calibration", "a `roofline calibrate` file (or its name in platforms/calibration): the host's "
                  "kernel efficiencies and dispatch for the realistic estimate (instead of the stack profile)",
                  objects=("calibration",))
ANY_PLATFORM = Arg("calibration_any_platform", "apply a calibration fitted on another platform (the result says so)",
                   switch=True, default=False)
STACK = Arg("stack", "the software-stack profile the realistic estimate uses (platforms/stacks: torch-inductor, "
            "intel-mlperf, openvino, llama.cpp, ...), a profile path, or none (default: llama.cpp for a .gguf model or "
            "GGUF precisions, else torch-inductor: torchao + Inductor)", objects=("stack",))
SEPARATE_QKV = Arg("separate_qkv", "q, k and v as three GEMMs instead of one fused", switch=True, default=False)
F_GEMM = Arg("f_gemm", "override f_GEMM, the GEMM share of the baseline's time (0 to 1)",
             Float(0.0, 1.0, "a fraction of time"))
GEMM_SPEEDUP = Arg("gemm_speedup", "override the GEMM speedup s (0.001 to 10,000)", A_SPEEDUP)
NON_GEMM_SPEEDUP = Arg("non_gemm_speedup", "override the non-GEMM speedup s_non (0.001 to 10,000)", A_SPEEDUP)

WORKLOAD = (BATCH_ARG, SEQ_LEN, PHASE, CONTEXT_ARG, BANDWIDTH)
MEMORY_CHANNELS = Arg("memory_channels", "memory channels populated per socket, 1 to 64, when fewer than the platform "
                      "file's dram.channels_per_socket (its DRAM bandwidths scale by the ratio)", Int(1, 64))
LAYOUT = (MEMORY_MODEL, CEILING, CORES_ARG, INSTANCE_CORES, MEMORY_CHANNELS)
EFFICIENCIES = (CALIBRATION, ANY_PLATFORM, STACK)
OVERRIDES = (F_GEMM, GEMM_SPEEDUP, NON_GEMM_SPEEDUP)


SERVER_OVERHEAD_W = Arg("server_overhead_w", "energy: watts a busy server draws beyond its sockets' TDP (DRAM, fans, "
                        "power-supply losses), per server, 0 to 100,000 (default 0: the sockets only)",
                        Float(0, 1e5, "watts"), default=0.0)
PRICE_PER_KWH = Arg("price_per_kwh", "energy price per kWh, 0 to 1,000: the energy of a busy server (sockets x TDP + "
                    "--server-overhead-w) priced into the cost per million, added to --price-per-hour's share",
                    Float(0, 1e3, "price per kWh"))


# ------------------------------------------------------------------------------- the commands

ESTIMATE = Command("estimate", (
    MODEL, CPU, PRECISIONS, BASELINE, *WORKLOAD, *LAYOUT, GROUP_SIZE, KV_DTYPE, QUANTIZE_LM_HEAD, *EFFICIENCIES,
    SOCKETS, TENSOR_PARALLEL, SEPARATE_QKV, *OVERRIDES, SERVER_OVERHEAD_W))

FOOTPRINT = Command("footprint", (
    MODEL,
    Arg("precision", "e.g. int8-weight-only, int4-weight-only, int8-dynamic, w4a8", required=True),
    Arg("base_dtype", "dtype of the unquantized model (default: bf16 for decoders, fp32 for encoders)",
        Choice(("fp32", "bf16", "fp16"))),
    GROUP_SIZE,
    QUANTIZE_LM_HEAD.but(help="quantize the lm_head too"),
    Arg("quantize_embeddings", "quantize the embedding table too", switch=True, default=False),
    Arg("count_tied_lm_head_copy", "count a separate lm_head copy for tied embeddings (a runtime that unties them)",
        switch=True, default=False),
))

_LENGTHS, _BATCHING, _DECODERS = ("request lengths (tokens; for decoders, of the prompt)", "batching",
                                  "decoders (continuous batching)")
PLAN = Command("plan", (
    MODEL, CPU.but(many=True, help="one or more, comma-separated or repeated"),
    Arg("precision", "default int8-static", default="int8-static"),
    Arg("scenario", "offline: the most throughput per server; server: Poisson arrivals, the highest rate meeting the "
        "SLO; concurrency (decoders): a fixed number of users per server, each with a request in flight (default: "
        "concurrency with --concurrency, server when an SLO is given, else offline)",
        Choice(tuple(s.value for s in Scenario if s is not Scenario.RATE))),
    Arg("target_rps", "load to serve, requests per second (1e-6 to 1e12)", Float(1e-6, 1e12, "requests per second")),
    Arg("p99_ms", "server scenario: the p99 latency (queueing, batching wait, service) each request must meet, ms "
        "(1e-6 to 1e9)", SLO_MS),
    Arg("price_per_hour", "per server, one per CPU, comma-separated (0 to 1e7 each)", FloatList(0, 1e7), many=True),
    Arg("utilization", "run servers at this fraction of the scenario's rate, 0.01 to 1 (default 1: the server "
        "scenario's rate already leaves the headroom queueing needs; lower it for peaks or failures)",
        Float(0.01, 1, "a fraction"), default=1.0),
    Arg("seq_len", f"every request this long, 1 to {MAX_TOKENS:,} (default 256)", TOKENS,
        flags=("--seq-len", "--prompt-len"), group=_LENGTHS),
    Arg("seq_len_mean", f"lengths drawn from a distribution with this mean (--seq-len-dist), 1 to {MAX_TOKENS:,}",
        Float(1, MAX_TOKENS, "tokens"), group=_LENGTHS),
    Arg("seq_len_dist", "with --seq-len-mean: lognormal (the default), truncated to [1, 4 x mean] (and the model's "
        "positions) and rounded to whole tokens, its mean exactly --seq-len-mean", Choice(("lognormal",)),
        group=_LENGTHS),
    Arg("seq_len_sigma", "the lognormal's sigma, the standard deviation of ln(length), 0.01 to 4 (default 0.5: a "
        "coefficient of variation of about 0.53)", Float(0.01, 4, "the standard deviation of ln(length)"),
        group=_LENGTHS),
    Arg("seq_len_histogram", "lengths from a histogram file: one 'LENGTH WEIGHT' line per bin ('#' comments; weights "
        "are normalised)", metavar="FILE", group=_LENGTHS),
    Arg("max_batch_tokens", "tokens per batch at most (encoders: requests of one batch; decoders: prompt tokens of one "
        "prefill step, one prompt always fits), 1 to 1,048,576 (default: the stack profile's serving harness's, where "
        "it states one (intel-mlperf: 1,560), else 2,048)", Int(1, 1 << 20, "tokens"), group=_BATCHING),
    Arg("max_wait_ms", "encoders: the longest the oldest waiting request waits for its batch to fill, 0 to 1e7 ms "
        "(default 0: an instance that frees up takes whatever is waiting)", Float(0, 1e7, "milliseconds"),
        default=0.0, group=_BATCHING),
    Arg("batch_watermark_tokens", "encoders: a batch closes once its tokens reach this many, never past "
        "--max-batch-tokens (Intel's MLPerf BERT harness: -w 1300 with --max-batch-tokens 1560; default: the stack "
        "profile's harness's with its cap (intel-mlperf: 1,300), else none: a batch fills to the cap)",
        Int(1, 1 << 20, "tokens"), group=_BATCHING),
    Arg("output_len", f"output tokens per request, 1 to {MAX_TOKENS:,} (default 128)", TOKENS, group=_DECODERS),
    Arg("ttft_ms", "server scenario: p99 time to first token; concurrency: each user's; ms (1e-6 to 1e9)", SLO_MS,
        group=_DECODERS),
    Arg("tpot_ms", "server scenario: p99 time per output token; concurrency: each user's; ms (1e-6 to 1e9)", SLO_MS,
        group=_DECODERS),
    Arg("concurrency", "users per server, each with one request in flight (a benchmark's --max-concurrency, a "
        "llama-server's slots): TTFT, TPOT and tokens/s at each; with --tpot-ms or --ttft-ms also the most users a "
        "server holds within them; 1 to 10,000,000, repeat or comma-separate", Int(1, 10_000_000), many=True,
        metavar="N", group=_DECODERS),
    Arg("memory_gb", "DRAM per server, GB, 0.01 to 1e8 (default: the platform file's dram.capacity_gb x sockets); "
        "what the weights leave caps the KV cache", Float(0.01, 1e8, "GB"), group=_DECODERS),
    Arg("max_sequences", "running sequences per instance at most, 1 to 4,096 (default 256; the KV cache may cap it "
        "lower)", Int(1, 4096, "sequences"), group=_DECODERS),
    KV_DTYPE.but(group=_DECODERS),
    PHASE.but(help="forward (encoders, the default), decode (decoders, the default: continuous batching) or prefill (a "
              "decoder's prompts alone, batched like an encoder's requests)"),
    BANDWIDTH, MEMORY_MODEL, CEILING, CORES_ARG, MEMORY_CHANNELS,
    INSTANCE_CORES.but(help="plan this one layout of cores per instance, 1 to 4,096 (default: 1, 2, 4, ... up to the "
                       "socket, and the best of them)"),
    CALIBRATION.but(help="a `roofline calibrate` file (or its name in platforms/calibration): the measured host's "
                    "efficiencies for the realistic service times (instead of the stack profile)"),
    ANY_PLATFORM, STACK,
    SOCKETS.but(help="sockets per server, 1 to 64 (default: all the platform file has); the rate, memory and price "
                "are a server's of that many"),
    TENSOR_PARALLEL.but(help="decoders: serve one model split over this many ranks per server (SGLang's --tp: a "
                        "multiple of the sockets, each rank on an equal share of one socket's cores), one instance of "
                        "every core, two all-reduces per layer (default 1: instances within a socket)"),
    Arg("seed", "the simulation's random seed, 0 to 4,294,967,295 (default 0)", Int(0, 2**32 - 1), default=0),
    Arg("commands", "per CPU, the commands that deploy its best layout on one server (each instance pinned to its "
        "cores and NUMA node, the engine's thread and batch flags) and the benchmark that checks it", switch=True,
        default=False),
    Arg("engine", "with --commands: the engine to deploy, llama.cpp, vllm, torch or openvino (default: the stack "
        "profile's; vllm for a bf16 or int8 decoder)", Choice(("llama.cpp", "vllm", "torch", "openvino"))),
    PRICE_PER_KWH, SERVER_OVERHEAD_W,
))

SWEEP = Command("sweep", (
    MODEL.but(many=True, help="one or more, comma-separated or repeated"), CPU.but(many=True, help="one or more, "
                                                                                     "comma-separated or repeated"),
    PRECISIONS.but(help="repeat or comma-separate (default fp32,int8-static)"),
    Arg("batch", f"e.g. 1,2,4 or 1:64 or 64:1:-8, values 1 to {MAX_BATCH:,} (default 1)", Axis(1, MAX_BATCH),
        many=True),
    Arg("seq_len", f"e.g. 128,256 or 64:512:64, values 1 to {MAX_TOKENS:,} (default 256)", Axis(1, MAX_TOKENS),
        many=True),
    PHASE, CONTEXT_ARG.but(help=f"decode: tokens in the KV cache, 0 to {MAX_TOKENS:,}"), BANDWIDTH, *LAYOUT, SOCKETS,
    SERVER_OVERHEAD_W,
))

PLOT = Command("plot", (MODEL, CPU, PRECISIONS, BASELINE, *WORKLOAD, *LAYOUT, SOCKETS,
                        Arg("measured", "a `roofline validate --json` report to draw beside", metavar="REPORT.json")))

_DECODE = "decode (--phase decode: tokens/s of an LLM engine)"
_RATES = "measured rates (--tokens-per-s, --samples-per-s, --from FILE)"
FROM_FILE = Arg("from_file", "a llama-bench result (-o json, jsonl, csv, or its markdown table), a "
                "llama-batched-bench table or jsonl, an MLPerf mlperf_log_summary.txt, a vllm bench serve "
                "--save-result JSON, an SGLang bench_serving --output-file JSONL, a GuideLLM JSON report, or an "
                "OpenVINO benchmark_app report (benchmark_report.json or its logged summary): its measured rates "
                "against the ceiling and the realistic estimate; what the file does not state is asked for by flag",
                flags=("--from",), metavar="FILE", group=_RATES)
SYSTEM = Arg("system", "an MLPerf system description (systems/<system>.json; default: the results tree's, beside the "
             "summary)", metavar="FILE", group=_RATES)
RATE_PRECISION = Arg("precision", "the precision the run used, when the file's type or system name does not say (a "
                     "GGUF type: q8_0, q4_0, q4_k, ...)", group=_RATES)
THREADS_AS_CORES = Arg("cores", "cores (threads) the run used per socket, 1 to 4,096, when the file does not say "
                       "(llama-bench's threads)", CORES, group=_RATES)
CHECK = Command("check", (
    MODEL.but(required=False), CPU.but(required=False),
    Arg("precision", "e.g. int8-static"),
    BASELINE.but(help="the precision the measured speedup is over (default fp32; decode: bf16 where native)"),
    Arg("throughput_speedup", "measured end-to-end speedup over the baseline (0.001 to 10,000)", A_SPEEDUP),
    Arg("linear_speedup", "measured linear-block speedup over the baseline (0.001 to 10,000)", A_SPEEDUP),
    Arg("report", "a `roofline validate --json` report instead of typed speedups"),
    CALIBRATION.but(help="a `roofline calibrate` file (or its name in platforms/calibration): the host's efficiencies "
                    "for the realistic estimate (instead of the stack profile)"),
    ANY_PLATFORM,
    STACK.but(default=None, help="the software-stack profile the realistic estimate uses (platforms/stacks), a profile "
              "path, or none (default torch-inductor; --from: the file's engine, llama.cpp or intel-mlperf, whose "
              "missing profile means the ceiling plus the priced terms)"),
    BATCH_ARG.but(help=f"1 to {MAX_BATCH:,} (default 1; --from MLPerf BERT: 8 samples per call, assumed)",
                  default=None),
    SEQ_LEN.but(help=f"1 to {MAX_TOKENS:,} (default 256; --tokens-per-s --phase prefill: the prompt; --from MLPerf "
                "BERT: 172, assumed)", default=None),
    MEMORY_MODEL.but(help="the ceiling's memory model (paper: the reference paper's, for its Table 14)"),
    F_GEMM.but(help="override f_GEMM (0 to 1)"), GEMM_SPEEDUP.but(help="override s_GEMM (0.001 to 10,000)"),
    NON_GEMM_SPEEDUP.but(help="override s_non (0.001 to 10,000)"),
    PHASE.but(value=Choice(Phase), default=None, group=_DECODE,
              help="decode: the throughput speedup is tokens/s over the baseline's, one token per sequence; with "
              "--tokens-per-s: prefill (a prompt of --seq-len tokens) or decode (one token per sequence at --context) "
              "(default forward)"),
    CONTEXT_ARG.but(help="tokens in the KV cache: decode's (default 1024), or before a prefill's prompt (default 0)",
                    group=_DECODE),
    Arg("engine_ops_per_cycle", "decode: the engine's matmul rate per core when it does not use the vector or matrix "
        "units (scalar code: 2)", Float(0.01, 65536, "ops per cycle per core"), group=_DECODE),
    Arg("dequant", "decode: unfused: weights dequantized on the vector units before the multiply, not under the memory "
        "stream", Choice(("fused", "unfused")), default="fused", group=_DECODE),
    Arg("widen_weights", "decode: the engine widens quantized weights to a float copy it writes and reads back",
        switch=True, default=False, group=_DECODE),
    Arg("engine_kv_dtype", "decode: the engine's KV-cache element type (default: the ceiling's)", Choice(KV_DTYPES),
        group=_DECODE),
    FROM_FILE,
    Arg("tokens_per_s", "a measured rate in tokens per second of the whole platform (llama-bench's t/s): --phase "
        "prefill or decode, --precision, --cores (1e-6 to 1e12)", Float(1e-6, 1e12, "tokens per second"), group=_RATES),
    Arg("samples_per_s", "a measured rate in samples (requests) per second of the whole platform (MLPerf's samples "
        "per second): --precision, --batch, --seq-len, --instance-cores (1e-6 to 1e12)",
        Float(1e-6, 1e12, "samples per second"), group=_RATES),
    THREADS_AS_CORES.but(help="cores used per socket, 1 to 4,096 (--tokens-per-s: the engine's threads; --from: when "
                         "the file does not say)"),
    INSTANCE_CORES.but(help="cores per instance, 1 to 4,096 (--tokens-per-s: default --cores, one instance; "
                       "--samples-per-s: default 4; --from MLPerf BERT: 4, assumed)", group=_RATES),
    KV_DTYPE.but(help="--tokens-per-s: the KV cache's element type of the run (default: the activation dtype)",
                 group=_RATES),
    QUANTIZE_LM_HEAD.but(help="--tokens-per-s: the lm_head in the precision too (llama.cpp quantizes it)",
                         group=_RATES),
    SYSTEM,
    SOCKETS.but(help="--tokens-per-s / --samples-per-s: sockets the run used, 1 to 64 (default 1 for a tokens rate, "
                "all for a samples rate; one engine process per socket)"),
))

RECORDS = Command("records", (
    Arg("action", "add: write a measurement file as a record", Choice(("add",)), positional=True),
    Arg("file", "a llama-bench result (-o json, jsonl, csv, or its markdown table), a llama-batched-bench table or "
        "jsonl, an MLPerf mlperf_log_summary.txt, a vllm bench serve JSON, an SGLang bench_serving JSONL, a GuideLLM "
        "JSON report or an OpenVINO benchmark_app report", positional=True, metavar="FILE"),
    CPU.but(required=False, help="the platform the run was on (catalog name or a platform .toml), when the file "
            "does not name it"),
    MODEL.but(required=False, help="the model, when the file names it only by a path (catalog name, config.json, "
              ".toml or .gguf)"),
    RATE_PRECISION.but(group=None),
    THREADS_AS_CORES.but(group=None),
    BATCH_ARG.but(help="samples per call, when the file does not say (MLPerf BERT: 8, assumed)", default=None),
    SEQ_LEN.but(help="tokens per sample, when the file does not say (MLPerf BERT: 172, assumed)", default=None),
    INSTANCE_CORES.but(help="cores per instance, when the file does not say (MLPerf BERT: 4, assumed)"),
    Arg("stack", "the software stack (default: the file's engine, llama.cpp or intel-mlperf)"),
    SYSTEM.but(group=None),
))

CALIBRATE = Command("calibrate", (
    Arg("report", "`roofline validate --json` reports, all from the same host", positional=True, nargs="*"),
    Arg("records", "fit a software-stack profile instead, from measurement records (files or folders; default: the "
        "built-in records)", nargs="*", metavar="PATH"),
    Arg("stack", "with --records: the stack whose profile to fit (default torch-inductor)", default="torch-inductor"),
    Arg("cpu", "the measured platform of the reports (default: the file the first report names)",
        objects=("platform",)),
    Arg("model", "check that the reports are for this model", objects=("model",)),
))

ACCURACY = Command("accuracy", (
    Arg("records", "record files or folders (default: the built-in)", nargs="*", metavar="PATH"),
))
#: ``roofline accuracy``'s view of its result (the command line's, not the API's: the result holds every figure)
ACCURACY_VIEW = (Arg("worst", f"list the N figures furthest off their leave-one-platform-out prediction, after the "
                     f"headline (with --brief too; 1 to 100,000; the full output lists {WORST_LISTED})",
                     Int(1, 100_000), metavar="N"),)

_CATALOG_ACTION = Arg("action", "list (default) or show", Choice(("list", "show")), default="list", positional=True,
                      nargs="?")
CATALOG = Command("catalog", (_CATALOG_ACTION, Arg("name", "name, alias or file path (with show)", positional=True,
                                                     nargs="?")))

SCHEMAS = ("estimate", "validate", "validate-llamacpp", "footprint", "plan", "check")
SCHEMA = Command("schema", (Arg("which", ", ".join(SCHEMAS), Choice(SCHEMAS), positional=True, metavar="COMMAND"),))

THREADS = Arg("threads", "threads to measure with, 1 to 4,096 (default: all cores)", Int(1, 4096))
PROBE = Command("probe", (
    THREADS,
    Arg("name", "platform name in the file (default: host)", default="host"),
    Arg("quick", "smaller arrays and GEMMs (seconds, less precise)", switch=True, default=False),
))

_ENGINE = "llama.cpp engine (--engine llama.cpp; the llamacpp extra)"
VALIDATE = Command("validate", (
    MODEL.but(help="catalog name or config.json path (encoders: kernels and the end-to-end encoder; decoders: prefill "
              "and decode kernels)"),
    Arg("cpu", "host (this machine's probe, cached; default), a saved probe TOML, or a catalog name to predict with",
        default="host"),
    THREADS.but(help="threads, 1 to 4,096 (default: all cores)"),
    Arg("quick", "2 layers, sequence 128, 3 timing rounds: minutes on a laptop", switch=True, default=False),
    BATCH_ARG.but(help=f"1 to {MAX_BATCH:,} (default 1)"),
    Arg("seq_len", "default 256 (128 with --quick)", TOKENS),
    Arg("layers", "encoder layers to build, 1 to 10,000 (default: the model's; 2 with --quick)", Int(1, 10_000)),
    Arg("rounds", "interleaved timing rounds, 1 to 1,000 (default 5; 3 with --quick)", Int(1, 1000)),
    Arg("max_autotune", "let Inductor's C++ GEMM templates compete (slower compiles)", switch=True, default=False),
    Arg("pt2e", "also run PT2E + X86InductorQuantizer static INT8", switch=True, default=False),
    Arg("reprobe", "measure the host again instead of using the cached probe", switch=True, default=False),
    Arg("skip_shapes", "only the end-to-end encoder", switch=True, default=False),
    Arg("skip_end_to_end", "only the per-shape kernels", switch=True, default=False),
    Arg("decode", "also the decode-shaped weight-only GEMMs (M = 1..8) against the DRAM bandwidth (on by default for "
        "decoders)", switch=True, default=False),
    Arg("engine", "torch: compiled torchao kernels (default); llama.cpp: write the model as GGUF files with random "
        "weights and measure llama.cpp's prompt and generation rates against the prefill and decode ceilings",
        Choice(("torch", "llama.cpp")), default="torch", group=_ENGINE),
    Arg("precision", "llama.cpp: GGUF types to write, repeat or comma-separate (default q8_0,q4_0,q4_k)", many=True,
        metavar="TYPE", group=_ENGINE),
    Arg("pp", "llama.cpp: prompt tokens of the pp test, 1 to 2^20 (default 512; 64 with --quick)", Int(1, 1 << 20),
        group=_ENGINE),
    Arg("tg", "llama.cpp: generated tokens of the tg test, 1 to 2^20 (default 128; 16 with --quick)", Int(1, 1 << 20),
        group=_ENGINE),
    Arg("reps", "llama.cpp: repetitions of each test, 1 to 1,000 (default 5; 2 with --quick)", Int(1, 1000),
        group=_ENGINE),
    Arg("parallel", "llama.cpp: also decode B sequences at once for each B, as llama-batched-bench does (each a prompt "
        "of 128 tokens, then --tg steps of one token of every sequence); repeat or comma-separate, e.g. 1,2,4,8,16,32",
        Int(1, 4096), many=True, metavar="B", group=_ENGINE),
    Arg("depth", "llama.cpp: also the pp and tg tests after this many tokens in the KV cache (llama-bench -d), "
        "1 to 2^20", Int(1, 1 << 20), group=_ENGINE),
    Arg("flash_attention", "llama.cpp: run attention as one fused kernel (on) or as separate matmuls and softmax "
        "(off, the default here; llama.cpp's own default, auto, is on for the CPU backend since August 2025)",
        Choice(("off", "on")), group=_ENGINE),
    Arg("gguf_dir", "llama.cpp: folder for the GGUF files (default: a temporary one)", group=_ENGINE),
    Arg("keep_gguf", "llama.cpp: keep the GGUF files", switch=True, default=False, group=_ENGINE),
))
