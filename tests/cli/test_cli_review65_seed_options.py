"""Every command's --seed is refused the same way when it is no seed (review 65): one line,
exit 2, naming --seed, as the options are read (before any file is read or any work done)."""

import click
import pytest

from cli_helpers import run_main
from trustlab.cli.main import _click_command, app

SEEDED = """audit | fairness dcp | fairness dcp-aggregate | evaluate rank | explain fastpd
| explain anova-tpnn fit | explain equigx train | explain equigx explain | explain equigx evaluate
| explain regions train | explain regions predict | explain regions evaluate | robustness train
| robustness certify | privacy dsi | strategic simulate | llm generate | federated simulate
| federated flower-app | safety polytope fit | safety neutrality build-prompts
| safety neutrality prompts | safety context score | safety context stats | safety transfer report
| safety transfer vector | safety transfer fit-map | safety transfer backdoor-model
| interpret sae corpus | interpret sae train | interpret sae explain | interpret sae score
| interpret sae report | agents evaluate | agents cluster | watermark synth | watermark train
| watermark predict | watermark describe | watermark evaluate | watermark export"""
COMMANDS = [" ".join(name.split()) for name in SEEDED.split("|")]


def _seeded(command, path=()):
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            yield from _seeded(sub, (*path, name))
    elif any("--seed" in getattr(param, "opts", ()) for param in command.params):
        yield " ".join(path)


def test_the_table_holds_every_command_with_a_seed():
    assert sorted(_seeded(_click_command(app))) == sorted(COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_seed_out_of_range_is_refused_in_one_line(capsys, command):
    for seed, expected in [
        ("-1", "a non-negative integer seed, got -1"),
        (str(2**64), f"an integer seed below 2**64, got {2**64}"),
    ]:
        code, out, err = run_main([*command.split(), "--seed", seed], capsys)
        assert (code, out, err) == (2, "", f"trustlab: error: --seed: expected {expected}\n")
    code, _, err = run_main([*command.split(), "--seed", "1.5"], capsys)
    assert code == 2 and err.count("\n") == 1 and "'--seed': '1.5' is not a valid integer" in err
