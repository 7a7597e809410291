# Workflow-level rules: every enabled paper's claims and checks gathered into one ledger,
# which is also the front page of `snakemake --report` (the Markdown copy is for reading
# and diffing; the reST copy is the report's workflow description).


def _front_page():
    """The ledger once claims_report has written it; a placeholder before the first run."""
    ledger = os.path.join(os.getcwd(), "results", "claims.rst")
    return ledger if os.path.exists(ledger) else "../workflow/report/ledger_missing.rst"


report: _front_page()


rule claims_report:
    input:
        claims=paper_targets(),
    output:
        markdown="results/claims.md",
        rst="results/claims.rst",
    log:
        "logs/claims_report.log",
    localrule: True
    conda:
        "../envs/common.yaml"
    params:
        titles=[paper_title(p) for p in enabled_papers()],
    script:
        "../scripts/claims_report.py"
