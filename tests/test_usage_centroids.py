"""Learned-request centroids (usage/centroids.py): a tool's dense similarity is the higher of its own
cosine and its learned requests' centroid's; tools without learned requests keep their own."""

from __future__ import annotations

import numpy as np

from toolsearch.usage import LearnedEvidence, UsageRecord
from toolsearch.usage.centroids import LearnedCentroids


class AxisEmbedder:
    """Each known word is one axis: a text's vector is the normalized sum of its words' axes."""

    words = ("parcel", "refund", "mugs", "weather")
    dim = len(words)

    def embed(self, texts: list[str]) -> np.ndarray:
        rows = np.array([[float(w in t.split()) for w in self.words] for t in texts], dtype=np.float32)
        return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-9)


def test_a_tool_is_also_as_close_as_the_requests_that_led_to_it() -> None:
    evidence = LearnedEvidence()
    evidence.fold([UsageRecord("where is my parcel", ("order_status",), session="s1"),
                   UsageRecord("parcel late", ("order_status",), session="s2"),
                   UsageRecord("blue mugs and a refund", ("stock_level", "refund"), session="s3")],
                  {"order_status", "stock_level", "refund", "forecast"})
    names = ("order_status", "stock_level", "refund", "forecast")
    centroids = LearnedCentroids(evidence, names, AxisEmbedder())
    assert centroids.has.tolist() == [True, True, True, False]
    query = AxisEmbedder().embed(["parcel"])[0]
    own = np.array([0.1, 0.2, 0.3, 0.9], dtype=np.float32)
    combined = centroids.similarities(own, query)
    assert combined[0] > 0.99  # its learned requests are all about parcels
    assert combined[1:].tolist() == own[1:].tolist()  # no closer through their centroids; none learned
    assert centroids.similarities(own, AxisEmbedder().embed(["weather"])[0]).tolist() == own.tolist()
