# cython: language_level=3
"""numpy copies of C++ vectors, for the compiled modules of `envs.data`."""

import numpy as np

from libc.string cimport memcpy
from libcpp.vector cimport vector


cdef inline object i64_array(vector[long long]& values):
    """A numpy int64 copy of ``values``."""
    out = np.empty(values.size(), dtype=np.int64)
    cdef long long[::1] view = out
    if values.size():
        memcpy(&view[0], values.data(), values.size() * sizeof(long long))
    return out


cdef inline object i8_array(vector[signed char]& values):
    """A numpy int8 copy of ``values``."""
    out = np.empty(values.size(), dtype=np.int8)
    cdef signed char[::1] view = out
    if values.size():
        memcpy(&view[0], values.data(), values.size())
    return out
