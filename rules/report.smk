# Workflow-level rules: every enabled paper's claims and checks gathered into one ledger,
# which is also the front page of `snakemake --report` (the Markdown copy is for reading
# and diffing; the reST copy is the report's workflow description).


report: report_front_page()


rule claims_report:
    input:
        claims=paper_claims(),
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
