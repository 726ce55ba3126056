# The names, parameters and types of kernels.pyx, for type checkers and the API reference;
# the docstrings are the compiled module's (docs/compiled_docstrings.py).
import numpy as np

def jumps(alpha: np.ndarray, decays: np.ndarray) -> np.ndarray: ...
def masses(decay: float, dt: np.ndarray) -> np.ndarray: ...
def sums(
    time: np.ndarray, side: np.ndarray, source: np.ndarray, decays: np.ndarray, sources: int
) -> np.ndarray: ...
def stretch_sums(
    time: np.ndarray,
    side: np.ndarray,
    source: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    decays: np.ndarray,
    sources: int,
) -> np.ndarray: ...
