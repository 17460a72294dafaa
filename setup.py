"""Package layout only; all metadata lives in pyproject.toml.

The top-level folders ``kernels/``, ``collectors/`` and ``migrations/`` install
as ``benchdb.kernels``, ``benchdb.collectors`` and ``benchdb.migrations``:
PyPI already has unrelated top-level ``kernels`` and ``collectors`` packages,
so the distribution claims the single import name ``benchdb``.  The package
list is computed so that new subpackages need no edit here.
"""

from setuptools import find_packages, setup

ALIASES = {
    "kernels": "benchdb.kernels",
    "collectors": "benchdb.collectors",
    "migrations": "benchdb.migrations",
}

packages = find_packages(include=["benchdb", "benchdb.*"])
package_dir = {"benchdb": "benchdb"}
for folder, name in ALIASES.items():
    package_dir[name] = folder
    packages += [name, *(f"{name}.{sub}" for sub in find_packages(folder))]

setup(packages=packages, package_dir=package_dir)
