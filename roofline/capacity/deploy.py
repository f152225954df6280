"""``roofline plan --commands``: the commands that deploy a CPU's best layout on one server, and the benchmark
that checks the plan there (pure: a plan and the server's cores in, shell lines out).

The plan puts N instances of C cores on each socket. Instance ``i`` of socket ``s`` runs on the consecutive core
ids ``s P + i C .. s P + (i + 1) C - 1`` (``P`` the socket's physical cores) and allocates from NUMA node ``s``.
Assumed, and said with the commands: core ids numbered socket by socket (``lscpu -e`` shows it), the SMT siblings
(ids from ``sockets x P`` up) left idle, one NUMA node per socket (no sub-NUMA clustering).

Per engine, the flags and where they are documented:

- **llama.cpp** (GGUF precisions): one ``llama-server`` per instance under ``numactl --physcpubind=<cores>
  --membind=<node>`` (numactl(8): the threads on those cores, memory from that node); ``-t``/``-tb`` threads for
  generation and for batch and prompt processing, ``--parallel`` the slots (sequences decoded together),
  ``-c`` the context shared by the slots (each slot gets ``c / parallel``), ``--port``
  (https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md). The check, per instance:
  ``llama-batched-bench -npp <prompt> -ntg <output> -npl <slots>`` (N_KV = B (PP + TG) when prompts are not
  shared: https://github.com/ggml-org/llama.cpp/blob/master/tools/batched-bench/README.md), whose table
  ``roofline check --from`` reads.
- **vLLM CPU** (a bf16 or int8 decoder, or ``--engine vllm``): ``VLLM_CPU_OMP_THREADS_BIND`` the cores its OpenMP
  threads bind to, ``VLLM_CPU_KVCACHE_SPACE`` the KV cache in GiB, ``numactl --membind`` its memory on their node
  (https://docs.vllm.ai/en/latest/getting_started/installation/cpu.html, "Related runtime environment
  variables"), ``vllm serve MODEL --max-num-seqs <slots> --tensor-parallel-size 1 --port``; the check
  ``vllm bench serve --dataset-name random --random-input-len --random-output-len --max-concurrency
  --num-prompts --save-result`` (https://docs.vllm.ai/en/latest/cli/bench/serve.html), whose JSON ``check --from``
  reads.
  A tensor-parallel plan (``plan --tensor-parallel T``) is one ``vllm serve --tensor-parallel-size T`` process whose
  ``VLLM_CPU_OMP_THREADS_BIND`` lists each rank's cores, ``|`` between ranks (the CPU worker binds rank ``r`` to the
  ``r``-th: ``omp_cpuids.split("|")[self.rank]``, https://docs.vllm.ai/en/v0.9.2/api/vllm/v1/worker/cpu_worker.html),
  ``T / S`` ranks on each of the ``S`` sockets, a socket's cores shared among its ranks as evenly as whole cores
  allow; no other engine's commands are written for a split (llama.cpp splits no model over CPU ranks).
- **torch** (torch-inductor and the other torch stacks): one process per instance under numactl with
  ``OMP_NUM_THREADS=<cores>`` (https://pytorch.org/docs/stable/notes/cpu_threading_torchscript_inference.html);
  ``serve.py`` is a placeholder for the user's server, and no standard benchmark checks it.
- **openvino**: one process per socket running the socket's instances as streams, ``-nstreams N -nthreads N C``
  for ``benchmark_app`` (https://docs.openvino.ai/2025/get-started/learn-openvino/openvino-samples/benchmark-tool.html:
  ``-nstreams``, ``-nthreads``, ``-nireq``, ``-hint none`` so that they are not overridden, ``-shape``), and the
  same streams and threads as OpenVINO Model Server's ``--plugin_config`` (``NUM_STREAMS``,
  ``INFERENCE_NUM_THREADS``: https://docs.openvino.ai/2025/model-server/ovms_docs_parameters.html).
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum

from roofline.errors import UserError
from roofline.results.deploy import Deployment, Process
from roofline.results.plan import CpuPlan, PlanResult
from roofline.spec.model import ModelSpec
from roofline.spec.platform import Platform


class Engine(Enum):
    LLAMA_CPP = "llama.cpp"
    VLLM = "vllm"
    TORCH = "torch"
    OPENVINO = "openvino"


#: the precisions vLLM's CPU backend serves that a plan names (BF16, and INT8 W8A8 / weight-only: the CPU
#: installation page's supported data types and quantizations)
VLLM_PRECISIONS = frozenset({"bf16", "int8-dynamic", "int8-static", "int8-weight-only", "int8-mixed-bf16"})
#: each engine's default port (llama-server 8080, vllm serve 8000; OpenVINO Model Server's gRPC port as its docs'
#: examples give it, 9000, its REST port 1000 below)
PORTS = {Engine.LLAMA_CPP: 8080, Engine.VLLM: 8000, Engine.TORCH: 8000, Engine.OPENVINO: 9000}
GIB = 1 << 30

CORE_ASSUMPTIONS = ("core ids numbered socket by socket (socket s: s x P to s x P + P - 1, P its physical cores; "
                    "check with lscpu -e), SMT siblings left idle, one NUMA node per socket (no sub-NUMA clustering)")


def engine_for(stack: str | None, precision: str, decoder: bool, gguf: bool) -> Engine:
    """The engine whose commands deploy a plan priced by ``stack``: llama.cpp for GGUF, OpenVINO for its profile,
    vLLM CPU for a bf16 or int8 decoder, else a torch process."""
    if stack == "llama.cpp" or (stack is None and gguf):
        return Engine.LLAMA_CPP
    if stack == "openvino":
        return Engine.OPENVINO
    if decoder and precision in VLLM_PRECISIONS:
        return Engine.VLLM
    return Engine.TORCH


def core_span(cores: list[int]) -> str:
    """Consecutive core ids as numactl and vLLM take them: ``16-31`` (one core: ``16``)."""
    return str(cores[0]) if len(cores) == 1 else f"{cores[0]}-{cores[-1]}"


def instance_cores(socket: int, index: int, cores: int, socket_cores: int) -> list[int]:
    """Instance ``index`` of ``socket``: ``socket x socket_cores + index x cores`` and the ``cores - 1`` ids after it."""
    lo = socket * socket_cores + index * cores
    return list(range(lo, lo + cores))


def _numactl(cores: list[int], node: int) -> list[str]:
    return ["numactl", f"--physcpubind={core_span(cores)}", f"--membind={node}"]


def _line(env: dict[str, str], argv: list[str]) -> str:
    return shlex.join([f"{k}={v}" for k, v in env.items()] + argv) if env else shlex.join(argv)


def _layout(r: PlanResult, c: CpuPlan) -> tuple[int, int, int | None, int | None] | None:
    """(cores per instance, instances per socket, sequences per instance, users per instance) of what to deploy:
    a concurrency plan's most users within the SLO (else the most users asked), otherwise the best layout with its
    running-sequence cap; None when nothing serves."""
    scenario: str = r.scenario  # the result's type names offline and server; a concurrency plan is one too
    if scenario == "concurrency":
        point = c.max_users or (max(c.users, key=lambda u: u.users) if c.users else None)
        if point is None:
            return None
        return point.instance_cores, point.instances_per_socket, max(1, point.running), max(1, point.running)
    if not c.meets:
        return None
    b = c.best
    if r.phase != "decode":
        return b.instance_cores, b.instances_per_socket, None, None
    k = max(1, int(b.max_concurrent_sequences or 1))
    return b.instance_cores, b.instances_per_socket, k, k


@dataclass
class _Want:
    """What one CPU's commands deploy."""

    r: PlanResult
    c: CpuPlan
    socket_cores: int
    """physical cores per socket: the core ids of socket s start at s x socket_cores"""
    cores: int
    """per instance"""
    per_socket: int
    slots: int | None
    """decoders: sequences per instance"""
    users: int | None
    prompt: int
    """the (mean) prompt length"""
    output: int
    longest: int
    """the longest prompt"""
    decode: bool
    notes: list[str] = field(default_factory=list)

    def instances(self) -> Iterator[tuple[int, int, list[int]]]:
        """(number, socket, cores) of every instance of the server, socket by socket."""
        k = 0
        for s in range(self.c.sockets):
            for i in range(self.per_socket):
                yield k, s, instance_cores(s, i, self.cores, self.socket_cores)
                k += 1


def deployment(r: PlanResult, c: CpuPlan, socket_cores: int, engine: Engine) -> Deployment | None:
    """The processes that deploy ``c``'s layout on one server of ``c.sockets`` sockets of ``socket_cores``
    physical cores, for ``engine``; None when no layout serves."""
    got = _layout(r, c)
    if got is None:
        return None
    cores, per_socket, slots, users = got
    decode = r.phase == "decode"
    prompt, output = r.seq_len, int(r.output_len or 1)
    longest = r.lengths.max  # a slot's context holds the longest prompt and its output
    notes = [CORE_ASSUMPTIONS, "MODEL stands for the model file or name; start the processes together, run the "
             "checks together (the plan's rate is a server's with every instance busy)"]
    w = _Want(r, c, socket_cores, cores, per_socket, slots, users, prompt, output, longest, decode, notes)
    if c.tensor_parallel > 1:
        if engine is not Engine.VLLM:
            raise UserError(f"--commands for a {c.tensor_parallel}-rank split: only vLLM's are written (--engine vllm); "
                            f"{engine.value} splits no model over CPU ranks")
        return Deployment(engine=engine.value, instance_cores=cores, instances_per_socket=per_socket,
                          sockets=c.sockets, processes=[_vllm_split(w, c.tensor_parallel)], assumptions=w.notes)
    processes = {Engine.LLAMA_CPP: _llama, Engine.VLLM: _vllm, Engine.TORCH: _torch,
                 Engine.OPENVINO: _openvino}[engine](w)
    return Deployment(engine=engine.value, instance_cores=cores, instances_per_socket=per_socket, sockets=c.sockets,
                      processes=processes, assumptions=w.notes)


def _llama(w: _Want) -> list[Process]:
    slots = w.slots or 1
    if not w.decode:
        w.notes.append("a prompt-only plan: one slot per instance, each prompt a request")
    ctx = slots * (w.longest + w.output)
    out = []
    for k, s, ids in w.instances():
        port = PORTS[Engine.LLAMA_CPP] + k
        pin = _numactl(ids, s)
        serve = pin + ["llama-server", "-m", "MODEL.gguf", "-t", str(w.cores), "-tb", str(w.cores), "--parallel",
                       str(slots), "-c", str(ctx), "--port", str(port)]
        check = pin + ["llama-batched-bench", "-m", "MODEL.gguf", "-c", str(slots * (w.prompt + w.output)), "-npp",
                       str(w.prompt), "-ntg", str(w.output), "-npl", str(slots), "-t", str(w.cores), "-tb",
                       str(w.cores)]
        out.append(Process(socket=s, numa_node=s, cores=ids, instances=1, threads=w.cores, sequences=slots, port=port,
                           command=_line({}, serve), check=_line({}, check)))
    w.notes.append(f"-c {ctx:,}: {slots} slots x ({w.longest:,} prompt tokens at most + {w.output:,} output); "
                   f"llama-batched-bench at the mean prompt, {w.prompt:,} tokens")
    return out


def _vllm(w: _Want) -> list[Process]:
    slots = w.slots or 1
    users = w.users or slots
    c = w.c
    kv_gib = 1
    if c.memory is not None:
        kv_gib = max(1, math.ceil(slots * (w.longest + w.output) * c.memory.kv_bytes_per_token / GIB))
        w.notes.append(f"VLLM_CPU_KVCACHE_SPACE={kv_gib} GiB: {slots} sequences x ({w.longest:,} + {w.output:,} "
                       f"tokens) x {c.memory.kv_bytes_per_token:,.0f} bytes per token, rounded up")
    w.notes.append("vLLM binds each process's OpenMP threads to VLLM_CPU_OMP_THREADS_BIND, numactl --membind its "
                   "memory (weights, KV cache) to their node; MODEL is the Hugging Face name or path")
    rate = None
    if w.r.scenario == "server" and c.best.rps_per_server > 0:
        rate = c.best.rps_per_server / c.best.instances_per_server
    prompts = max(100, 10 * users)
    out = []
    for k, s, ids in w.instances():
        port = PORTS[Engine.VLLM] + k
        env = {"VLLM_CPU_OMP_THREADS_BIND": core_span(ids), "VLLM_CPU_KVCACHE_SPACE": str(kv_gib)}
        serve = ["numactl", f"--membind={s}", "vllm", "serve", "MODEL", "--max-num-seqs", str(slots),
                 "--tensor-parallel-size", "1", "--port", str(port)]
        check = ["vllm", "bench", "serve", "--model", "MODEL", "--port", str(port), "--dataset-name", "random",
                 "--random-input-len", str(w.prompt), "--random-output-len", str(w.output), "--max-concurrency",
                 str(users), "--num-prompts", str(prompts)]
        if rate is not None:
            check += ["--request-rate", f"{rate:.4g}"]
        check += ["--save-result"]
        out.append(Process(socket=s, numa_node=s, cores=ids, instances=1, threads=w.cores, sequences=slots, port=port,
                           command=_line(env, serve), check=_line({}, check)))
    return out


def rank_cores(ranks: int, sockets: int, socket_cores: int) -> list[list[int]]:
    """Each of ``ranks`` ranks' core ids, ``ranks / sockets`` on each socket, a socket's ``socket_cores`` shared as
    evenly as whole cores allow (the first ranks of a socket take one more: 43, 43 and 42 of 128)."""
    per = ranks // sockets
    out = []
    for s in range(sockets):
        lo = s * socket_cores
        for i in range(per):
            n = socket_cores // per + (1 if i < socket_cores % per else 0)
            out.append(list(range(lo, lo + n)))
            lo += n
    return out


def _vllm_split(w: _Want, ranks: int) -> Process:
    """One vLLM server of ``ranks`` tensor-parallel ranks over every socket of the server."""
    slots = w.slots or 1
    users = w.users or slots
    c = w.c
    groups = rank_cores(ranks, c.sockets, w.socket_cores)
    kv_gib = 1
    if c.memory is not None:
        kv_gib = max(1, math.ceil(slots * (w.longest + w.output) * c.memory.kv_bytes_per_token / ranks / GIB))
        w.notes.append(f"VLLM_CPU_KVCACHE_SPACE={kv_gib} GiB per rank: {slots} sequences x ({w.longest:,} + "
                       f"{w.output:,} tokens) x {c.memory.kv_bytes_per_token:,.0f} bytes per token over {ranks} ranks, "
                       "each holding its share of the key-value heads (assumed per rank), rounded up")
    w.notes.append(f"one vLLM server split over {ranks} tensor-parallel ranks, {ranks // c.sockets} per socket, each "
                   "rank's OpenMP threads bound to its cores (VLLM_CPU_OMP_THREADS_BIND, ranks separated by |)")
    port = PORTS[Engine.VLLM]
    env = {"VLLM_CPU_OMP_THREADS_BIND": "|".join(core_span(g) for g in groups), "VLLM_CPU_KVCACHE_SPACE": str(kv_gib)}
    serve = ["vllm", "serve", "MODEL", "--max-num-seqs", str(slots), "--tensor-parallel-size", str(ranks),
             "--port", str(port)]
    check = ["vllm", "bench", "serve", "--model", "MODEL", "--port", str(port), "--dataset-name", "random",
             "--random-input-len", str(w.prompt), "--random-output-len", str(w.output), "--max-concurrency",
             str(users), "--num-prompts", str(max(100, 10 * users))]
    if w.r.scenario == "server" and c.best.rps_per_server > 0:
        check += ["--request-rate", f"{c.best.rps_per_server:.4g}"]
    check += ["--save-result"]
    return Process(socket=0, numa_node=0, cores=[i for g in groups for i in g], instances=1,
                   threads=sum(len(g) for g in groups), sequences=slots, port=port, command=_line(env, serve),
                   check=_line({}, check))


def _torch(w: _Want) -> list[Process]:
    w.notes.append(f"serve.py stands for the {w.r.stack or 'torch'} server (one model per process, batches as the "
                   "plan runs them); no standard benchmark checks it: give its measured rate to roofline check")
    out = []
    for k, s, ids in w.instances():
        port = PORTS[Engine.TORCH] + k
        serve = _numactl(ids, s) + ["python", "serve.py", "--port", str(port)]
        out.append(Process(socket=s, numa_node=s, cores=ids, instances=1, threads=w.cores, sequences=w.slots,
                           port=port, command=_line({"OMP_NUM_THREADS": str(w.cores)}, serve)))
    return out


def _openvino(w: _Want) -> list[Process]:
    n, threads = w.per_socket, w.per_socket * w.cores
    w.notes.append(f"one process per socket: its {n} instances are OpenVINO streams of {w.cores} threads sharing one "
                   "copy of the weights; MODEL.xml is the IR, -shape gives every input one shape")
    out = []
    for s in range(w.c.sockets):
        ids = [i for k in range(n) for i in instance_cores(s, k, w.cores, w.socket_cores)]
        port = PORTS[Engine.OPENVINO] + s
        pin = _numactl(ids, s)
        config = f'{{"NUM_STREAMS": "{n}", "INFERENCE_NUM_THREADS": "{threads}"}}'
        serve = pin + ["ovms", "--model_path", "MODEL_DIR", "--model_name", "model", "--port", str(port),
                       "--rest_port", str(port - 1000), "--target_device", "CPU", "--plugin_config", config]
        check = pin + ["benchmark_app", "-m", "MODEL.xml", "-d", "CPU", "-hint", "none", "-nstreams", str(n),
                       "-nthreads", str(threads), "-nireq", str(n), "-shape", f"[1,{w.prompt}]"]
        out.append(Process(socket=s, numa_node=s, cores=ids, instances=n, threads=threads, sequences=w.slots,
                           port=port, command=_line({}, serve), check=_line({}, check)))
    return out


def with_commands(r: PlanResult, platforms: list[Platform], model: ModelSpec, engine: str | None = None) -> PlanResult:
    """``r`` with each CPU's :class:`~roofline.results.deploy.Deployment` (``platforms``: the plan's, in its CPUs'
    order; ``engine``: the engine's name, default :func:`engine_for`)."""
    from dataclasses import replace

    from roofline.model.efficiency import is_gguf
    from roofline.model.recipes import precision_recipe

    if engine is not None:
        chosen = Engine(engine)
    else:
        try:
            gguf = is_gguf(precision_recipe(r.precision, model))
        except Exception:  # a GGUF mix's name: not one recipe, a GGUF precision all the same
            gguf = True
        chosen = engine_for(r.stack, r.precision, r.phase == "decode", gguf)
    cpus = [replace(c, deploy=deployment(r, c, int(p.cores_per_socket.value or c.cores_per_socket), chosen))
            for c, p in zip(r.cpus, platforms)]  # the CPUs as given, one per platform
    return replace(r, cpus=cpus, commands=True)
