"""The steering-transfer page (report.html): its headline reads the scale the target's sweep
chose on training topics, not the scale that did best on the held-out topics it reports."""

from types import SimpleNamespace

from trustlab.audit.sections.steering_transfer import build_page
from trustlab.safety.transfer import LayerSweep, MapFit, TransferReport

ALPHAS = (0.5, 1.0, 2.0)


def _sweep(model, rates):
    return LayerSweep(
        model=model,
        layers=(0, 1),
        alphas=ALPHAS,
        rates=rates,
        unsteered_rate=1.0,
        vector_norms=(1.0, 2.0),
        n_prompts=10,
        n_pairs=20,
    )


def _study():
    # the target's sweep (training topics) chooses block 0 at scale 1 ...
    target_sweep = _sweep("target", ((1.0, 0.0, 0.0), (1.0, 1.0, 1.0)))
    fit = MapFit("affine", 4, 6, 100, 10, 0, 0, False, 0.1, 0.9, 0.2, 0.8, 0.1, 0.9, 0.2, 0.8)
    # ... and on the held-out topics the mapped vector does best at scale 2, where random
    # vectors of its length remove 40 points too
    transfer = TransferReport(
        source="source", target="target", source_layer=0, target_layer=0, alphas=ALPHAS,
        source_native=(0.5, 0.0, 0.0), target_native=(0.8, 0.1, 0.0), mapped=(0.9, 0.3, 0.0),
        random=(1.0, 0.9, 0.6), random_draws=((1.0, 0.9, 0.6),), source_unsteered=1.0,
        target_unsteered=1.0, source_clean_rate=0.0, target_clean_rate=0.0,
        perplexity_unsteered=2.0, perplexity_native=(2.0, 2.0, 2.1),
        perplexity_mapped=(2.0, 2.0, 2.2), perplexity_random=(2.0, 2.1, 2.3), native_norm=1.0,
        mapped_norm=1.0, cosine=0.9, map_kind="affine", map_held_out_fvu=0.2, n_prompts=10,
        n_pairs=20, n_random=1,
    )  # fmt: skip
    return SimpleNamespace(
        source_sweep=_sweep("source", ((1.0, 0.0, 0.0), (1.0, 1.0, 1.0))),
        target_sweep=target_sweep,
        map_fit=fit,
        transfer=transfer,
        tiny=True,
        random_state=0,
    )


def test_the_headline_is_at_the_scale_the_sweep_chose():
    study = _study()
    assert study.target_sweep.best_alpha == 1.0
    summary = next(s for s in build_page(study).sections if s.id == "transfer").summary
    # at scale 1: mapped 30 %, random 90 %, the target's own 10 % (was: scale 2, picked on the
    # held-out topics, mapped 0 % beside random 60 %)
    assert "alpha 1 " in summary and "100% -> 30%" in summary, summary
    assert "random vectors 90%" in summary and "own 10%" in summary, summary


def test_the_transfer_table_gives_rates_as_percents_like_the_headline():
    section = next(s for s in build_page(_study()).sections if s.id == "transfer")
    table = section.blocks[1]
    # alpha 1: source own 0 %, target own 10 %, mapped 30 %, random 90 % (was 0.0000 ... 0.9000
    # beside a headline in percents)
    assert table.rows[1][:5] == ["1", "0.0%", "10.0%", "30.0%", "90.0%"], table.rows[1]
    assert "source 100.0%, target 100.0%; without the trigger: 0.0% and 0.0%" in table.caption
