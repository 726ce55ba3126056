"""``render_mode="rgb_array"``: the depth ladder and the value trace, pixel by pixel."""

from __future__ import annotations

import numpy as np

from tradearena.envs.rendering import ASK, BID, HEIGHT, VALUE, WIDTH, book_picture, trace_picture
from tradearena.envs.trading_env import TradingEnv


def test_the_ladder_draws_each_level_as_long_as_its_quantity():
    """Best ask just above the middle, best bid just below; bars scaled to the largest."""
    image = book_picture([(99, 200), (98, 100)], [(101, 50)], [], n_steps=10)
    row = HEIGHT // 10
    best_ask, best_bid, second_bid = (image[r + row // 2] for r in (4 * row, 5 * row, 6 * row))
    half = WIDTH // 2
    assert (best_ask[:, :] == ASK).all(axis=1).sum() == half * 50 // 200 - 2
    assert (best_bid == BID).all(axis=1).sum() == half - 2
    assert (second_bid == BID).all(axis=1).sum() == half // 2 - 2
    assert not (image[: 4 * row] == ASK).all(axis=2).any()  # no second ask level


def test_the_trace_spans_the_session_and_the_values_range():
    """A value rising from 0 to 2 over a 4-step session: first column at the bottom, last
    point at the top, the right column for step 2 of 4 in the middle."""
    image = trace_picture([0.0, 1.0, 2.0], n_steps=4)
    blue = (image == VALUE).all(axis=2)
    middle = round(2 * (WIDTH - 1) / 4)
    assert blue[HEIGHT - 1, 0] and blue[0, middle]
    assert not blue[:, middle + 1 :].any()


def test_an_env_renders_its_session_as_an_image():
    env = TradingEnv(task="making", n_steps=5, render_mode="rgb_array")
    env.reset(seed=0)
    for _ in range(5):
        env.step(6)
    image = env.render()
    assert image.shape == (HEIGHT, WIDTH, 3) and image.dtype == np.uint8
    assert (image == VALUE).all(axis=2).any() and (image == BID).all(axis=2).any()
