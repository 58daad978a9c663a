"""Review 4: simulate's help said "FedAvg (no codebook) and, with --baseline vq, the control ...
run", but --baseline vq alone runs the control without FedAvg (the option replaces the default);
the help says how to get both."""

from trustlab.cli.federated import SIMULATE_HELP


def test_the_help_says_baseline_vq_alone_leaves_fedavg_out():
    text = " ".join(SIMULATE_HELP.split())
    assert "FedAvg (no codebook) and, with --baseline vq" not in text
    assert "--baseline vq alone runs the control without FedAvg" in text
    assert "--baseline fedavg --baseline vq for both" in text
