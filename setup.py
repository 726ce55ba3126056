"""Builds the compiled order book (envs/simulator/book.pyx), the market's step and background flow
(envs/simulator/flow.pyx), a replay's messages (envs/simulator/replayer.pyx), a learned flow's
state, kernels and sampler (envs/simulator/learned_flow/*.pyx), the seats' features
(envs/simulator/observation.pyx), the traders' random draws (envs/simulator/draws.pyx), the data
readers' text scanning and tape building (envs/data/text.pyx, envs/data/builder.pyx) and the tabular
learners' kernels (agents/_kernels.pyx); everything else is in pyproject.toml. The modules are named
as installed (``tradearena.envs.simulator.book``, ...); Cython finds their .pxd files through
build/namespace/tradearena, links to the top-level folders. Cython and the compiler run on every
core; a module whose sources did not change since it was built in place (``setup.py build_ext
--inplace``, what ``make`` runs) is not built again, by that command or by a later ``pip install -e
.``."""

import os
import shutil
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

NAMESPACE = Path("build/namespace")


def namespace() -> Path:
    """build/namespace/tradearena/{agents,envs,evaluation}: links to the folders, so that
    ``cimport tradearena.envs.simulator.book`` finds envs/simulator/book.pxd."""
    root = NAMESPACE / "tradearena"
    root.mkdir(parents=True, exist_ok=True)
    for folder in ("agents", "envs", "evaluation"):
        link = root / folder
        if not link.is_symlink():
            link.symlink_to(Path("../../..") / folder)
    return NAMESPACE


def compiled(module: str, language: str = "c++") -> Extension:
    """The extension ``tradearena.<folder>...`` built from ``<folder>/...pyx``. No fused
    multiply-add: compiled code must round as the numpy and Python code it stands for (and is
    tested against)."""
    return Extension(
        module,
        [module.removeprefix("tradearena.").replace(".", "/") + ".pyx"],
        language=language,
        include_dirs=[numpy.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=["-O3", "-ffp-contract=off"],
        depends=["setup.py"],  # its flags: a change here builds every module again
    )


extensions = [
    compiled("tradearena.envs.simulator.book"),
    compiled("tradearena.envs.simulator.flow"),
    compiled("tradearena.envs.simulator.observation"),
    compiled("tradearena.envs.simulator.seat_response"),
    compiled("tradearena.envs.simulator.replayer"),
    compiled("tradearena.envs.simulator.learned_flow.state"),
    compiled("tradearena.envs.simulator.learned_flow.kernels"),
    compiled("tradearena.envs.simulator.learned_flow.sampler"),
    compiled("tradearena.envs.data.text"),
    compiled("tradearena.envs.data.builder"),
    compiled("tradearena.envs.simulator.draws", language="c"),
    compiled("tradearena.agents._kernels", language="c"),
]


class IncrementalBuildExt(build_ext):
    """build_ext that takes a module built in place, when it is newer than its generated C or
    C++ and its other sources, instead of compiling it again."""

    def build_extension(self, ext: Extension) -> None:
        package, _, name = ext.name.rpartition(".")
        folder = self.get_finalized_command("build_py").get_package_dir(package)
        built = Path(folder) / Path(self.get_ext_filename(name)).name  # where --inplace puts it
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
        extensions,
        compiler_directives=directives,
        build_dir="build",
        nthreads=cores,
        include_path=[str(namespace())],
    ),
    cmdclass={"build_ext": IncrementalBuildExt},
    options={"build_ext": {"parallel": cores}},
)
