"""QSurv: continuous-time survival by Gauss-Legendre quadrature with time-conditioned LoRA."""

TITLE = "QSurv"  # the name as the paper writes it (claims ledger, report)
