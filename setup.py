"""Builds the compiled order book (envs/book.pyx) and the tabular learners' kernels
(agents/_kernels.pyx); everything else is in pyproject.toml."""

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

book = Extension(
    "envs.book",
    ["envs/book.pyx"],
    language="c++",
    include_dirs=[numpy.get_include()],
    define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    extra_compile_args=["-O3"],
)
kernels = Extension(
    "agents._kernels",
    ["agents/_kernels.pyx"],
    include_dirs=[numpy.get_include()],
    define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    # no fused multiply-add: the kernel must round like the Python learners it stands for
    extra_compile_args=["-O3", "-ffp-contract=off"],
)
directives = {"language_level": "3"}
# the generated C and C++ go under build/ (ignored), not next to the .pyx files
setup(ext_modules=cythonize([book, kernels], compiler_directives=directives, build_dir="build"))
