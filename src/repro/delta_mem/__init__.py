"""δ-Mem: an 8×8 delta-rule memory for a frozen attention backbone."""

TITLE = "δ-Mem"  # the name as the paper writes it (claims ledger, report)
