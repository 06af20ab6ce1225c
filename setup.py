"""Builds the engine's compiled core, game.engine._core, from game/engine/core/core.c.

The project runs from its folder and is not installed as a package: ``make install`` builds the
extension in place (``python setup.py build_ext --inplace``) with the machine's C compiler. Without
it the engine falls back to its pure-Python search (docs/engine.md, "The compiled core").
"""

import platform

from setuptools import Extension, setup

FLAGS = ["-O3", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-missing-field-initializers"]
if platform.machine() in ("x86_64", "AMD64"):
    FLAGS.append("-mpopcnt")  # every x86-64 processor of the last fifteen years; counts pieces in one instruction

setup(
    name="checkers-engine-core",
    version="1.0",
    py_modules=[],
    ext_modules=[
        Extension("game.engine._core", sources=["game/engine/core/core.c"], extra_compile_args=FLAGS),
    ],
)
