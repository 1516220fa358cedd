"""The uploaded file as the engine's CSV reader takes it (no Streamlit): a name and the bytes."""

from __future__ import annotations


class Named:
    """A minimal file-like wrapper so the engine's CSV reader keeps the upload's name.

    Examples
    --------
    >>> f = Named("mine.csv", b"x,y\\n1,2\\n")
    >>> f.name, f.size, f.read()[:3]
    ('mine.csv', 8, b'x,y')
    """

    def __init__(self, name: str, data: bytes):
        self.name, self._data, self.size = name, data, len(data)

    def read(self, *_):
        return self._data
