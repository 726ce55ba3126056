"""Market data: tapes of order flow and the readers that make them."""
