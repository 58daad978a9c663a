"""Review 62: UEFLStrategy.aggregate_train refuses a silo whose training diverged, as the
protocol driver does (f23a3f78). Used by itself (Flower's Strategy.start), it averaged one silo's
NaN weights into the shared arrays and reported a NaN mean train-loss without a word."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.federated import UEFLConfig

pytest.importorskip("flwr")


def _reply(silo: int, weight: float, loss: float):
    from flwr.app import Array, ArrayRecord, Message, Metadata, MetricRecord, RecordDict

    content = RecordDict({
        "arrays": ArrayRecord({"encoder.w": Array(np.full((2, 3), weight))}),
        "metrics": MetricRecord({"num-examples": 10, "partition-id": silo, "train-loss": loss}),
    })  # fmt: skip
    meta = Metadata(run_id=1, message_id=f"m{silo}", src_node_id=100 + silo, dst_node_id=0,
                    reply_to_message_id=f"q{silo}", group_id="", created_at=0.0, ttl=60.0,
                    message_type="train")  # fmt: skip
    return Message(content=content, metadata=meta)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_diverged_silo_is_refused_naming_learning_rate(bad):
    from trustlab.federated.flower import UEFLStrategy

    strategy = UEFLStrategy(UEFLConfig(learning_rate=0.5), 2)
    replies = [_reply(0, 1.0, 0.3), _reply(1, bad, bad)]
    with pytest.raises(InputError, match=r"^learning_rate: expected a rate at which local "
                       r"training stays finite, got 0\.5 \(silo 1's weights after round 3 "
                       r"hold NaN or inf, in encoder\.w\)") as caught:  # fmt: skip
        strategy.aggregate_train(3, replies)
    assert caught.value.argument == "learning_rate"


def test_finite_replies_are_still_averaged():
    from trustlab.federated.flower import UEFLStrategy

    strategy = UEFLStrategy(UEFLConfig(), 2)
    arrays, metrics = strategy.aggregate_train(1, [_reply(0, 1.0, 0.2), _reply(1, 3.0, 0.4)])
    assert np.array_equal(arrays["encoder.w"].numpy(), np.full((2, 3), 2.0))
    assert metrics["train-loss"] == pytest.approx(0.3)
