"""QSurv: continuous-time survival by Gauss-Legendre quadrature with time-conditioned LoRA.

``build_hazard_net("time_lora", ...)`` (or ``TimeLoRAHazard``) is the hazard network h(t | x),
``QuadratureLikelihood(rule=..., nodes=K, time_scale=t_max)`` its training loss,
``unit_rule`` / ``integrate`` the quadrature rules; ``survival_metrics`` (pycox's Ctd, IBS,
IBLL) and ``official_metrics`` (the official code's IPCW C-index and IBS) score curves.
"""

from repro.common.exports import lazy_exports

TITLE = "QSurv"  # the name as the paper writes it (claims ledger, report)
__all__ = [
    "TimeLoRAHazard",
    "build_hazard_net",
    "QuadratureLikelihood",
    "unit_rule",
    "integrate",
    "survival_metrics",
    "official_metrics",
]
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "TimeLoRAHazard": "model",
        "build_hazard_net": "model",
        "QuadratureLikelihood": "model",
        "unit_rule": "quadrature",
        "integrate": "quadrature",
        "survival_metrics": "metrics",
        "official_metrics": "ipcw",
    },
)
