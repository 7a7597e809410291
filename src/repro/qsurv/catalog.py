"""Names the config may use, kept import-light: the Snakefile checks the config with them."""

BUNDLED = ("gbsg2", "flchain", "whas500", "veterans", "aids", "rossi")
FILE_FORMATS = ("deepsurv_h5", "rdatasets_csv")
SCENARIOS = ("gompertz", "loglogistic", "weibull")
# metrics of results/qsurv/metrics/<dataset>.json (the curve errors on synthetic data only)
METRICS = ("ctd", "ibs", "ibll", "hazard_l1", "survival_l1")
