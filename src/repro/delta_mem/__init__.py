"""δ-Mem: an 8×8 delta-rule memory for a frozen attention backbone."""

from repro.common.exports import lazy_exports

TITLE = "δ-Mem"  # the name as the paper writes it (claims ledger, report)
__all__ = ["DeltaMem", "DeltaMemory", "MemoryConfig", "delta_rule_scan", "load_adapter"]
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "DeltaMem": "wrapper",
        "DeltaMemory": "memory",
        "MemoryConfig": "memory",
        "delta_rule_scan": "scan",
        "load_adapter": "adapter",
    },
)
