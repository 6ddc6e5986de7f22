"""Lark grammars of ptxgen (installed as the package ptxgen.grammar)."""
