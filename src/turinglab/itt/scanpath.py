"""Scanpath AI judges (Zhang et al., attention prediction): the first fixations of a scanpath as
2-D coordinates, normalised to [−1, 1] by the image size, fed to the same linear classifier and
grouped cross-validation as the text judges (grouped by image)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from turinglab.itt.ai_judges import Sample
from turinglab.itt.dataset import Response

FIXATIONS = 10


def scanpath_features(
    paths: Sequence[Sequence[tuple[float, float]]],
    sizes: Sequence[tuple[float, float]],
    fixations: int = FIXATIONS,
) -> np.ndarray:
    """(n, 2·fixations): x, y of the first fixations in [−1, 1]; short paths repeat their last
    fixation (a viewer who stopped moving), so every row has the same length."""
    out = np.zeros((len(paths), 2 * fixations), dtype=np.float32)
    for i, (path, (width, height)) in enumerate(zip(paths, sizes, strict=True)):
        if not path:
            raise ValueError(f"scanpath {i} has no fixations")
        if width <= 0 or height <= 0:
            raise ValueError(f"scanpath {i}: image size must be positive")
        points = list(path[:fixations])
        points += [points[-1]] * (fixations - len(points))
        xy = np.asarray(points, dtype=np.float32)
        xy[:, 0] = 2 * xy[:, 0] / width - 1
        xy[:, 1] = 2 * xy[:, 1] / height - 1
        out[i] = np.clip(xy, -1, 1).reshape(-1)
    return out


def scanpath_samples(
    rows: Sequence[Response], image_size: tuple[float, float]
) -> tuple[np.ndarray, list[Sample]]:
    """Features and samples for every attention response (one image size for the dataset;
    per-image sizes can be passed to `scanpath_features` directly)."""
    chosen = [r for r in rows if r.task == "attention" and r.fixations]
    feats = scanpath_features([r.fixations or [] for r in chosen], [image_size] * len(chosen))
    samples = [
        Sample(
            r.item,
            r.stimulus_id,
            r.source,
            r.agent if r.source == "machine" else None,
            task="attention",
        )
        for r in chosen
    ]
    return feats, samples
