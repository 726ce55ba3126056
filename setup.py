"""Builds the compiled order book (envs/book.pyx), the market's step and background flow
(envs/flow.pyx), a replay's messages (envs/replayer.pyx), the seats' features
(envs/observation.pyx), the traders' random draws
(envs/draws.pyx), the data readers' text scanning and tape building (envs/data/text.pyx,
envs/data/builder.pyx) and the tabular learners' kernels (agents/_kernels.pyx); everything
else is in pyproject.toml. Cython and the compiler run on every core; a module whose sources
did not change since it was built in place (``setup.py build_ext --inplace``, what ``make``
runs) is not built again, by that command or by a later ``pip install -e .``."""

import os
import shutil
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


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
        depends=["setup.py"],  # its flags: a change here builds every module again
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


class IncrementalBuildExt(build_ext):
    """build_ext that takes a module built in place, when it is newer than its generated C or
    C++ and its other sources, instead of compiling it again."""

    def build_extension(self, ext: Extension) -> None:
        built = Path(self.get_ext_filename(ext.name))  # in place: the packages are at the top
        sources = [*ext.sources, *ext.depends]
        if built.exists() and all(os.path.getmtime(s) < built.stat().st_mtime for s in sources):
            target = Path(self.get_ext_fullpath(ext.name))
            if target.resolve() != built.resolve():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(built, target)
            return
        super().build_extension(ext)


directives = {"language_level": "3"}
cores = os.cpu_count() or 1
# the generated C and C++ go under build/ (ignored), not next to the .pyx files
setup(
    ext_modules=cythonize(
        extensions, compiler_directives=directives, build_dir="build", nthreads=cores
    ),
    cmdclass={"build_ext": IncrementalBuildExt},
    options={"build_ext": {"parallel": cores}},
)
