"""Names the config may use, kept import-light: the Snakefile checks the config with them."""

BUNDLED = ("gbsg2", "flchain", "whas500", "veterans", "aids", "rossi", "support2", "nwtco")
FILE_FORMATS = ("deepsurv_h5", "rdatasets_csv")
SCENARIOS = ("gompertz", "loglogistic", "weibull")
# metrics of results/qsurv/metrics/<dataset>.json (the curve errors on synthetic data only):
# pycox's Antolini Ctd, test-KM IBS and IBLL; the official code's IPCW C-index and IBS
METRICS = (
    "ctd",
    "ibs",
    "ibll",
    "cindex_ipcw",
    "ibs_ipcw",
    "hazard_l1",
    "hazard_l1_forward",
    "survival_l1",
)
# reference arms of every metrics file, scored beside the trained methods without training
# (repro.qsurv.reference): no configured method may take their names
KAPLAN_MEIER, ORACLE = "kaplan_meier", "oracle"
REFERENCE_ARMS = (KAPLAN_MEIER, ORACLE)  # the oracle on synthetic scenarios only
