"""Pure expansion: an InferenceService model → the Kubernetes objects that serve it (``stages``: the
table of what each feature makes, in order).

Generated objects may share unchanged sub-structures (a role's pod spec is the same object in all its
replicas): treat the result as read-only.
"""

from fusion_helm.expand.stages import expand

__all__ = ["expand"]
