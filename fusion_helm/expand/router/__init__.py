"""A router role's objects: the endpoint picker (RBAC, configuration, Service, Deployment), the
InferencePool it serves, the served models, and the Gateway and HTTPRoute in front; and on a
prefill/decode service, the sidecar the router puts on the decoders' serving pods (``sidecar``).

Every object names the pool's API group the same way (docs/router.md); the picker generation
(``fusion_helm.expand.generations``, chosen by the router or its pool API) decides the picker's image, flags,
configuration, RBAC and model kind. ``role`` puts them together. This package's own module imports
nothing: a stage that needs only the router's ports (``ports``) does not load the router.
"""
