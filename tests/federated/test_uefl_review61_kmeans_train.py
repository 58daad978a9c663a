"""Review 61: no test pinned which features an extension codebook is fitted on. With
train_silo's k-means fed the silo's test features instead of its training features (mutant),
81 tests of test_uefl_math, _protocol, _simulation, review52g/54/59 still passed, and the
extension would have been fitted on held-out data. The spec: scikit-learn
KMeans(n_clusters=K, random_state=0, n_init="auto") on the encoder features of every spatial
position of the silo's training set."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sklearn.cluster import KMeans  # noqa: E402

from trustlab.federated import Silo, SiloPlan, SiloState, UEFLConfig  # noqa: E402
from trustlab.federated.model import build_model, is_codebook_key  # noqa: E402
from trustlab.federated.protocol import align_codebook  # noqa: E402
from trustlab.federated.silos import make_digit_silos  # noqa: E402
from trustlab.federated.uefl import initial_weights, train_silo  # noqa: E402


def test_an_extension_book_is_kmeans_of_the_silos_training_features():
    full = make_digit_silos(2, "none", random_state=0)[1]
    silo = Silo(full.X_train[:30], full.y_train[:30], full.X_test[:10], full.y_test[:10])
    # learning_rate 0: Adam moves nothing, so the returned book is the k-means book itself
    cfg = UEFLConfig(learning_rate=0.0, local_epochs=1, batch_size=30)
    shared = {k: v for k, v in initial_weights(cfg, 64, 10).items() if not is_codebook_key(k)}
    plan = SiloPlan(0, book_idx=1, init_ext=True)
    _, state = train_silo(shared, SiloState(), silo, plan, cfg, 2, n_classes=10)

    model = build_model(cfg.model_spec(64, 10), random_state=cfg.random_state)
    with torch.no_grad():
        z = model.features(torch.as_tensor(silo.X_train))
    features = z.reshape(-1, z.shape[-1]).numpy().astype(np.float64)
    assert features.shape == (30 * 16 * cfg.seg, cfg.dim // cfg.seg)  # every position, all rows
    reference = KMeans(cfg.n_codes, random_state=0, n_init="auto").fit(features).cluster_centers_
    book = state.codebooks["vq.books.1"]
    # float32 centroids of features of size ~1: 1e-5 leaves room for summation order
    np.testing.assert_allclose(align_codebook(reference, book), reference, atol=1e-5)
