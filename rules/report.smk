# Workflow-level rules: every enabled paper's claims and checks gathered into the ledger.
# results/claims.md is the whole ledger (for reading and diffing); results/claims.rst is the
# report's short front page (summary, counts per paper, vocabulary); each paper's full tables
# are a page in that paper's category of the report (results/<paper>/claims.html).


report: report_front_page()


rule claims_report:
    input:
        claims=paper_claims(),
    output:
        **claims_pages(),
        markdown="results/claims.md",
        rst="results/claims.rst",
    log:
        "logs/claims_report.log",
    localrule: True
    conda:
        "../envs/common.yaml"
    params:
        papers=enabled_papers(),
        titles=[paper_title(p) for p in enabled_papers()],
    script:
        "../scripts/claims_report.py"
