# Workflow-level rules: every enabled paper's claims gathered into one table.


rule claims_report:
    input:
        claims=paper_targets(),
    output:
        markdown="results/claims.md",
    log:
        "logs/claims_report.log",
    localrule: True
    conda:
        "../envs/common.yaml"
    params:
        papers=enabled_papers(),
    script:
        "../scripts/claims_report.py"
