"""What a command's ``--model``, ``--cpu``, ``--calibration`` and ``--stack`` name: a catalog entry, a
file, or (from Python) the loaded object itself, each checked to be the kind the argument takes."""

from __future__ import annotations

from roofline.catalog import find_file, load_calibration, load_model_file, load_platform_file
from roofline.errors import UserError
from roofline.spec.calibration import Calibration
from roofline.spec.model import ModelSpec
from roofline.spec.platform import Platform
from roofline.spec.stack import StackProfile


def _wrong(what: str, ref: object, want: str) -> UserError:
    name = type(ref).__name__
    article = "an" if name[:1].lower() in "aeiou" else "a"
    return UserError(f"{what}: {article} {name} is not a {want}; give a name, a path or a {want}")


def platform(ref, what: str = "--cpu") -> tuple[Platform, str]:
    """A catalog name, alias or file (or a Platform), and the file it came from."""
    if isinstance(ref, Platform):
        return ref, ""
    if not isinstance(ref, str):
        raise _wrong(what, ref, "Platform")
    path = find_file("platforms", ref)
    return load_platform_file(path), str(path)


def platforms(refs, what: str = "--cpu") -> list[Platform]:
    """Several CPUs (names, files or Platform objects)."""
    out = [platform(ref, what)[0] for ref in refs]
    if not out:
        raise UserError(f"{what}: no CPU given; give at least one name")
    return out


def model(ref, what: str = "--model") -> ModelSpec:
    """A catalog name or alias, a file or folder, a Hugging Face id in the local cache (or a ModelSpec)."""
    if isinstance(ref, ModelSpec):
        return ref
    if not isinstance(ref, str):
        raise _wrong(what, ref, "ModelSpec")
    return load_model_file(find_file("models", ref))


def calibration(ref, what: str = "--calibration") -> tuple[Calibration | None, str | None]:
    """A file or its name in platforms/calibration (or a Calibration), and how it is named."""
    if ref is None:
        return None, None
    if isinstance(ref, Calibration):
        return ref, f"<calibration of {ref.platform}>"
    if not isinstance(ref, str):
        raise _wrong(what, ref, "Calibration")
    return load_calibration(ref), ref


def stack(ref, what: str = "--stack") -> StackProfile | None:
    """A profile by name or path (or a StackProfile); ``none`` for no profile."""
    if ref is None or isinstance(ref, StackProfile):
        return ref
    if not isinstance(ref, str):
        raise _wrong(what, ref, "StackProfile")
    if ref.lower() == "none":
        return None
    from roofline.catalog.stacks import load_stack

    return load_stack(ref)
