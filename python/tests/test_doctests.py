"""The examples in the docstrings (the extension's functions and the package's modules) run."""

from __future__ import annotations

import doctest
import importlib

import pytest

import wavelane
from wavelane import _wavelane

MODULES = ["wavelane", "wavelane.numcodecs", "wavelane.zarr3", "wavelane.dask"]


@pytest.mark.parametrize("name", ["encode", "decode", "info", "encode_file"])
def test_extension_docstring_examples(name):
    function = getattr(_wavelane, name)
    tests = doctest.DocTestFinder().find(function, name, globs={})
    examples = sum(len(t.examples) for t in tests)
    assert examples >= 2, f"{name} has no docstring examples"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for t in tests:
        runner.run(t)
    assert runner.failures == 0


@pytest.mark.parametrize("name", MODULES)
def test_module_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} has no docstring examples"
    assert result.failed == 0


def test_the_package_is_typed():
    from importlib.resources import files

    root = files(wavelane)
    assert root.joinpath("py.typed").is_file()
    assert root.joinpath("_wavelane.pyi").is_file()
