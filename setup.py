"""Builds the compiled order book (envs/book.pyx), the market's step and background flow
(envs/flow.pyx), a replay's messages (envs/replayer.pyx), the seats' features
(envs/observation.pyx), the traders' random draws
(envs/draws.pyx), the data readers' text scanning and tape building (envs/data/text.pyx,
envs/data/builder.pyx) and the tabular learners' kernels (agents/_kernels.pyx); everything
else is in pyproject.toml."""

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup


def compiled(module: str, language: str = "c++") -> Extension:
    """The extension built from ``module``'s .pyx. No fused multiply-add: compiled code must
    round as the numpy and Python code it stands for (and is tested against)."""
    return Extension(
        module,
        [module.replace(".", "/") + ".pyx"],
        language=language,
        include_dirs=[numpy.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=["-O3", "-ffp-contract=off"],
    )


extensions = [
    compiled("envs.book"),
    compiled("envs.flow"),
    compiled("envs.observation"),
    compiled("envs.replayer"),
    compiled("envs.data.text"),
    compiled("envs.data.builder"),
    compiled("envs.draws", language="c"),
    compiled("agents._kernels", language="c"),
]
directives = {"language_level": "3"}
# the generated C and C++ go under build/ (ignored), not next to the .pyx files
setup(ext_modules=cythonize(extensions, compiler_directives=directives, build_dir="build"))
