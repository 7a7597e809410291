"""Names the config may use, kept import-light: the Snakefile checks the config with them."""

BUNDLED = ("gbsg2", "flchain", "whas500", "veterans", "aids", "rossi")
FILE_FORMATS = ("deepsurv_h5", "rdatasets_csv")
SCENARIOS = ("gompertz", "loglogistic", "weibull")
