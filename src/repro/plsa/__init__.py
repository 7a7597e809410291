"""PLSA: graph domain adaptation under conditional structure shift."""

TITLE = "PLSA"  # the name as the paper writes it (claims ledger, report)
