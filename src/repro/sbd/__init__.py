"""SBD: signed biclique decomposition and its factorised SpMM."""

TITLE = "SBD"  # the name as the paper writes it (claims ledger, report)
