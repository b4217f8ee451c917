"""The compiled modules (Cython, built at install with the machine's C compiler); everything
else about the package is in pyproject.toml."""

from Cython.Build import cythonize
from setuptools import Extension, setup

setup(ext_modules=cythonize([
    Extension("aidopt.numerics._smo_pairs", ["aidopt/numerics/_smo_pairs.pyx"]),
    Extension("aidopt.numerics._dcd_pass", ["aidopt/numerics/_dcd_pass.pyx"]),
    Extension("aidopt.decomposition.plugins._kernel_loops", ["decomposition/plugins/_kernel_loops.pyx"]),
], compiler_directives={"language_level": 3}))
