"""Fetch structures: nested lists, tuples, dicts and namedtuples of graph elements, mirrored
in what ``Session.run`` returns (TF's session.py ``_FetchMapper``)."""
import numpy as np


class FetchMapper:
    """The unique graph elements of a (nested) fetch, and how to rebuild its structure from their values."""

    def __init__(self, graph, fetches):
        self.graph = graph
        self.elements = []      # unique graph elements, in first-seen order
        self._index = {}
        self.template = self._map(fetches)

    def _element(self, fetch):
        if fetch is None:
            raise TypeError("Fetch argument None has invalid type <class 'NoneType'>")
        try:
            el = self.graph.as_graph_element(fetch)
        except TypeError:
            raise TypeError(f"Fetch argument {fetch!r} has invalid type {type(fetch)}, must be a "
                            f"string or Tensor. (Can not convert a {type(fetch).__name__} into a "
                            f"Tensor or Operation.)") from None
        except (KeyError, ValueError) as e:
            raise ValueError(f"Fetch argument {fetch!r} cannot be interpreted as a Tensor. ({e})") from None
        i = self._index.get(el)
        if i is None:
            i = self._index[el] = len(self.elements)
            self.elements.append(el)
        return i

    def _map(self, f):
        if isinstance(f, (list,)):
            return ("list", [self._map(x) for x in f])
        if isinstance(f, tuple) and hasattr(f, "_fields"):
            return ("namedtuple", type(f), [self._map(x) for x in f])
        if isinstance(f, tuple):
            return ("tuple", [self._map(x) for x in f])
        if isinstance(f, dict):
            return ("dict", type(f), [(k, self._map(v)) for k, v in f.items()])
        return ("el", self._element(f))

    def build(self, values, template=None):
        t = self.template if template is None else template
        kind = t[0]
        if kind == "el":
            v = values[t[1]]   # a scalar is fetched as a NumPy scalar (np.float32(1.0)), a string as bytes, as in TF
            return v[()] if type(v) is np.ndarray and v.ndim == 0 else v
        if kind == "list":
            return [self.build(values, x) for x in t[1]]
        if kind == "tuple":
            return tuple(self.build(values, x) for x in t[1])
        if kind == "namedtuple":
            return t[1](*[self.build(values, x) for x in t[2]])
        d = t[1]()
        for k, v in t[2]:
            d[k] = self.build(values, v)
        return d
