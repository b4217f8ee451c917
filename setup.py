"""The compiled modules (Cython, built at install with the machine's C compiler); everything
else about the package is in pyproject.toml."""

from Cython.Build import cythonize
from setuptools import Extension, setup

setup(ext_modules=cythonize([
    Extension("aidopt._smo_pairs", ["aidopt/_smo_pairs.pyx"]),
    Extension("aidopt.decomposition._kernel_loops", ["decomposition/_kernel_loops.pyx"]),
], compiler_directives={"language_level": 3}))
