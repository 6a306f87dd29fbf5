"""An object's metadata as the API server checks it: the name the expansion builds on, the namespace,
and labels and annotations, which every generated object carries on."""

from __future__ import annotations

from collections.abc import Mapping

from fusion_helm.errors import InvalidSpec, key_path, show

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_NAME = 63
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_ALNUM = _LOWER | frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_LABEL_CHARS = _ALNUM | frozenset("-_.")
MAX_ANNOTATIONS_BYTES = 256 * 1024


def check_dns_label(where: str, path: str, name: object) -> str:
    """NAME, which object names the expansion builds on: it must be a DNS label."""
    if not isinstance(name, str) or len(name) > MAX_NAME or not is_dns_label(name):
        raise InvalidSpec(where, path, f"must be a DNS label (at most {MAX_NAME} lowercase letters, digits and '-'), "
                                       f"got {show(name)}")
    return name


def check_metadata(where: str, metadata: object, annotations: bool = False) -> Mapping[str, Any]:
    """metadata as the API server would take it: a namespace that is a DNS label, labels (and, with
    ANNOTATIONS, annotations) of valid keys and string values. The name is checked by the caller."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise InvalidSpec(where, "metadata", f"must be an object, got {show(metadata)}")
    namespace = metadata.get("namespace")
    if namespace is not None:
        check_dns_label(where, "metadata.namespace", namespace)
    check_labels_and_annotations(where, "metadata", metadata, annotations)
    return metadata


def check_labels_and_annotations(where: str, path: str, metadata: Mapping[str, Any], annotations: bool = True
                                 ) -> None:
    """The labels (and, with ANNOTATIONS, the annotations) of METADATA at PATH as the API server checks
    an object's: valid keys, label values, string values, annotations' total size."""
    check_label_map(where, f"{path}.labels", metadata.get("labels"))
    if annotations:
        check_annotation_map(where, f"{path}.annotations", metadata.get("annotations"))


def check_annotation_map(where: str, path: str, value: object) -> None:
    """VALUE at PATH as the API server checks an object's annotations: valid keys, string values, and
    their total size."""
    notes = _string_map(where, path, value)
    for key in notes:
        _check_key(where, path, key)
    if sum(len(key.encode()) + len(value.encode()) for key, value in notes.items()) > MAX_ANNOTATIONS_BYTES:
        raise InvalidSpec(where, path, f"must total at most {MAX_ANNOTATIONS_BYTES} bytes")


def check_label_map(where: str, path: str, value: object) -> None:
    """VALUE at PATH as the API server checks labels (or a label selector's matchLabels): valid keys
    and label values."""
    for key, item in _string_map(where, path, value).items():
        _check_key(where, path, key)
        if len(item) > MAX_NAME or not (item == "" or _is_name(item, _ALNUM, _LABEL_CHARS)):
            raise InvalidSpec(where, key_path(path, key),
                              f"must be a label value (at most {MAX_NAME} letters, digits, '-', '_' and '.', "
                              f"beginning and ending with a letter or digit), got {show(item)}")


def _string_map(where: str, path: str, value: object) -> Mapping[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidSpec(where, path, f"must be a map of strings, got {show(value)}")
    for key, item in value.items():
        if not isinstance(item, str):
            raise InvalidSpec(where, key_path(path, key), f"must be a string, got {show(item)}")
    return value


def _check_key(where: str, path: str, key: str) -> None:
    """A qualified name: an optional DNS subdomain prefix and '/', then a name part of at most 63."""
    prefix, _, name = key.rpartition("/")
    if (prefix and (len(prefix) > 253 or not all(is_dns_label(part) for part in prefix.split(".")))) \
            or len(name) > MAX_NAME or not _is_name(name, _ALNUM, _LABEL_CHARS):
        raise InvalidSpec(where, path, f"key {show(key)} is not a valid label or annotation key "
                                       "([prefix/]name, the name at most 63 letters, digits, '-', '_' and '.')")


def is_dns_label(text: str) -> bool:
    """Lowercase letters, digits and '-', starting and ending with a letter or digit (RFC 1123)."""
    return _is_name(text, _LOWER, _LOWER | {"-"})


def _is_name(text: str, ends: frozenset[str], chars: frozenset[str]) -> bool:
    return bool(text) and text[0] in ends and text[-1] in ends and chars.issuperset(text)
