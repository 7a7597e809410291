"""The feature-only logistic regression's logits (strurw/pa/plsa _features) have one column
per class of the source graph even when a rare class has no source training node: found by
the full-scale rehearsal (a MAG-like pair whose class 10 had its 2 nodes in validation made
sklearn return 19 columns for 20 classes and stopped plsa_train with an IndexError)."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from repro.plsa.csbm import Graph
from repro.plsa.train import UNSEEN_CLASS_GAP, feature_logits


def _graph(y, rng):
    x = (rng.normal(size=(len(y), 3)) + np.eye(4)[y][:, :3] * 2).astype(np.float32)
    return Graph(x=x, y=np.asarray(y, dtype=np.int64), edge_index=np.zeros((2, 0), np.int64))


def test_a_class_missing_from_training_keeps_its_column():
    rng = np.random.default_rng(0)
    y = np.r_[np.zeros(20), np.ones(3), np.full(15, 2), np.full(12, 3)].astype(int)
    source, target = _graph(y, rng), _graph(rng.permutation(y), rng)
    train = np.flatnonzero(y != 1)  # class 1 (not the last) only outside the training nodes
    logits_s, logits_t = feature_logits(source, target, train)
    reference = LogisticRegression(max_iter=1000).fit(source.x[train], y[train])
    for logits, graph in ((logits_s, source), (logits_t, target)):
        assert logits.shape == (len(y), 4)
        np.testing.assert_allclose(
            logits[:, [0, 2, 3]], reference.decision_function(graph.x), rtol=1e-6
        )
        np.testing.assert_allclose(
            logits[:, 1], logits[:, [0, 2, 3]].min(axis=1) - np.log(1e6), rtol=1e-12
        )
    assert UNSEEN_CLASS_GAP == pytest.approx(np.log(1e6))


def test_two_seen_classes_give_sklearns_probabilities():
    """sklearn's binary decision function is one column (class 2 against class 0)."""
    rng = np.random.default_rng(1)
    y = np.r_[np.zeros(20), np.ones(2), np.full(18, 2)].astype(int)
    source = _graph(y, rng)
    train = np.flatnonzero(y != 1)
    logits, _ = feature_logits(source, source, train)
    reference = LogisticRegression(max_iter=1000).fit(source.x[train], y[train])
    seen = np.exp(logits[:, [0, 2]])
    np.testing.assert_allclose(
        seen / seen.sum(axis=1, keepdims=True), reference.predict_proba(source.x), atol=1e-6
    )
