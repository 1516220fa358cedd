"""Module aliases that stay for one release: ``engine.regression``, ``engine.glm``, ``engine.experiments``,
``engine.experiments_logistic`` and the old ``engine.pmt`` module, now :mod:`engine.pmt`.

An alias re-exports the names of the modules its code moved to. Code that replaces one of those
names on the old module (``mock.patch.object(engine.regression, "ssp_noise", ...)``, as
:mod:`engine.audit` does to run many noise draws through one fit, or a test's ``monkeypatch``) must
still reach the code that calls it, which now looks the name up in its own module. So an alias's
attribute writes (and deletes) are forwarded to each target module that holds that name: patching
``engine.regression.ssp_noise`` patches it where :class:`engine.pmt.PMTRidge` and
:class:`engine.pmt.DPRidge` look it up, exactly as before the move.
"""

from __future__ import annotations

import sys
import types

__all__ = ["forward_attribute_writes"]


class _ForwardingModule(types.ModuleType):
    """A module whose attribute writes also reach the same names in its target modules."""

    def __setattr__(self, name, value):
        for target in self.__dict__.get("_forward_targets", ()):
            if name in vars(target):
                setattr(target, name, value)
        super().__setattr__(name, value)

    def __delattr__(self, name):
        for target in self.__dict__.get("_forward_targets", ()):
            if name in vars(target):
                delattr(target, name)
        super().__delattr__(name)


def forward_attribute_writes(module_name: str, targets) -> None:
    """Make ``sys.modules[module_name]`` forward attribute writes to ``targets`` (modules).

    Uses the documented ``module.__class__`` assignment (Python data model, "Customizing module
    attribute access"); the module's contents and identity are unchanged.
    """
    module = sys.modules[module_name]
    module.__class__ = _ForwardingModule
    module.__dict__["_forward_targets"] = tuple(targets)
