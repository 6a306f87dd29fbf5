"""The one place YAML comes in and goes out: Helm's multi-document stream as a list of Documents.

Documents read from the stream keep their exact text, so what no filter replaces is written back
byte for byte, ``# Source:`` comments and all; they are parsed only as far as a filter asks, and read
as Go's ``sigs.k8s.io/yaml`` (Helm's and kubectl's reader) reads them. Documents a filter generates
are dumped from data so that every reader reads them back as meant, and inherit their parent's
origin: Helm 3's ``# Source:`` comment and Helm 4's file annotation.
"""

from typing import Any

from fusion_helm.kio.construct import ReadError, compose, construct
from fusion_helm.kio.document import FILENAME_ANNOTATION, Document, read_documents, write_documents
from fusion_helm.kio.keys import ObjectKey, latest_by_key, object_key
from fusion_helm.kio.write import dump


def load(text: str) -> Any:
    """One YAML document as data, read as Go reads it; ValueError naming the problem."""
    import yaml

    try:
        return construct(compose(text))
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ValueError(f"{error.problem}{at}") from None
    except yaml.YAMLError as error:
        raise ValueError(str(error)) from None
    except ReadError as error:
        raise ValueError(f"{error.field}: {error.message}" if error.path else error.message) from None


__all__ = ["FILENAME_ANNOTATION", "Document", "ObjectKey", "dump", "latest_by_key", "load", "object_key",
           "read_documents", "write_documents"]
