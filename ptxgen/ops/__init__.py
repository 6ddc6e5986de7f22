"""Instruction families beyond the core set (tensor core, async copies, barriers, cluster)."""
