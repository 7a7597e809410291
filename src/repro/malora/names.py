"""Names shared by the studies, the summary, the claims and the config check."""

LINEAR_METRICS = (
    "union_margin",  # held-out union normalised min-margin (σ = 0.3 split)
    "min_task_margin",  # smallest per-task min-margin (unnormalised), σ = 0.3
    "pretrain_margin",  # task 0's min-margin over ‖W‖ (retention)
    "joint_accuracy",  # argmax over the joint label space, σ = 0.8 split
    "pretrain_accuracy",  # task 0 joint accuracy, σ = 0.8 (retention)
    "pertask_accuracy",  # mean accuracy of the fine-tuning tasks' own heads, σ = 0.8
)
DIGITS_METRICS = (
    "normalised_accuracy",  # merged ÷ individually fine-tuned accuracy, per-task heads (KnOTS)
    "joint_accuracy",  # argmax over all 10 digits, whole test split
    "pretrain_accuracy",  # digits 0–3 on their own head (retention)
    "pertask_accuracy",  # mean accuracy of the fine-tuning tasks on their own heads
)
FULL_METRICS = (
    "normalised_accuracy",  # merged ÷ individual accuracy, per-task zero-shot heads
    "mean_accuracy",  # mean per-task accuracy
)
SVMS = ("frobenius", "nuclear")
