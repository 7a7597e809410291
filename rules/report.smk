# Workflow-level rules: the claims ledger. results/claims.md is the whole ledger (for reading
# and diffing); results/claims.rst is the report's short front page (summary, counts per
# paper, vocabulary). Both cover the papers that have run and those the current run makes
# (the others are listed as not run), so one paper's run makes a ledger and a report. Each
# paper's full tables are a page in that paper's category of the report
# (results/<paper>/claims.html).


report: report_front_page()


rule claims_report:
    input:
        unpack(ledger_claims),
    output:
        markdown=LEDGER[0],
        rst=LEDGER[1],
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


rule claims_page:
    input:
        claims="results/{paper}/claims.json",
    output:
        page=report(
            "results/{paper}/claims.html",
            caption="../workflow/report/claims_page.rst",
            category=lambda wildcards: paper_title(wildcards.paper),
        ),
    log:
        "logs/{paper}/claims_page.log",
    wildcard_constraints:
        paper=one_of(PAPERS),
    localrule: True
    conda:
        "../envs/common.yaml"
    params:
        title=lambda wildcards: paper_title(wildcards.paper),
    script:
        "../scripts/claims_page.py"
