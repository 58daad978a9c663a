"""Review 64: the model sizes of UEFLConfig.model_spec / initial_weights and the seed of
kmeans_codebook are checked by name. Before, 0 classes built a model with no output, 2.5 features
were cut to 2, -1 classes was a raw torch RuntimeError, and a seed of -1, 1.5 or "a" was
scikit-learn's InvalidParameterError about KMeans' parameter."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.federated import UEFLConfig, initial_weights, kmeans_codebook

CFG = UEFLConfig(encoder="mlp")


@pytest.mark.parametrize(
    ("n_features", "n_classes", "argument"),
    [(4, 0, "n_classes"), (4, 1, "n_classes"), (4, -1, "n_classes"), (4, 2.0, "n_classes"),
     (0, 3, "n_features"), (2.5, 3, "n_features"), (True, 3, "n_features")],
)  # fmt: skip
def test_model_sizes_are_refused_by_name(n_features, n_classes, argument):
    with pytest.raises(InputError, match=f"^{argument}: expected an integer >= "):
        CFG.model_spec(n_features, n_classes)
    with pytest.raises(InputError, match=f"^{argument}: "):  # before any torch work
        initial_weights(CFG, n_features, n_classes)


def test_numpy_integer_sizes_still_build_the_same_spec():
    assert CFG.model_spec(np.int64(6), np.int32(3)) == CFG.model_spec(6, 3)
    assert CFG.model_spec(6, 3)["num_classes"] == 3


@pytest.mark.parametrize("seed", [-1, 1.5, "a", True, None, 2**32])
def test_kmeans_seed_is_refused_by_name(seed):
    features = np.arange(12.0).reshape(6, 2)
    with pytest.raises(InputError, match="^random_state: expected "):
        kmeans_codebook(features, 2, random_state=seed)
