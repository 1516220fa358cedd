"""The scikit-learn estimator API of the PMT-family estimators, without importing scikit-learn.

``import sklearn`` costs about 1 s of start-up (it imports ``scipy.stats`` and more), which was
most of a ``python -m engine pmt ...`` start-up although a sweep never calls scikit-learn. The
estimators only need its conventions, so this module provides them with the standard library:

- :class:`BaseEstimator`: ``get_params`` / ``set_params`` (nested ``a__b`` keys), a ``repr`` of
  the parameters that differ from their defaults, and ``__sklearn_tags__`` (built by
  scikit-learn's own classes, imported only when scikit-learn asks for them);
  ``sklearn.base.clone`` works on it unchanged (it falls back to ``get_params``);
- :class:`RegressorMixin` / :class:`ClassifierMixin`: ``score`` as scikit-learn's (R^2 /
  accuracy, computed by ``sklearn.metrics``, imported on the first call) and the estimator type;
- :func:`check_is_fitted` and :class:`NotFittedError` (a ``ValueError`` and an ``AttributeError``,
  as scikit-learn's).

Behaviour follows scikit-learn 1.9's ``sklearn.base`` (the parameter names come from the
signature of ``__init__``; ``*args`` is refused). Nothing here imports scikit-learn at import time.
"""

from __future__ import annotations

import inspect
from collections import defaultdict

__all__ = ["BaseEstimator", "RegressorMixin", "ClassifierMixin", "NotFittedError", "check_is_fitted"]


class NotFittedError(ValueError, AttributeError):
    """Raised when an estimator is used before ``fit`` (as ``sklearn.exceptions.NotFittedError``)."""


class BaseEstimator:
    """Parameters as in scikit-learn: every ``__init__`` argument is stored under its own name."""

    @classmethod
    def _get_param_names(cls) -> list[str]:
        init = cls.__init__
        if init is object.__init__:
            return []
        params = [p for p in inspect.signature(init).parameters.values()
                  if p.name != "self" and p.kind != p.VAR_KEYWORD]
        for p in params:
            if p.kind == p.VAR_POSITIONAL:
                raise RuntimeError(f"estimators should not take *args in __init__; {cls.__name__} does")
        return sorted(p.name for p in params)

    def get_params(self, deep: bool = True) -> dict:
        """The ``__init__`` parameters and their values (``deep``: also those of estimator-valued ones)."""
        out = {}
        for key in self._get_param_names():
            value = getattr(self, key)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                out.update((f"{key}__{k}", v) for k, v in value.get_params().items())
            out[key] = value
        return out

    def set_params(self, **params):
        """Set parameters (``name`` or nested ``name__sub``); returns ``self``.

        Raises
        ------
        ValueError
            For a name that is not a parameter (lists the valid ones).
        """
        if not params:
            return self
        valid = self.get_params(deep=True)
        nested = defaultdict(dict)
        for key, value in params.items():
            key, delim, sub = key.partition("__")
            if key not in valid:
                raise ValueError(f"Invalid parameter {key!r} for estimator {type(self).__name__}. "
                                 f"Valid parameters are: {sorted(self._get_param_names())!r}.")
            if delim:
                nested[key][sub] = value
            else:
                setattr(self, key, value)
                valid[key] = value
        for key, sub in nested.items():
            valid[key].set_params(**sub)
        return self

    def __repr__(self) -> str:
        defaults = {name: p.default for name, p in inspect.signature(type(self).__init__).parameters.items()}
        changed = []
        for key, value in self.get_params(deep=False).items():
            default = defaults.get(key, inspect.Parameter.empty)
            try:
                same = default is value or (type(default) is type(value) and bool(default == value))
            except (TypeError, ValueError):  # arrays and the like: print them
                same = False
            if not same:
                changed.append(f"{key}={value!r}")
        return f"{type(self).__name__}({', '.join(changed)})"

    def __sklearn_tags__(self):
        from sklearn.utils import Tags, TargetTags

        return Tags(estimator_type=None, target_tags=TargetTags(required=False), transformer_tags=None,
                    regressor_tags=None, classifier_tags=None)


class RegressorMixin:
    """``score`` = R^2 of ``predict(X)`` (``sklearn.metrics.r2_score``); estimator type "regressor"."""

    _estimator_type = "regressor"

    def __sklearn_tags__(self):
        from sklearn.utils import RegressorTags

        tags = super().__sklearn_tags__()
        tags.estimator_type = "regressor"
        tags.regressor_tags = RegressorTags()
        tags.target_tags.required = True
        return tags

    def score(self, X, y, sample_weight=None) -> float:
        """Coefficient of determination R^2 of ``self.predict(X)`` against ``y``."""
        from sklearn.metrics import r2_score

        return float(r2_score(y, self.predict(X), sample_weight=sample_weight))


class ClassifierMixin:
    """``score`` = accuracy of ``predict(X)`` (``sklearn.metrics.accuracy_score``); type "classifier"."""

    _estimator_type = "classifier"

    def __sklearn_tags__(self):
        from sklearn.utils import ClassifierTags

        tags = super().__sklearn_tags__()
        tags.estimator_type = "classifier"
        tags.classifier_tags = ClassifierTags()
        tags.target_tags.required = True
        return tags

    def score(self, X, y, sample_weight=None) -> float:
        """Mean accuracy of ``self.predict(X)`` against ``y``."""
        from sklearn.metrics import accuracy_score

        return float(accuracy_score(y, self.predict(X), sample_weight=sample_weight))


def check_is_fitted(estimator, attributes) -> None:
    """Raise :class:`NotFittedError` unless ``estimator`` has every attribute in ``attributes`` (str or list)."""
    names = [attributes] if isinstance(attributes, str) else list(attributes)
    if not all(hasattr(estimator, a) for a in names):
        raise NotFittedError(f"This {type(estimator).__name__} instance is not fitted yet. Call 'fit' with "
                             "appropriate arguments before using this estimator.")
