"""The learned flow: order flow learned from a tape event by event, and drawn again against
the live book as a population of the market.

Its modules, from the tape to the market:

- `exciters`: what a tape's event (`envs.data.events`: its messages as typed events with the
  book's state each met) is to the excitation (`Exciter`);
- `state` (compiled): the book's state the rates read, its buckets and cells (`StateGrid`);
- `kernels` (compiled): the excitation's kernel;
- `marks`: what an event carries (sizes, offsets, the levels added behind), as distributions;
- `model`: `EventModel`, the parameters, and `check`, what a sampler needs of them;
- `parameters`: the parameter files, read whole and checked as files;
- `estimate`: the model by maximum likelihood (`fit_events`, `estimate`, `log_likelihood`);
- `sampler` (compiled): the events drawn against the book, `EventSampler` and
  `NeuralSampler` timing them, one `BookActor` carrying them out;
- `neural`, `neural_fit`: the variant whose excitation is a GRU, and its training (torch).

The market's population of a learned flow, `LearnedFlow`, lives with the other populations
(`envs.simulator.traders.learned`).

Its variation points, each changed in one place:

- the number of kernels and their decays: `estimate.DECAYS` (one tuple of candidate decays
  per kernel); the kernel's shape: `kernels` (kernels.pxd and `kernels.jumps`);
- the state's buckets: `state.QUANTILES` (or edges given to `estimate.estimate`); what the
  state reads of the book: `state.StateGrid.read` and its tape's side in `envs.data.events`;
- a family of marks: its definition in `marks.FAMILIES` (what its distributions are indexed
  by, and so how many it holds), read by the counting, the check and the compiled tables;
  a new family adds its values on the tape (`marks`) and where `sampler.BookActor` draws it.
"""
