"""Where ptxgen's lark grammars are read from: the installed package `ptxgen.grammar`, or the
repository's top-level `grammar/` folder when ptxgen runs from a source checkout on sys.path."""
from __future__ import annotations

import importlib.util
from pathlib import Path

__all__ = ["read_grammar"]

_SOURCE_DIR = Path(__file__).resolve().parent.parent / "grammar"


def read_grammar(name: str) -> str:
    """The text of grammar file `name` (e.g. 'ptx.lark')."""
    if importlib.util.find_spec("ptxgen.grammar") is not None:
        from importlib import resources
        f = resources.files("ptxgen.grammar").joinpath(name)
        if f.is_file():
            return f.read_text(encoding="utf-8")
    path = _SOURCE_DIR / name
    try:
        return path.read_text(encoding="utf-8")
    except OSError as e:
        from .errors import InternalError
        raise InternalError(f"grammar file {name} is missing (looked in the ptxgen.grammar package and {path}): "
                            f"{e.strerror}") from None
