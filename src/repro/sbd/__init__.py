"""SBD: signed biclique decomposition and its factorised SpMM.

``decompose(A, GreedyConfig(...))`` returns a ``Decomposition`` (factors, signs, residual,
``trace``, ``compression_factor``, ``to_sparse()``, ``spmm(X)``, ``spmm_normalized``).
"""

from repro.common.exports import lazy_exports

TITLE = "SBD"  # the name as the paper writes it (claims ledger, report)
__all__ = ["decompose", "Decomposition", "GreedyConfig"]
__getattr__, __dir__ = lazy_exports(
    __name__, {"decompose": "greedy", "Decomposition": "factors", "GreedyConfig": "greedy"}
)
