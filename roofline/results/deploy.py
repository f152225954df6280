"""Result type of ``roofline plan --commands``: the commands that deploy a CPU's best layout on one server, and the
benchmark that checks it (built by :mod:`roofline.capacity.deploy`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from roofline.spec import PYDANTIC_CONFIG

EngineName = Literal["llama.cpp", "vllm", "torch", "openvino"]


@dataclass(frozen=True)
class Process:
    """One server process, pinned to its cores and their NUMA node."""

    __pydantic_config__ = PYDANTIC_CONFIG

    socket: int
    numa_node: int
    """the socket's node (assumed: one NUMA node per socket, no sub-NUMA clustering)"""
    cores: list[int]
    """the core ids its threads run on"""
    instances: int
    """plan instances it serves: 1, or the socket's instances as streams of one process (OpenVINO)"""
    threads: int
    sequences: int | None
    """decoders: sequences it runs together (its slots); null for encoders"""
    port: int
    command: str
    """the shell line that starts it"""
    check: str | None = None
    """the shell line of the benchmark that checks it (null: none standard for the engine)"""


@dataclass(frozen=True)
class Deployment:
    """A CPU's best layout as processes on one server."""

    __pydantic_config__ = PYDANTIC_CONFIG

    engine: EngineName
    instance_cores: int
    instances_per_socket: int
    sockets: int
    processes: list[Process]
    assumptions: list[str] = field(default_factory=list)
    """what the commands assume about the server and leave as placeholders"""
