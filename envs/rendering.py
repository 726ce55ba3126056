"""A market seat drawn as a small RGB image (``render_mode="rgb_array"``): the book's depth
beside the seat's value over the session, in numpy alone (no plotting library), so a
video recorder or Stable-Baselines3's ``rgb_array`` default can film a session cheaply."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["HEIGHT", "WIDTH", "book_picture", "draw_trace", "trace_picture"]

HEIGHT = 120
"""Image height (pixels)."""
WIDTH = 200
"""Image width (pixels): the depth ladder on the left half, the value trace on the right."""
LEVELS = 5
"""Price levels drawn on each side of the book."""

BACKGROUND = (255, 255, 255)
BID = (44, 160, 44)
ASK = (214, 39, 40)
VALUE = (31, 119, 180)
AXIS = (190, 190, 190)


def book_picture(
    bids: Sequence[tuple[int, int]],
    asks: Sequence[tuple[int, int]],
    values: Sequence[float],
    n_steps: int,
) -> np.ndarray:
    """An image of shape (`HEIGHT`, `WIDTH`, 3), uint8.

    Left half: the depth ladder, the best ``LEVELS`` asks (red, best lowest) above the best
    bids (green, best highest), each bar's length its resting quantity (shares) over the
    largest drawn. Right half: the seat's marked-to-market value (dollars) after each step so
    far (blue, steps 0 .. ``n_steps`` left to right, scaled to the values' range), with the
    zero line in grey when it lies in that range.
    """
    image = np.full((HEIGHT, WIDTH, 3), BACKGROUND, np.uint8)
    half = WIDTH // 2
    row = HEIGHT // (2 * LEVELS)
    largest = max([q for _, q in (*bids[:LEVELS], *asks[:LEVELS])] or [1])
    for i, (_, qty) in enumerate(asks[:LEVELS]):
        top = (LEVELS - 1 - i) * row
        image[top + 1 : top + row - 1, : max(1, half * qty // largest - 2)] = ASK
    for i, (_, qty) in enumerate(bids[:LEVELS]):
        top = (LEVELS + i) * row
        image[top + 1 : top + row - 1, : max(1, half * qty // largest - 2)] = BID
    image[:, half] = AXIS
    draw_trace(image[:, half + 1 :], values, n_steps)
    return image


def trace_picture(values: Sequence[float], n_steps: int) -> np.ndarray:
    """An image of shape (`HEIGHT`, `WIDTH`, 3), uint8, of ``values`` after each step so far
    (blue, steps 0 .. ``n_steps`` left to right, scaled to the values' range)."""
    image = np.full((HEIGHT, WIDTH, 3), BACKGROUND, np.uint8)
    draw_trace(image, values, n_steps)
    return image


def draw_trace(image: np.ndarray, values: Sequence[float], n_steps: int) -> None:
    """Draw ``values`` (one per step, from step 0) on ``image`` (rows, columns, 3) in place:
    steps 0 .. ``n_steps`` span the columns, the values' range (with 0) the rows, and the zero
    line is grey when it lies inside that range."""
    trace = np.asarray(values, dtype=float)
    if trace.size == 0:
        return
    rows, columns = image.shape[:2]
    low, high = min(trace.min(), 0.0), max(trace.max(), 0.0)
    span = high - low or 1.0
    ys = np.round((rows - 1) * (high - trace) / span).astype(int)
    if low < 0 < high:
        image[round((rows - 1) * high / span), :] = AXIS
    xs = np.round(np.arange(trace.size) * (columns - 1) / max(n_steps, 1)).astype(int)
    for k in range(trace.size):
        nxt = min(k + 1, trace.size - 1)
        image[min(ys[k], ys[nxt]) : max(ys[k], ys[nxt]) + 1, xs[k]] = VALUE
        image[ys[nxt], xs[k] : xs[nxt] + 1] = VALUE
