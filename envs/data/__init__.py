"""Market data: tapes of order flow, and the readers that make them.

- `envs.data.tapes`: `Tape` (messages and book rows as numpy arrays) and LOBSTER files;
- `envs.data.events`: a tape's messages as typed events (`EventKind`) with the book's state
  each met, the state as a path in time, the levels it reveals behind the best;
- `envs.simulator.recording`: `synthetic_tape`, a synthetic session recorded as a tape;
- `envs.data.binance`, `envs.data.tardis`, `envs.data.l3`: exchange recordings read into book
  events (`envs.data.feed.Feed`), with `envs.data.files` (their files), `envs.data.text`
  (their text scanned, compiled) and `envs.data.decimals` (exact prices and sizes);
- `envs.data.builder` (compiled): book events carried out and written as LOBSTER messages
  and book rows;
- `envs.data.convert`: a recording converted into a tape and ``meta.json``, written to and
  read from a directory; `envs.data.load.load_tape`: a tape from whatever a user names.

The ``tradearena data`` commands that check and convert them are `evaluation.cli.data`; the
command's tables as text are `evaluation.cli.text`, while `text` here scans an exchange's
text into columns.
"""
