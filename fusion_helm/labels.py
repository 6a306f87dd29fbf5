"""The labels the expansion puts on generated objects and their pods (standard library only: the
status hook reads them inside a stock Python image)."""

LABEL_SERVICE = "fusioninfer.io/service"
LABEL_COMPONENT_TYPE = "fusioninfer.io/component-type"
LABEL_ROLE_NAME = "fusioninfer.io/role-name"
LABEL_REPLICA_INDEX = "fusioninfer.io/replica-index"
LABEL_SPEC_HASH = "fusioninfer.io/spec-hash"
LABEL_GROUP_INDEX = "leaderworkerset.sigs.k8s.io/group-index"
"""LWS labels each group's pods with the group's index: in the role layout, the replica's index."""
