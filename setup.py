"""Builds the compiled order book (envs/book.pyx); everything else is in pyproject.toml."""

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
setup(ext_modules=cythonize([book], compiler_directives={"language_level": "3"}))
