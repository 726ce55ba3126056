"""The market itself: one session of decision steps over a compiled order book, the background
populations that send its flow, and a replayed tape's messages.

- the book and the steps: `book` (compiled: `OrderBook`; a room of its own, at the bottom,
  below `learned_flow`, whose compiled modules cimport it), `market` (`Market`, one session),
  `flow` (compiled: the steps and a session's background flow, `Flow`), `orders` (the order
  vocabulary), `latency` (orders and views in flight);
- the populations: `traders` (one class each, and `light()`, `rmsc04()`), their mechanisms
  `arrivals`, `sizes` and `fundamental`, their draws `draws` (compiled), and `learned_flow`
  (order flow learned from a tape, its own room below this one and above the book);
- replay: `replayer` (compiled: `Replayer`), `recording` (a synthetic session as a tape)
  and the responsive replay's answer to the seats: `responsive` (the model),
  `response_estimate` (estimated from the tape) and `seat_response` (compiled: carried out);
- what a seat sees and does: `features`, `observation` (compiled) and `actions`;
- `impact`: a metaorder's price moves read off simulated days.

Two of its module names recur in other rooms, each for a reason. `impact` simulates, and
`evaluation.analysis.impact` fits what it reads (the analysis room knows no market, so the
days and the fit live apart); `evaluation.market.impact` is the impact scorecard's judge,
which trades in a market rather than reading a population's metaorders. `market` is one
session, while `evaluation.cli.market` holds the command line's handlers of the market's
commands and `evaluation.market` the market's judges and fit (the command's room names its
handler modules by area, the evaluation its rooms by what they judge).
"""
