"""Generated from fusion_helm/model/schemas/inferenceservice.v1alpha1.yaml by `make generate` (fusion_helm.schemagen); do not edit."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SOURCE: dict[str, Any] = {'group': 'fusioninfer.io',
 'version': 'v1alpha1',
 'kind': 'InferenceService',
 'plural': 'inferenceservices',
 'singular': 'inferenceservice',
 'shortNames': ['fisvc'],
 'printerColumns': [{'name': 'Roles', 'type': 'string', 'jsonPath': '.spec.roles[*].name'},
                    {'name': 'Ready',
                     'type': 'string',
                     'jsonPath': '.status.conditions[?(@.type=="Ready")].status'},
                    {'name': 'Age', 'type': 'date', 'jsonPath': '.metadata.creationTimestamp'}],
 'spec': {'type': 'object',
          'description': 'The desired serving topology.',
          'required': ['roles'],
          'properties': {'roles': {'type': 'array',
                                   'description': 'Logical components of the inference topology, each a user-named '
                                                  'role.',
                                   'minItems': 1,
                                   'items': {'type': 'object',
                                             'required': ['name', 'componentType'],
                                             'properties': {'name': {'type': 'string',
                                                                     'description': 'Unique name of the role; part '
                                                                                    "of every generated object's "
                                                                                    'name.',
                                                                     'minLength': 1,
                                                                     'maxLength': 63,
                                                                     'pattern': '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'},
                                                            'componentType': {'type': 'string',
                                                                              'description': 'worker (monolithic), '
                                                                                             'prefiller, decoder, '
                                                                                             'router (the Gateway '
                                                                                             'API Inference '
                                                                                             "Extension's endpoint "
                                                                                             'picker and routing '
                                                                                             'objects) or frontend '
                                                                                             '(a router of the '
                                                                                             "engines' own, such "
                                                                                             "as SGLang's, as a "
                                                                                             'Deployment that '
                                                                                             'finds the serving '
                                                                                             'pods itself: see '
                                                                                             'frontend).',
                                                                              'enum': ['worker',
                                                                                       'prefiller',
                                                                                       'decoder',
                                                                                       'router',
                                                                                       'frontend']},
                                                            'replicas': {'type': 'integer',
                                                                         'format': 'int32',
                                                                         'description': 'Serving instances of the '
                                                                                        'role (default 1, at most '
                                                                                        '10000; not on a router; a '
                                                                                        "frontend's pods, default "
                                                                                        '2): in layout replica one '
                                                                                        'LeaderWorkerSet each, in '
                                                                                        'role and disaggregated '
                                                                                        "the groups of the role's "
                                                                                        'LeaderWorkerSet.',
                                                                         'minimum': 0,
                                                                         'maximum': 10000},
                                                            'rollout': {'type': 'object',
                                                                        'description': 'Layouts role and '
                                                                                       'disaggregated: how a '
                                                                                       'template change rolls '
                                                                                       "through the role's groups "
                                                                                       "(its LeaderWorkerSet's "
                                                                                       'rolloutStrategy.rollingUpdateConfiguration, '
                                                                                       'rolled by the LWS '
                                                                                       'controller; in layout '
                                                                                       'disaggregated the '
                                                                                       "DisaggregatedSet role's, "
                                                                                       'rolled with the other '
                                                                                       'roles as one revision).',
                                                                        'properties': {'maxUnavailable': {'description': 'Groups '
                                                                                                                         '(replicas) '
                                                                                                                         'that '
                                                                                                                         'may '
                                                                                                                         'be '
                                                                                                                         'down '
                                                                                                                         'during '
                                                                                                                         'the '
                                                                                                                         'rollout: '
                                                                                                                         'a '
                                                                                                                         'count '
                                                                                                                         '(>= '
                                                                                                                         '0) '
                                                                                                                         'or '
                                                                                                                         'a '
                                                                                                                         'percentage '
                                                                                                                         '("25%", '
                                                                                                                         'at '
                                                                                                                         'most '
                                                                                                                         '100%) '
                                                                                                                         'of '
                                                                                                                         'the '
                                                                                                                         'replicas, '
                                                                                                                         'rounded '
                                                                                                                         'down '
                                                                                                                         '(default '
                                                                                                                         '1; '
                                                                                                                         'layout '
                                                                                                                         'disaggregated '
                                                                                                                         '0). '
                                                                                                                         'Not '
                                                                                                                         '0 '
                                                                                                                         'together '
                                                                                                                         'with '
                                                                                                                         'maxSurge '
                                                                                                                         '0.',
                                                                                                          'x-kubernetes-int-or-string': True,
                                                                                                          'anyOf': [{'type': 'integer'},
                                                                                                                    {'type': 'string'}]},
                                                                                       'maxSurge': {'description': 'Extra '
                                                                                                                   'groups '
                                                                                                                   'created '
                                                                                                                   'during '
                                                                                                                   'the '
                                                                                                                   'rollout: '
                                                                                                                   'a '
                                                                                                                   'count '
                                                                                                                   '(>= '
                                                                                                                   '0) '
                                                                                                                   'or '
                                                                                                                   'a '
                                                                                                                   'percentage '
                                                                                                                   '(at '
                                                                                                                   'most '
                                                                                                                   '100%) '
                                                                                                                   'of '
                                                                                                                   'the '
                                                                                                                   'replicas, '
                                                                                                                   'rounded '
                                                                                                                   'up '
                                                                                                                   '(default '
                                                                                                                   '0; '
                                                                                                                   'layout '
                                                                                                                   'disaggregated '
                                                                                                                   '1). '
                                                                                                                   'Each '
                                                                                                                   'is '
                                                                                                                   'placed '
                                                                                                                   'whole, '
                                                                                                                   'as '
                                                                                                                   'capacity '
                                                                                                                   'allows '
                                                                                                                   '(it '
                                                                                                                   'is '
                                                                                                                   'never '
                                                                                                                   'in '
                                                                                                                   'the '
                                                                                                                   "gang's "
                                                                                                                   'atomic '
                                                                                                                   'minimum).',
                                                                                                    'x-kubernetes-int-or-string': True,
                                                                                                    'anyOf': [{'type': 'integer'},
                                                                                                              {'type': 'string'}]},
                                                                                       'partition': {'type': 'integer',
                                                                                                     'format': 'int32',
                                                                                                     'description': 'Layout '
                                                                                                                    'role: '
                                                                                                                    'groups '
                                                                                                                    'with '
                                                                                                                    'an '
                                                                                                                    'index '
                                                                                                                    'below '
                                                                                                                    'this '
                                                                                                                    'keep '
                                                                                                                    'the '
                                                                                                                    'old '
                                                                                                                    'template '
                                                                                                                    '(a '
                                                                                                                    'canary '
                                                                                                                    'updates '
                                                                                                                    'the '
                                                                                                                    'groups '
                                                                                                                    'from '
                                                                                                                    'partition '
                                                                                                                    'up). '
                                                                                                                    'Default '
                                                                                                                    '0: '
                                                                                                                    'every '
                                                                                                                    'group. '
                                                                                                                    'A '
                                                                                                                    'DisaggregatedSet '
                                                                                                                    'has '
                                                                                                                    'none.',
                                                                                                     'minimum': 0,
                                                                                                     'maximum': 2147483647}}},
                                                            'model': {'type': 'object',
                                                                      'description': "Where the role's weights "
                                                                                     'come from (default: '
                                                                                     'spec.model). hf://ORG/NAME '
                                                                                     'at a pinned revision, '
                                                                                     'pvc://CLAIM/PATH (weights '
                                                                                     'already on a volume of the '
                                                                                     'namespace) or '
                                                                                     's3://BUCKET/PREFIX (an '
                                                                                     'S3-compatible store). With '
                                                                                     'spec.modelCache, hf:// and '
                                                                                     's3:// are fetched once per '
                                                                                     'service and revision onto '
                                                                                     'the cache volume and every '
                                                                                     'serving pod reads them from '
                                                                                     'it, hub access off; the '
                                                                                     'engine is given the local '
                                                                                     'path, and the model name '
                                                                                     'clients ask for stays what '
                                                                                     "the container's command "
                                                                                     "names (or the source's "
                                                                                     'ORG/NAME). See '
                                                                                     'docs/models.md.',
                                                                      'required': ['source'],
                                                                      'properties': {'source': {'type': 'string',
                                                                                                'description': 'hf://ORG/NAME, '
                                                                                                               'pvc://CLAIM/PATH '
                                                                                                               'or '
                                                                                                               's3://BUCKET/PREFIX.',
                                                                                                'pattern': '^(hf://[A-Za-z0-9][-A-Za-z0-9_.]*/[A-Za-z0-9][-A-Za-z0-9_.]*|pvc://[a-z0-9]([-a-z0-9.]*[a-z0-9])?(/[^/\\x00]+)*/?|s3://[a-z0-9][-a-z0-9.]{1,61}[a-z0-9](/[^\\x00]*)?)$',
                                                                                                'maxLength': 1024},
                                                                                     'revision': {'type': 'string',
                                                                                                  'description': 'hf://: '
                                                                                                                 'the '
                                                                                                                 'commit '
                                                                                                                 '(40 '
                                                                                                                 'hexadecimal '
                                                                                                                 'digits) '
                                                                                                                 'to '
                                                                                                                 'serve: '
                                                                                                                 'a '
                                                                                                                 'branch '
                                                                                                                 'would '
                                                                                                                 'move '
                                                                                                                 'under '
                                                                                                                 'a '
                                                                                                                 'running '
                                                                                                                 'service. '
                                                                                                                 's3://: '
                                                                                                                 'a '
                                                                                                                 'name '
                                                                                                                 'for '
                                                                                                                 'what '
                                                                                                                 'the '
                                                                                                                 'prefix '
                                                                                                                 'holds '
                                                                                                                 'now '
                                                                                                                 '(default '
                                                                                                                 '"current"); '
                                                                                                                 'a '
                                                                                                                 'new '
                                                                                                                 'name '
                                                                                                                 'fetches '
                                                                                                                 'it '
                                                                                                                 'again, '
                                                                                                                 'beside '
                                                                                                                 'the '
                                                                                                                 'old. '
                                                                                                                 'Not '
                                                                                                                 'for '
                                                                                                                 'pvc://.',
                                                                                                  'pattern': '^[A-Za-z0-9][-A-Za-z0-9_.]{0,127}$'},
                                                                                     'credentials': {'type': 'object',
                                                                                                     'description': 'A '
                                                                                                                    'Secret '
                                                                                                                    'of '
                                                                                                                    'the '
                                                                                                                    "service's "
                                                                                                                    'namespace '
                                                                                                                    'holding '
                                                                                                                    'the '
                                                                                                                    'credentials: '
                                                                                                                    'for '
                                                                                                                    'hf://, '
                                                                                                                    'key '
                                                                                                                    'token '
                                                                                                                    '(a '
                                                                                                                    'Hugging '
                                                                                                                    'Face '
                                                                                                                    'access '
                                                                                                                    'token); '
                                                                                                                    'for '
                                                                                                                    's3://, '
                                                                                                                    'keys '
                                                                                                                    'AWS_ACCESS_KEY_ID '
                                                                                                                    'and '
                                                                                                                    'AWS_SECRET_ACCESS_KEY. '
                                                                                                                    'Read '
                                                                                                                    'only '
                                                                                                                    'by '
                                                                                                                    'the '
                                                                                                                    'fetch '
                                                                                                                    'Job '
                                                                                                                    '(and '
                                                                                                                    'the '
                                                                                                                    'engine '
                                                                                                                    'where '
                                                                                                                    'nothing '
                                                                                                                    'is '
                                                                                                                    'cached); '
                                                                                                                    'never '
                                                                                                                    'in '
                                                                                                                    'values.',
                                                                                                     'required': ['secretName'],
                                                                                                     'properties': {'secretName': {'type': 'string',
                                                                                                                                   'minLength': 1,
                                                                                                                                   'maxLength': 253,
                                                                                                                                   'pattern': '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'}}},
                                                                                     'endpoint': {'type': 'string',
                                                                                                  'description': 'hf://: '
                                                                                                                 'a '
                                                                                                                 'hub '
                                                                                                                 "mirror's "
                                                                                                                 'URL '
                                                                                                                 '(HF_ENDPOINT; '
                                                                                                                 'default '
                                                                                                                 'the '
                                                                                                                 'Hugging '
                                                                                                                 'Face '
                                                                                                                 'hub). '
                                                                                                                 's3://: '
                                                                                                                 'the '
                                                                                                                 'S3-compatible '
                                                                                                                 "store's "
                                                                                                                 'URL '
                                                                                                                 '(default '
                                                                                                                 'AWS '
                                                                                                                 'S3 '
                                                                                                                 'of '
                                                                                                                 'region).',
                                                                                                  'pattern': '^https?://[^\\s]+$',
                                                                                                  'maxLength': 2048},
                                                                                     'region': {'type': 'string',
                                                                                                'description': 's3:// '
                                                                                                               'only '
                                                                                                               '- '
                                                                                                               'the '
                                                                                                               "bucket's "
                                                                                                               'region '
                                                                                                               '(default '
                                                                                                               'us-east-1).',
                                                                                                'pattern': '^[a-z0-9-]{1,64}$'},
                                                                                     'loadFormat': {'type': 'string',
                                                                                                    'description': 'runai_streamer: '
                                                                                                                   'the '
                                                                                                                   'engine '
                                                                                                                   'streams '
                                                                                                                   'the '
                                                                                                                   'weights '
                                                                                                                   'from '
                                                                                                                   'the '
                                                                                                                   'files '
                                                                                                                   'into '
                                                                                                                   'GPU '
                                                                                                                   'memory '
                                                                                                                   'as '
                                                                                                                   'it '
                                                                                                                   'reads '
                                                                                                                   'them '
                                                                                                                   "(vLLM's "
                                                                                                                   'and '
                                                                                                                   "SGLang's "
                                                                                                                   '--load-format; '
                                                                                                                   'the '
                                                                                                                   'image '
                                                                                                                   'needs '
                                                                                                                   'the '
                                                                                                                   'runai-model-streamer '
                                                                                                                   'package, '
                                                                                                                   'which '
                                                                                                                   "vLLM's "
                                                                                                                   'images '
                                                                                                                   'have), '
                                                                                                                   'rather '
                                                                                                                   'than '
                                                                                                                   'reading '
                                                                                                                   'each '
                                                                                                                   'file '
                                                                                                                   'whole '
                                                                                                                   'first.',
                                                                                                    'enum': ['runai_streamer']},
                                                                                     'adapters': {'type': 'array',
                                                                                                  'description': 'LoRA '
                                                                                                                 'adapters '
                                                                                                                 'of '
                                                                                                                 'this '
                                                                                                                 'model, '
                                                                                                                 'each '
                                                                                                                 'fetched '
                                                                                                                 'onto '
                                                                                                                 'spec.modelCache '
                                                                                                                 'beside '
                                                                                                                 'it '
                                                                                                                 '(hf:// '
                                                                                                                 'or '
                                                                                                                 's3://) '
                                                                                                                 'and '
                                                                                                                 'loaded '
                                                                                                                 'by '
                                                                                                                 'the '
                                                                                                                 'engine '
                                                                                                                 'at '
                                                                                                                 'start '
                                                                                                                 'under '
                                                                                                                 'its '
                                                                                                                 'name '
                                                                                                                 "(vLLM's "
                                                                                                                 '--lora-modules, '
                                                                                                                 "SGLang's "
                                                                                                                 '--lora-paths, '
                                                                                                                 'with '
                                                                                                                 '--enable-lora). '
                                                                                                                 'Needs '
                                                                                                                 'spec.modelCache.',
                                                                                                  'maxItems': 64,
                                                                                                  'items': {'type': 'object',
                                                                                                            'required': ['name',
                                                                                                                         'source'],
                                                                                                            'properties': {'name': {'type': 'string',
                                                                                                                                    'description': 'The '
                                                                                                                                                   'model '
                                                                                                                                                   'name '
                                                                                                                                                   'clients '
                                                                                                                                                   'ask '
                                                                                                                                                   'for '
                                                                                                                                                   'to '
                                                                                                                                                   'use '
                                                                                                                                                   'the '
                                                                                                                                                   'adapter.',
                                                                                                                                    'minLength': 1,
                                                                                                                                    'maxLength': 128,
                                                                                                                                    'pattern': '^[A-Za-z0-9][-A-Za-z0-9_.]*(/[A-Za-z0-9][-A-Za-z0-9_.]*)?$'},
                                                                                                                           'source': {'type': 'string',
                                                                                                                                      'description': 'hf://ORG/NAME, '
                                                                                                                                                     'pvc://CLAIM/PATH '
                                                                                                                                                     'or '
                                                                                                                                                     's3://BUCKET/PREFIX.',
                                                                                                                                      'pattern': '^(hf://[A-Za-z0-9][-A-Za-z0-9_.]*/[A-Za-z0-9][-A-Za-z0-9_.]*|pvc://[a-z0-9]([-a-z0-9.]*[a-z0-9])?(/[^/\\x00]+)*/?|s3://[a-z0-9][-a-z0-9.]{1,61}[a-z0-9](/[^\\x00]*)?)$',
                                                                                                                                      'maxLength': 1024},
                                                                                                                           'revision': {'type': 'string',
                                                                                                                                        'description': 'hf://: '
                                                                                                                                                       'the '
                                                                                                                                                       'commit '
                                                                                                                                                       '(40 '
                                                                                                                                                       'hexadecimal '
                                                                                                                                                       'digits) '
                                                                                                                                                       'to '
                                                                                                                                                       'serve: '
                                                                                                                                                       'a '
                                                                                                                                                       'branch '
                                                                                                                                                       'would '
                                                                                                                                                       'move '
                                                                                                                                                       'under '
                                                                                                                                                       'a '
                                                                                                                                                       'running '
                                                                                                                                                       'service. '
                                                                                                                                                       's3://: '
                                                                                                                                                       'a '
                                                                                                                                                       'name '
                                                                                                                                                       'for '
                                                                                                                                                       'what '
                                                                                                                                                       'the '
                                                                                                                                                       'prefix '
                                                                                                                                                       'holds '
                                                                                                                                                       'now '
                                                                                                                                                       '(default '
                                                                                                                                                       '"current"); '
                                                                                                                                                       'a '
                                                                                                                                                       'new '
                                                                                                                                                       'name '
                                                                                                                                                       'fetches '
                                                                                                                                                       'it '
                                                                                                                                                       'again, '
                                                                                                                                                       'beside '
                                                                                                                                                       'the '
                                                                                                                                                       'old. '
                                                                                                                                                       'Not '
                                                                                                                                                       'for '
                                                                                                                                                       'pvc://.',
                                                                                                                                        'pattern': '^[A-Za-z0-9][-A-Za-z0-9_.]{0,127}$'},
                                                                                                                           'credentials': {'type': 'object',
                                                                                                                                           'description': 'A '
                                                                                                                                                          'Secret '
                                                                                                                                                          'of '
                                                                                                                                                          'the '
                                                                                                                                                          "service's "
                                                                                                                                                          'namespace '
                                                                                                                                                          'holding '
                                                                                                                                                          'the '
                                                                                                                                                          'credentials: '
                                                                                                                                                          'for '
                                                                                                                                                          'hf://, '
                                                                                                                                                          'key '
                                                                                                                                                          'token '
                                                                                                                                                          '(a '
                                                                                                                                                          'Hugging '
                                                                                                                                                          'Face '
                                                                                                                                                          'access '
                                                                                                                                                          'token); '
                                                                                                                                                          'for '
                                                                                                                                                          's3://, '
                                                                                                                                                          'keys '
                                                                                                                                                          'AWS_ACCESS_KEY_ID '
                                                                                                                                                          'and '
                                                                                                                                                          'AWS_SECRET_ACCESS_KEY. '
                                                                                                                                                          'Read '
                                                                                                                                                          'only '
                                                                                                                                                          'by '
                                                                                                                                                          'the '
                                                                                                                                                          'fetch '
                                                                                                                                                          'Job '
                                                                                                                                                          '(and '
                                                                                                                                                          'the '
                                                                                                                                                          'engine '
                                                                                                                                                          'where '
                                                                                                                                                          'nothing '
                                                                                                                                                          'is '
                                                                                                                                                          'cached); '
                                                                                                                                                          'never '
                                                                                                                                                          'in '
                                                                                                                                                          'values.',
                                                                                                                                           'required': ['secretName'],
                                                                                                                                           'properties': {'secretName': {'type': 'string',
                                                                                                                                                                         'minLength': 1,
                                                                                                                                                                         'maxLength': 253,
                                                                                                                                                                         'pattern': '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'}}},
                                                                                                                           'endpoint': {'type': 'string',
                                                                                                                                        'description': 'hf://: '
                                                                                                                                                       'a '
                                                                                                                                                       'hub '
                                                                                                                                                       "mirror's "
                                                                                                                                                       'URL '
                                                                                                                                                       '(HF_ENDPOINT; '
                                                                                                                                                       'default '
                                                                                                                                                       'the '
                                                                                                                                                       'Hugging '
                                                                                                                                                       'Face '
                                                                                                                                                       'hub). '
                                                                                                                                                       's3://: '
                                                                                                                                                       'the '
                                                                                                                                                       'S3-compatible '
                                                                                                                                                       "store's "
                                                                                                                                                       'URL '
                                                                                                                                                       '(default '
                                                                                                                                                       'AWS '
                                                                                                                                                       'S3 '
                                                                                                                                                       'of '
                                                                                                                                                       'region).',
                                                                                                                                        'pattern': '^https?://[^\\s]+$',
                                                                                                                                        'maxLength': 2048},
                                                                                                                           'region': {'type': 'string',
                                                                                                                                      'description': 's3:// '
                                                                                                                                                     'only '
                                                                                                                                                     '- '
                                                                                                                                                     'the '
                                                                                                                                                     "bucket's "
                                                                                                                                                     'region '
                                                                                                                                                     '(default '
                                                                                                                                                     'us-east-1).',
                                                                                                                                      'pattern': '^[a-z0-9-]{1,64}$'}}}}}},
                                                            'autoscaling': {'type': 'object',
                                                                            'description': 'Layouts role and '
                                                                                           'disaggregated: the '
                                                                                           "role's replica count "
                                                                                           'follows a signal, '
                                                                                           'through its scale '
                                                                                           'subresource (its '
                                                                                           "LeaderWorkerSet's; in "
                                                                                           'layout disaggregated '
                                                                                           'its '
                                                                                           "DisaggregatedSetRoleScaler's), "
                                                                                           'in whole replicas; '
                                                                                           'replicas is then the '
                                                                                           "autoscaler's (leave it "
                                                                                           'out of the role). With '
                                                                                           'prometheus (or '
                                                                                           'triggers), a KEDA '
                                                                                           'ScaledObject on the '
                                                                                           'LLM signals the router '
                                                                                           'and engines report '
                                                                                           '(docs/autoscaling.md); '
                                                                                           'with metrics, or '
                                                                                           'neither, a '
                                                                                           'HorizontalPodAutoscaler '
                                                                                           '(autoscaling/v2).',
                                                                            'required': ['maxReplicas'],
                                                                            'properties': {'minReplicas': {'type': 'integer',
                                                                                                           'format': 'int32',
                                                                                                           'description': 'Fewest '
                                                                                                                          'replicas '
                                                                                                                          '(default '
                                                                                                                          '1). '
                                                                                                                          '0 '
                                                                                                                          '- '
                                                                                                                          'the '
                                                                                                                          'role '
                                                                                                                          'stands '
                                                                                                                          'at '
                                                                                                                          'zero '
                                                                                                                          'while '
                                                                                                                          'idle '
                                                                                                                          '- '
                                                                                                                          'needs '
                                                                                                                          'KEDA '
                                                                                                                          '(prometheus '
                                                                                                                          'or '
                                                                                                                          'triggers) '
                                                                                                                          'and, '
                                                                                                                          'on '
                                                                                                                          'a '
                                                                                                                          'routed '
                                                                                                                          'role, '
                                                                                                                          'a '
                                                                                                                          'picker '
                                                                                                                          'with '
                                                                                                                          'flow '
                                                                                                                          'control '
                                                                                                                          'to '
                                                                                                                          'hold '
                                                                                                                          'the '
                                                                                                                          'requests '
                                                                                                                          'that '
                                                                                                                          'arrive '
                                                                                                                          'meanwhile '
                                                                                                                          '(docs/autoscaling.md).',
                                                                                                           'minimum': 0,
                                                                                                           'maximum': 10000},
                                                                                           'maxReplicas': {'type': 'integer',
                                                                                                           'format': 'int32',
                                                                                                           'description': 'Most '
                                                                                                                          'replicas; '
                                                                                                                          'at '
                                                                                                                          'least '
                                                                                                                          'minReplicas '
                                                                                                                          'and '
                                                                                                                          'at '
                                                                                                                          'least '
                                                                                                                          '1.',
                                                                                                           'minimum': 1,
                                                                                                           'maximum': 10000},
                                                                                           'fallbackReplicas': {'type': 'integer',
                                                                                                                'format': 'int32',
                                                                                                                'description': 'KEDA '
                                                                                                                               'only '
                                                                                                                               '(prometheus): '
                                                                                                                               'the '
                                                                                                                               'replicas '
                                                                                                                               'the '
                                                                                                                               'role '
                                                                                                                               'gets '
                                                                                                                               'while '
                                                                                                                               'a '
                                                                                                                               'signal '
                                                                                                                               'cannot '
                                                                                                                               'be '
                                                                                                                               'read '
                                                                                                                               '- '
                                                                                                                               'its '
                                                                                                                               'Prometheus '
                                                                                                                               'unreachable, '
                                                                                                                               'or '
                                                                                                                               'none '
                                                                                                                               'of '
                                                                                                                               'the '
                                                                                                                               "service's "
                                                                                                                               'pods '
                                                                                                                               'scraped '
                                                                                                                               'there '
                                                                                                                               '(a '
                                                                                                                               'PodMonitor '
                                                                                                                               'that '
                                                                                                                               'Prometheus '
                                                                                                                               'does '
                                                                                                                               'not '
                                                                                                                               'select) '
                                                                                                                               '- '
                                                                                                                               'rather '
                                                                                                                               'than '
                                                                                                                               'a '
                                                                                                                               'count '
                                                                                                                               'from '
                                                                                                                               'a '
                                                                                                                               'signal '
                                                                                                                               'read '
                                                                                                                               'as '
                                                                                                                               'nothing; '
                                                                                                                               'a '
                                                                                                                               'role '
                                                                                                                               'at '
                                                                                                                               'zero '
                                                                                                                               'is '
                                                                                                                               'woken '
                                                                                                                               'to '
                                                                                                                               'it '
                                                                                                                               '(KEDA '
                                                                                                                               '2.19 '
                                                                                                                               'or '
                                                                                                                               'later). '
                                                                                                                               'Default '
                                                                                                                               'minReplicas, '
                                                                                                                               'at '
                                                                                                                               'least '
                                                                                                                               '1 '
                                                                                                                               '(docs/autoscaling.md).',
                                                                                                                'minimum': 1,
                                                                                                                'maximum': 10000},
                                                                                           'metrics': {'type': 'array',
                                                                                                       'description': 'The '
                                                                                                                      "HorizontalPodAutoscaler's: "
                                                                                                                      'autoscaling/v2 '
                                                                                                                      'MetricSpecs '
                                                                                                                      'as '
                                                                                                                      'it '
                                                                                                                      'takes '
                                                                                                                      'them '
                                                                                                                      '(omitted: '
                                                                                                                      'its '
                                                                                                                      'default, '
                                                                                                                      '80% '
                                                                                                                      'average '
                                                                                                                      'CPU '
                                                                                                                      'utilization). '
                                                                                                                      'Pods '
                                                                                                                      'and '
                                                                                                                      'Resource '
                                                                                                                      'metrics '
                                                                                                                      'are '
                                                                                                                      'read '
                                                                                                                      'from '
                                                                                                                      'the '
                                                                                                                      'leader '
                                                                                                                      'pods '
                                                                                                                      '(the '
                                                                                                                      'scale '
                                                                                                                      "subresource's "
                                                                                                                      'selector). '
                                                                                                                      'Not '
                                                                                                                      'with '
                                                                                                                      'prometheus '
                                                                                                                      'or '
                                                                                                                      'triggers.',
                                                                                                       'items': {'type': 'object',
                                                                                                                 'x-kubernetes-preserve-unknown-fields': True,
                                                                                                                 'required': ['type'],
                                                                                                                 'properties': {'type': {'type': 'string',
                                                                                                                                         'enum': ['ContainerResource',
                                                                                                                                                  'External',
                                                                                                                                                  'Object',
                                                                                                                                                  'Pods',
                                                                                                                                                  'Resource']}}}},
                                                                                           'prometheus': {'type': 'object',
                                                                                                          'description': 'KEDA: '
                                                                                                                         'the '
                                                                                                                         'Prometheus '
                                                                                                                         '(or '
                                                                                                                         'Thanos '
                                                                                                                         'querier) '
                                                                                                                         'that '
                                                                                                                         'scrapes '
                                                                                                                         'what '
                                                                                                                         "spec.monitoring's "
                                                                                                                         'PodMonitors '
                                                                                                                         'select; '
                                                                                                                         'the '
                                                                                                                         'signals '
                                                                                                                         'are '
                                                                                                                         'queried '
                                                                                                                         'there, '
                                                                                                                         'pinned '
                                                                                                                         'to '
                                                                                                                         'this '
                                                                                                                         "service's "
                                                                                                                         'namespace, '
                                                                                                                         'service '
                                                                                                                         'and '
                                                                                                                         'role.',
                                                                                                          'required': ['serverAddress'],
                                                                                                          'properties': {'serverAddress': {'type': 'string',
                                                                                                                                           'description': 'Its '
                                                                                                                                                          'HTTP(S) '
                                                                                                                                                          'URL, '
                                                                                                                                                          'such '
                                                                                                                                                          'as '
                                                                                                                                                          'http://prometheus-operated.monitoring:9090.',
                                                                                                                                           'minLength': 1,
                                                                                                                                           'maxLength': 2048,
                                                                                                                                           'pattern': '^https?://[^\\s]+$'},
                                                                                                                         'credentials': {'type': 'object',
                                                                                                                                         'description': 'A '
                                                                                                                                                        'Secret '
                                                                                                                                                        'of '
                                                                                                                                                        'the '
                                                                                                                                                        "service's "
                                                                                                                                                        'namespace '
                                                                                                                                                        'holding '
                                                                                                                                                        'what '
                                                                                                                                                        'the '
                                                                                                                                                        'Prometheus '
                                                                                                                                                        'asks '
                                                                                                                                                        'for, '
                                                                                                                                                        'made '
                                                                                                                                                        'into '
                                                                                                                                                        'a '
                                                                                                                                                        'KEDA '
                                                                                                                                                        'TriggerAuthentication '
                                                                                                                                                        '- '
                                                                                                                                                        'bearer '
                                                                                                                                                        '(key '
                                                                                                                                                        'token), '
                                                                                                                                                        'basic '
                                                                                                                                                        '(keys '
                                                                                                                                                        'username, '
                                                                                                                                                        'password); '
                                                                                                                                                        'key '
                                                                                                                                                        'ca, '
                                                                                                                                                        'if '
                                                                                                                                                        'present, '
                                                                                                                                                        'verifies '
                                                                                                                                                        'its '
                                                                                                                                                        'certificate.',
                                                                                                                                         'required': ['secretName',
                                                                                                                                                      'mode'],
                                                                                                                                         'properties': {'secretName': {'type': 'string',
                                                                                                                                                                       'minLength': 1,
                                                                                                                                                                       'maxLength': 253,
                                                                                                                                                                       'pattern': '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'},
                                                                                                                                                        'mode': {'type': 'string',
                                                                                                                                                                 'enum': ['bearer',
                                                                                                                                                                          'basic']},
                                                                                                                                                        'ca': {'type': 'boolean',
                                                                                                                                                               'description': 'The '
                                                                                                                                                                              'Secret '
                                                                                                                                                                              'has '
                                                                                                                                                                              'key '
                                                                                                                                                                              'ca, '
                                                                                                                                                                              'the '
                                                                                                                                                                              'CA '
                                                                                                                                                                              'that '
                                                                                                                                                                              'signed '
                                                                                                                                                                              'the '
                                                                                                                                                                              "Prometheus's "
                                                                                                                                                                              'certificate.'}}},
                                                                                                                         'unsafeSsl': {'type': 'boolean',
                                                                                                                                       'description': 'Skip '
                                                                                                                                                      'verifying '
                                                                                                                                                      'the '
                                                                                                                                                      "Prometheus's "
                                                                                                                                                      'certificate '
                                                                                                                                                      '(default '
                                                                                                                                                      'false).'}}},
                                                                                           'signals': {'type': 'array',
                                                                                                       'description': 'What '
                                                                                                                      'the '
                                                                                                                      "role's "
                                                                                                                      'size '
                                                                                                                      'follows, '
                                                                                                                      'each '
                                                                                                                      'with '
                                                                                                                      'a '
                                                                                                                      'target '
                                                                                                                      'per '
                                                                                                                      'replica; '
                                                                                                                      'the '
                                                                                                                      'replicas '
                                                                                                                      'are '
                                                                                                                      'the '
                                                                                                                      'largest '
                                                                                                                      'any '
                                                                                                                      'signal '
                                                                                                                      'asks '
                                                                                                                      'for '
                                                                                                                      '(sum '
                                                                                                                      'over '
                                                                                                                      'the '
                                                                                                                      'role '
                                                                                                                      'divided '
                                                                                                                      'by '
                                                                                                                      'its '
                                                                                                                      'target, '
                                                                                                                      'rounded '
                                                                                                                      'up). '
                                                                                                                      'Default '
                                                                                                                      '- '
                                                                                                                      'a '
                                                                                                                      'routed '
                                                                                                                      'role '
                                                                                                                      'picker-queue '
                                                                                                                      '1 '
                                                                                                                      'and '
                                                                                                                      'picker-running '
                                                                                                                      '8 '
                                                                                                                      '(a '
                                                                                                                      'picker '
                                                                                                                      'with '
                                                                                                                      'flow '
                                                                                                                      'control), '
                                                                                                                      'else '
                                                                                                                      'engine-queue '
                                                                                                                      '1; '
                                                                                                                      'a '
                                                                                                                      'prefill '
                                                                                                                      'role '
                                                                                                                      'prefill-backlog '
                                                                                                                      '4000.',
                                                                                                       'minItems': 1,
                                                                                                       'maxItems': 6,
                                                                                                       'x-kubernetes-list-type': 'map',
                                                                                                       'x-kubernetes-list-map-keys': ['type'],
                                                                                                       'items': {'type': 'object',
                                                                                                                 'required': ['type',
                                                                                                                              'target'],
                                                                                                                 'properties': {'type': {'type': 'string',
                                                                                                                                         'description': 'picker-queue '
                                                                                                                                                        '- '
                                                                                                                                                        'requests '
                                                                                                                                                        'waiting '
                                                                                                                                                        'in '
                                                                                                                                                        'the '
                                                                                                                                                        "router's "
                                                                                                                                                        'pickers '
                                                                                                                                                        '(flow '
                                                                                                                                                        'control); '
                                                                                                                                                        'picker-running '
                                                                                                                                                        '- '
                                                                                                                                                        'requests '
                                                                                                                                                        'the '
                                                                                                                                                        'pickers '
                                                                                                                                                        'have '
                                                                                                                                                        'in '
                                                                                                                                                        'flight; '
                                                                                                                                                        'engine-queue '
                                                                                                                                                        '- '
                                                                                                                                                        'requests '
                                                                                                                                                        'waiting '
                                                                                                                                                        'in '
                                                                                                                                                        'the '
                                                                                                                                                        "role's "
                                                                                                                                                        'engines '
                                                                                                                                                        '(vllm:num_requests_waiting, '
                                                                                                                                                        'sglang:num_queue_reqs); '
                                                                                                                                                        'engine-running '
                                                                                                                                                        '- '
                                                                                                                                                        'running '
                                                                                                                                                        'in '
                                                                                                                                                        'them; '
                                                                                                                                                        'kv-cache '
                                                                                                                                                        '- '
                                                                                                                                                        'their '
                                                                                                                                                        'KV-cache '
                                                                                                                                                        'use, '
                                                                                                                                                        '0 '
                                                                                                                                                        'to '
                                                                                                                                                        '1; '
                                                                                                                                                        'prefill-backlog '
                                                                                                                                                        '- '
                                                                                                                                                        'prompt '
                                                                                                                                                        'tokens '
                                                                                                                                                        'per '
                                                                                                                                                        'second '
                                                                                                                                                        'reaching '
                                                                                                                                                        'a '
                                                                                                                                                        'prefill '
                                                                                                                                                        "role's "
                                                                                                                                                        'engines.',
                                                                                                                                         'enum': ['picker-queue',
                                                                                                                                                  'picker-running',
                                                                                                                                                  'engine-queue',
                                                                                                                                                  'engine-running',
                                                                                                                                                  'kv-cache',
                                                                                                                                                  'prefill-backlog']},
                                                                                                                                'target': {'type': 'number',
                                                                                                                                           'description': 'What '
                                                                                                                                                          'one '
                                                                                                                                                          'replica '
                                                                                                                                                          'should '
                                                                                                                                                          'carry '
                                                                                                                                                          '(greater '
                                                                                                                                                          'than '
                                                                                                                                                          '0).',
                                                                                                                                           'minimum': 0}}}},
                                                                                           'keepUpWith': {'type': 'object',
                                                                                                          'description': 'At '
                                                                                                                         'least '
                                                                                                                         'ratio '
                                                                                                                         'replicas '
                                                                                                                         'of '
                                                                                                                         'this '
                                                                                                                         'role '
                                                                                                                         'per '
                                                                                                                         'replica '
                                                                                                                         'of '
                                                                                                                         'another '
                                                                                                                         'serving '
                                                                                                                         'role '
                                                                                                                         '(rounded '
                                                                                                                         'up), '
                                                                                                                         'as '
                                                                                                                         'it '
                                                                                                                         'scales '
                                                                                                                         '- '
                                                                                                                         'a '
                                                                                                                         'prefill '
                                                                                                                         'role '
                                                                                                                         'that '
                                                                                                                         'keeps '
                                                                                                                         'up '
                                                                                                                         'with '
                                                                                                                         'its '
                                                                                                                         'decoders, '
                                                                                                                         'so '
                                                                                                                         'no '
                                                                                                                         'decode '
                                                                                                                         'waits '
                                                                                                                         'without '
                                                                                                                         'a '
                                                                                                                         'prefill '
                                                                                                                         'to '
                                                                                                                         'feed '
                                                                                                                         'it. '
                                                                                                                         'KEDA '
                                                                                                                         'only.',
                                                                                                          'required': ['role',
                                                                                                                       'ratio'],
                                                                                                          'properties': {'role': {'type': 'string',
                                                                                                                                  'minLength': 1,
                                                                                                                                  'maxLength': 63},
                                                                                                                         'ratio': {'type': 'number',
                                                                                                                                   'minimum': 0,
                                                                                                                                   'maximum': 100}}},
                                                                                           'triggers': {'type': 'array',
                                                                                                        'description': 'KEDA '
                                                                                                                       'triggers '
                                                                                                                       'as '
                                                                                                                       'ScaledObject '
                                                                                                                       'takes '
                                                                                                                       'them, '
                                                                                                                       'passed '
                                                                                                                       'verbatim '
                                                                                                                       'beside '
                                                                                                                       'the '
                                                                                                                       'signals '
                                                                                                                       '(KEDA '
                                                                                                                       'only): '
                                                                                                                       'for '
                                                                                                                       'what '
                                                                                                                       'the '
                                                                                                                       'signals '
                                                                                                                       'do '
                                                                                                                       'not '
                                                                                                                       'cover.',
                                                                                                        'items': {'type': 'object',
                                                                                                                  'x-kubernetes-preserve-unknown-fields': True,
                                                                                                                  'required': ['type'],
                                                                                                                  'properties': {'type': {'type': 'string',
                                                                                                                                          'minLength': 1}}}},
                                                                                           'behavior': {'type': 'object',
                                                                                                        'description': 'The '
                                                                                                                       "HorizontalPodAutoscaler's "
                                                                                                                       'behavior '
                                                                                                                       '(scaleUp, '
                                                                                                                       'scaleDown), '
                                                                                                                       'verbatim. '
                                                                                                                       'Default '
                                                                                                                       'with '
                                                                                                                       'KEDA: '
                                                                                                                       'scale '
                                                                                                                       'up '
                                                                                                                       'by '
                                                                                                                       'at '
                                                                                                                       'most '
                                                                                                                       'doubling '
                                                                                                                       'per '
                                                                                                                       'cold '
                                                                                                                       'start '
                                                                                                                       '(the '
                                                                                                                       'serving '
                                                                                                                       "container's "
                                                                                                                       'startup '
                                                                                                                       'probe '
                                                                                                                       'budget), '
                                                                                                                       'so '
                                                                                                                       'replicas '
                                                                                                                       'still '
                                                                                                                       'starting '
                                                                                                                       'are '
                                                                                                                       'not '
                                                                                                                       'added '
                                                                                                                       'again; '
                                                                                                                       'scale '
                                                                                                                       'down '
                                                                                                                       'to '
                                                                                                                       'the '
                                                                                                                       'highest '
                                                                                                                       'demand '
                                                                                                                       'of '
                                                                                                                       'the '
                                                                                                                       'last '
                                                                                                                       'cold '
                                                                                                                       'start '
                                                                                                                       '(a '
                                                                                                                       'window '
                                                                                                                       'of '
                                                                                                                       '60 '
                                                                                                                       'to '
                                                                                                                       '600 '
                                                                                                                       's).',
                                                                                                        'x-kubernetes-preserve-unknown-fields': True}}},
                                                            'networkTopology': {'type': 'object',
                                                                                'description': 'Volcano network '
                                                                                               'topology for each '
                                                                                               'replica of the '
                                                                                               'role (its subgroup '
                                                                                               'of the PodGroup): '
                                                                                               "all of a replica's "
                                                                                               'pods within one '
                                                                                               'HyperNode of at '
                                                                                               'most the given '
                                                                                               'tier, such as a '
                                                                                               'rack or an NVLink '
                                                                                               'domain. Overrides '
                                                                                               'gangSchedule.networkTopology; '
                                                                                               'mode none opts the '
                                                                                               'role out. Needs a '
                                                                                               'gang-scheduled '
                                                                                               'service and '
                                                                                               "Volcano's "
                                                                                               'network-topology-aware '
                                                                                               'plugin; not on a '
                                                                                               'router '
                                                                                               '(docs/gang-scheduling.md).',
                                                                                'properties': {'mode': {'type': 'string',
                                                                                                        'description': 'hard '
                                                                                                                       '(default): '
                                                                                                                       'never '
                                                                                                                       'beyond '
                                                                                                                       'the '
                                                                                                                       'tier; '
                                                                                                                       'a '
                                                                                                                       'replica '
                                                                                                                       'that '
                                                                                                                       'fits '
                                                                                                                       'in '
                                                                                                                       'no '
                                                                                                                       'domain '
                                                                                                                       'of '
                                                                                                                       'it '
                                                                                                                       'waits, '
                                                                                                                       'whole. '
                                                                                                                       'soft: '
                                                                                                                       'the '
                                                                                                                       'lowest '
                                                                                                                       'tier '
                                                                                                                       'that '
                                                                                                                       'fits '
                                                                                                                       'first, '
                                                                                                                       'then '
                                                                                                                       'any '
                                                                                                                       '(no '
                                                                                                                       'bound). '
                                                                                                                       'none: '
                                                                                                                       'no '
                                                                                                                       'constraint '
                                                                                                                       'for '
                                                                                                                       'this '
                                                                                                                       "role's "
                                                                                                                       'replicas '
                                                                                                                       '(a '
                                                                                                                       'role '
                                                                                                                       'only).',
                                                                                                        'enum': ['hard',
                                                                                                                 'soft',
                                                                                                                 'none']},
                                                                                               'highestTierAllowed': {'type': 'integer',
                                                                                                                      'format': 'int32',
                                                                                                                      'description': 'Mode '
                                                                                                                                     'hard '
                                                                                                                                     '- '
                                                                                                                                     'the '
                                                                                                                                     'highest '
                                                                                                                                     'tier '
                                                                                                                                     'number '
                                                                                                                                     '(from '
                                                                                                                                     '1) '
                                                                                                                                     'the '
                                                                                                                                     'pods '
                                                                                                                                     'may '
                                                                                                                                     'span.',
                                                                                                                      'minimum': 1,
                                                                                                                      'maximum': 2147483647},
                                                                                               'highestTierName': {'type': 'string',
                                                                                                                   'description': 'Mode '
                                                                                                                                  'hard '
                                                                                                                                  '- '
                                                                                                                                  'the '
                                                                                                                                  'highest '
                                                                                                                                  'tier '
                                                                                                                                  'by '
                                                                                                                                  'its '
                                                                                                                                  "HyperNodes' "
                                                                                                                                  'tierName '
                                                                                                                                  '(such '
                                                                                                                                  'as '
                                                                                                                                  'rack).',
                                                                                                                   'minLength': 1,
                                                                                                                   'maxLength': 253}}},
                                                            'service': {'type': 'object',
                                                                        'description': "A Service over the role's "
                                                                                       'serving pods, for clients '
                                                                                       'that call them without a '
                                                                                       'Gateway, named '
                                                                                       '<service>-<role>-serving '
                                                                                       "(a frontend's: "
                                                                                       '<service>-<role>): each '
                                                                                       "replica's leader, or every "
                                                                                       'pod where every node '
                                                                                       'serves. Its ports are '
                                                                                       'those the serving '
                                                                                       'container declares (the '
                                                                                       'one the role serves on '
                                                                                       'first, named http unless '
                                                                                       'named), else the port the '
                                                                                       'engine serves on; https '
                                                                                       'where spec.tls is set.',
                                                                        'properties': {'type': {'type': 'string',
                                                                                                'description': 'ClusterIP '
                                                                                                               '(the '
                                                                                                               'default), '
                                                                                                               'NodePort '
                                                                                                               'or '
                                                                                                               'LoadBalancer.',
                                                                                                'enum': ['ClusterIP',
                                                                                                         'NodePort',
                                                                                                         'LoadBalancer']},
                                                                                       'headless': {'type': 'boolean',
                                                                                                    'description': 'No '
                                                                                                                   'cluster '
                                                                                                                   'IP '
                                                                                                                   '(clusterIP '
                                                                                                                   'None): '
                                                                                                                   'DNS '
                                                                                                                   'answers '
                                                                                                                   'with '
                                                                                                                   'the '
                                                                                                                   'serving '
                                                                                                                   "pods' "
                                                                                                                   'own '
                                                                                                                   'addresses, '
                                                                                                                   'for '
                                                                                                                   'clients '
                                                                                                                   'that '
                                                                                                                   'balance '
                                                                                                                   'over '
                                                                                                                   'them '
                                                                                                                   'themselves. '
                                                                                                                   'ClusterIP '
                                                                                                                   'only. '
                                                                                                                   'Default '
                                                                                                                   'false.'},
                                                                                       'annotations': {'type': 'object',
                                                                                                       'description': 'The '
                                                                                                                      "Service's "
                                                                                                                      'annotations '
                                                                                                                      '(a '
                                                                                                                      'load '
                                                                                                                      "balancer's, "
                                                                                                                      'a '
                                                                                                                      "mesh's).",
                                                                                                       'additionalProperties': {'type': 'string'}}}},
                                                            'frontend': {'type': 'object',
                                                                         'description': 'Frontend roles only (and '
                                                                                        'then required): the '
                                                                                        'router the template runs '
                                                                                        'in front of the serving '
                                                                                        'roles, and how its pods '
                                                                                        'learn the serving pods. '
                                                                                        "sglang-router: SGLang's "
                                                                                        'router (sglang_router, '
                                                                                        'sgl-model-gateway) '
                                                                                        'discovering them through '
                                                                                        'the Kubernetes API — the '
                                                                                        "service's serving pods by "
                                                                                        'label (prefill and decode '
                                                                                        'apart for a '
                                                                                        'prefill/decode service), '
                                                                                        'in its own namespace, '
                                                                                        'with a Role that lets it '
                                                                                        'read pods '
                                                                                        '(docs/frontends.md).',
                                                                         'required': ['kind'],
                                                                         'properties': {'kind': {'type': 'string',
                                                                                                 'enum': ['sglang-router']}}},
                                                            'recoveryPolicy': {'type': 'string',
                                                                               'description': 'What a failed pod '
                                                                                              'restarts. '
                                                                                              'RoleRestart '
                                                                                              '(default): its '
                                                                                              'whole replica, '
                                                                                              'leader and workers '
                                                                                              '(LWS restartPolicy '
                                                                                              'RecreateGroupOnPodRestart). '
                                                                                              'None: only that pod '
                                                                                              '(LWS restartPolicy '
                                                                                              'None).',
                                                                               'enum': ['RoleRestart', 'None']},
                                                            'disruptionBudget': {'type': 'object',
                                                                                 'description': 'A '
                                                                                                'PodDisruptionBudget '
                                                                                                "over the role's "
                                                                                                'pods, counted in '
                                                                                                'whole replicas: a '
                                                                                                'drain may take '
                                                                                                'down at most '
                                                                                                'maxUnavailableReplicas '
                                                                                                'of them at once '
                                                                                                '(one evicted pod '
                                                                                                'takes its whole '
                                                                                                'multi-node '
                                                                                                'replica down, so '
                                                                                                'the budget admits '
                                                                                                'one eviction per '
                                                                                                'replica it '
                                                                                                'allows, then '
                                                                                                'waits for the '
                                                                                                'replicas to be '
                                                                                                'whole again). '
                                                                                                'Pods that are not '
                                                                                                'ready may always '
                                                                                                'be evicted, so it '
                                                                                                'never blocks a '
                                                                                                'drain for good. '
                                                                                                'Default - on for '
                                                                                                'a multi-node role '
                                                                                                '(nodeCount 2 or '
                                                                                                'more), 1 replica.',
                                                                                 'properties': {'enabled': {'type': 'boolean'},
                                                                                                'maxUnavailableReplicas': {'type': 'integer',
                                                                                                                           'format': 'int32',
                                                                                                                           'description': 'Replicas '
                                                                                                                                          'a '
                                                                                                                                          'voluntary '
                                                                                                                                          'disruption '
                                                                                                                                          'may '
                                                                                                                                          'take '
                                                                                                                                          'down '
                                                                                                                                          'at '
                                                                                                                                          'once '
                                                                                                                                          '(default '
                                                                                                                                          '1).',
                                                                                                                           'minimum': 1,
                                                                                                                           'maximum': 10000}}},
                                                            'template': {'type': 'object',
                                                                         'description': 'Pod template (a '
                                                                                        'PodTemplateSpec) for the '
                                                                                        "role's pods.",
                                                                         'x-kubernetes-preserve-unknown-fields': True,
                                                                         'properties': {'metadata': {'type': 'object',
                                                                                                     'x-kubernetes-preserve-unknown-fields': True,
                                                                                                     'properties': {'labels': {'type': 'object',
                                                                                                                               'additionalProperties': {'type': 'string'}},
                                                                                                                    'annotations': {'type': 'object',
                                                                                                                                    'additionalProperties': {'type': 'string'}}}},
                                                                                        'spec': {'type': 'object',
                                                                                                 'x-kubernetes-preserve-unknown-fields': True,
                                                                                                 'required': ['containers'],
                                                                                                 'properties': {'containers': {'type': 'array',
                                                                                                                               'minItems': 1,
                                                                                                                               'items': {'type': 'object',
                                                                                                                                         'x-kubernetes-preserve-unknown-fields': True,
                                                                                                                                         'required': ['name'],
                                                                                                                                         'properties': {'name': {'type': 'string'},
                                                                                                                                                        'command': {'type': 'array',
                                                                                                                                                                    'items': {'type': 'string'}},
                                                                                                                                                        'args': {'type': 'array',
                                                                                                                                                                 'items': {'type': 'string'}},
                                                                                                                                                        'ports': {'type': 'array',
                                                                                                                                                                  'items': {'type': 'object',
                                                                                                                                                                            'x-kubernetes-preserve-unknown-fields': True,
                                                                                                                                                                            'required': ['containerPort'],
                                                                                                                                                                            'properties': {'containerPort': {'type': 'integer',
                                                                                                                                                                                                             'format': 'int32'}}}},
                                                                                                                                                        'env': {'type': 'array',
                                                                                                                                                                'items': {'type': 'object',
                                                                                                                                                                          'x-kubernetes-preserve-unknown-fields': True,
                                                                                                                                                                          'required': ['name'],
                                                                                                                                                                          'properties': {'name': {'type': 'string'}}}},
                                                                                                                                                        'volumeMounts': {'type': 'array',
                                                                                                                                                                         'items': {'type': 'object',
                                                                                                                                                                                   'x-kubernetes-preserve-unknown-fields': True,
                                                                                                                                                                                   'required': ['name'],
                                                                                                                                                                                   'properties': {'name': {'type': 'string'}}}},
                                                                                                                                                        'lifecycle': {'type': 'object',
                                                                                                                                                                      'x-kubernetes-preserve-unknown-fields': True},
                                                                                                                                                        'readinessProbe': {'type': 'object',
                                                                                                                                                                           'x-kubernetes-preserve-unknown-fields': True},
                                                                                                                                                        'livenessProbe': {'type': 'object',
                                                                                                                                                                          'x-kubernetes-preserve-unknown-fields': True},
                                                                                                                                                        'startupProbe': {'type': 'object',
                                                                                                                                                                         'x-kubernetes-preserve-unknown-fields': True},
                                                                                                                                                        'resources': {'type': 'object',
                                                                                                                                                                      'x-kubernetes-preserve-unknown-fields': True,
                                                                                                                                                                      'properties': {'limits': {'type': 'object',
                                                                                                                                                                                                'additionalProperties': {'x-kubernetes-int-or-string': True,
                                                                                                                                                                                                                         'anyOf': [{'type': 'integer'},
                                                                                                                                                                                                                                   {'type': 'string'}]}},
                                                                                                                                                                                     'requests': {'type': 'object',
                                                                                                                                                                                                  'additionalProperties': {'x-kubernetes-int-or-string': True,
                                                                                                                                                                                                                           'anyOf': [{'type': 'integer'},
                                                                                                                                                                                                                                     {'type': 'string'}]}}}}}}},
                                                                                                                'initContainers': {'type': 'array',
                                                                                                                                   'items': {'type': 'object',
                                                                                                                                             'x-kubernetes-preserve-unknown-fields': True,
                                                                                                                                             'required': ['name'],
                                                                                                                                             'properties': {'name': {'type': 'string'},
                                                                                                                                                            'restartPolicy': {'type': 'string'},
                                                                                                                                                            'resources': {'type': 'object',
                                                                                                                                                                          'x-kubernetes-preserve-unknown-fields': True,
                                                                                                                                                                          'properties': {'limits': {'type': 'object',
                                                                                                                                                                                                    'additionalProperties': {'x-kubernetes-int-or-string': True,
                                                                                                                                                                                                                             'anyOf': [{'type': 'integer'},
                                                                                                                                                                                                                                       {'type': 'string'}]}},
                                                                                                                                                                                         'requests': {'type': 'object',
                                                                                                                                                                                                      'additionalProperties': {'x-kubernetes-int-or-string': True,
                                                                                                                                                                                                                               'anyOf': [{'type': 'integer'},
                                                                                                                                                                                                                                         {'type': 'string'}]}}}}}}},
                                                                                                                'volumes': {'type': 'array',
                                                                                                                            'items': {'type': 'object',
                                                                                                                                      'x-kubernetes-preserve-unknown-fields': True,
                                                                                                                                      'required': ['name'],
                                                                                                                                      'properties': {'name': {'type': 'string'}}}},
                                                                                                                'overhead': {'type': 'object',
                                                                                                                             'additionalProperties': {'x-kubernetes-int-or-string': True,
                                                                                                                                                      'anyOf': [{'type': 'integer'},
                                                                                                                                                                {'type': 'string'}]}}}}}},
                                                            'multinode': {'type': 'object',
                                                                          'description': 'Spread each replica over '
                                                                                         'several nodes: a leader '
                                                                                         'pod and nodeCount - 1 '
                                                                                         'workers, joined as the '
                                                                                         'bootstrap says '
                                                                                         '(docs/expansion.md, '
                                                                                         'multi-node bootstraps).',
                                                                          'required': ['nodeCount'],
                                                                          'properties': {'nodeCount': {'type': 'integer',
                                                                                                       'format': 'int32',
                                                                                                       'description': 'Pods '
                                                                                                                      '(nodes) '
                                                                                                                      'per '
                                                                                                                      'replica.',
                                                                                                       'minimum': 1,
                                                                                                       'maximum': 2147483647},
                                                                                         'bootstrap': {'type': 'string',
                                                                                                       'description': 'How '
                                                                                                                      'a '
                                                                                                                      "replica's "
                                                                                                                      'nodes '
                                                                                                                      'join. '
                                                                                                                      'ray: '
                                                                                                                      'a '
                                                                                                                      'Ray '
                                                                                                                      'cluster, '
                                                                                                                      'the '
                                                                                                                      'server '
                                                                                                                      'started '
                                                                                                                      'on '
                                                                                                                      'its '
                                                                                                                      'head '
                                                                                                                      'with '
                                                                                                                      '--distributed-executor-backend '
                                                                                                                      'ray '
                                                                                                                      '(images '
                                                                                                                      'with '
                                                                                                                      'Ray: '
                                                                                                                      'vLLM '
                                                                                                                      'before '
                                                                                                                      '0.19). '
                                                                                                                      'vllm: '
                                                                                                                      "vLLM's "
                                                                                                                      'own '
                                                                                                                      'multi-node '
                                                                                                                      'launch '
                                                                                                                      '(--nnodes, '
                                                                                                                      '--node-rank, '
                                                                                                                      '--master-addr; '
                                                                                                                      'workers '
                                                                                                                      '--headless). '
                                                                                                                      'vllm-data-parallel: '
                                                                                                                      'one '
                                                                                                                      'vLLM '
                                                                                                                      'data-parallel '
                                                                                                                      'engine '
                                                                                                                      'per '
                                                                                                                      'node '
                                                                                                                      '(dataParallel). '
                                                                                                                      'sglang: '
                                                                                                                      "SGLang's "
                                                                                                                      '(--dist-init-addr, '
                                                                                                                      '--nnodes, '
                                                                                                                      '--node-rank). '
                                                                                                                      'custom: '
                                                                                                                      'the '
                                                                                                                      'leader '
                                                                                                                      'runs '
                                                                                                                      'template '
                                                                                                                      'and '
                                                                                                                      'the '
                                                                                                                      'workers '
                                                                                                                      'workerTemplate, '
                                                                                                                      'as '
                                                                                                                      'written. '
                                                                                                                      'Default: '
                                                                                                                      'ray '
                                                                                                                      'for '
                                                                                                                      'a '
                                                                                                                      'vllm/vllm-openai '
                                                                                                                      'image '
                                                                                                                      'before '
                                                                                                                      'v0.19, '
                                                                                                                      'vllm '
                                                                                                                      'for '
                                                                                                                      'one '
                                                                                                                      'from '
                                                                                                                      'v0.19, '
                                                                                                                      'sglang '
                                                                                                                      'for '
                                                                                                                      'an '
                                                                                                                      'SGLang '
                                                                                                                      'image '
                                                                                                                      'or '
                                                                                                                      'server '
                                                                                                                      'command; '
                                                                                                                      'any '
                                                                                                                      'other '
                                                                                                                      'image '
                                                                                                                      'must '
                                                                                                                      'say.',
                                                                                                       'enum': ['ray',
                                                                                                                'vllm',
                                                                                                                'vllm-data-parallel',
                                                                                                                'sglang',
                                                                                                                'custom']},
                                                                                         'servingCommand': {'type': 'array',
                                                                                                            'description': 'Command '
                                                                                                                           'that '
                                                                                                                           'starts '
                                                                                                                           'the '
                                                                                                                           'model '
                                                                                                                           'server '
                                                                                                                           'when '
                                                                                                                           'the '
                                                                                                                           'serving '
                                                                                                                           '(first) '
                                                                                                                           'container '
                                                                                                                           'sets '
                                                                                                                           'no '
                                                                                                                           'command '
                                                                                                                           'of '
                                                                                                                           'its '
                                                                                                                           'own: '
                                                                                                                           'an '
                                                                                                                           "image's "
                                                                                                                           'entrypoint '
                                                                                                                           'cannot '
                                                                                                                           'be '
                                                                                                                           'read '
                                                                                                                           'at '
                                                                                                                           'render '
                                                                                                                           'time. '
                                                                                                                           'Defaults '
                                                                                                                           'to '
                                                                                                                           '["vllm", '
                                                                                                                           '"serve"], '
                                                                                                                           'the '
                                                                                                                           'vllm/vllm-openai '
                                                                                                                           'entrypoint; '
                                                                                                                           'bootstrap '
                                                                                                                           'sglang: '
                                                                                                                           '["python3", '
                                                                                                                           '"-m", '
                                                                                                                           '"sglang.launch_server"]. '
                                                                                                                           'Not '
                                                                                                                           'with '
                                                                                                                           'bootstrap '
                                                                                                                           'custom.',
                                                                                                            'minItems': 1,
                                                                                                            'items': {'type': 'string'}},
                                                                                         'rendezvousPort': {'type': 'integer',
                                                                                                            'format': 'int32',
                                                                                                            'description': 'The '
                                                                                                                           "leader's "
                                                                                                                           'port '
                                                                                                                           'the '
                                                                                                                           'other '
                                                                                                                           'nodes '
                                                                                                                           'join '
                                                                                                                           'at: '
                                                                                                                           'the '
                                                                                                                           'Ray '
                                                                                                                           "head's "
                                                                                                                           '(default '
                                                                                                                           '6379), '
                                                                                                                           "vLLM's "
                                                                                                                           'master '
                                                                                                                           'port '
                                                                                                                           '(default '
                                                                                                                           '29501), '
                                                                                                                           'the '
                                                                                                                           'data-parallel '
                                                                                                                           'RPC '
                                                                                                                           'port '
                                                                                                                           '(default '
                                                                                                                           '29550) '
                                                                                                                           'or '
                                                                                                                           "SGLang's "
                                                                                                                           'dist-init '
                                                                                                                           'port '
                                                                                                                           '(default '
                                                                                                                           '20000). '
                                                                                                                           'Added '
                                                                                                                           'to '
                                                                                                                           'the '
                                                                                                                           "leader's "
                                                                                                                           'ports. '
                                                                                                                           'Not '
                                                                                                                           'with '
                                                                                                                           'bootstrap '
                                                                                                                           'custom.',
                                                                                                            'minimum': 1,
                                                                                                            'maximum': 65535},
                                                                                         'dataParallel': {'type': 'object',
                                                                                                          'description': 'Bootstrap '
                                                                                                                         'vllm-data-parallel '
                                                                                                                         'only, '
                                                                                                                         'and '
                                                                                                                         'then '
                                                                                                                         'required '
                                                                                                                         'unless '
                                                                                                                         'the '
                                                                                                                         "engine's "
                                                                                                                         'own '
                                                                                                                         '--data-parallel-size-local '
                                                                                                                         'gives '
                                                                                                                         'its '
                                                                                                                         'ranks '
                                                                                                                         'a '
                                                                                                                         'node.',
                                                                                                          'properties': {'ranksPerNode': {'type': 'integer',
                                                                                                                                          'format': 'int32',
                                                                                                                                          'description': 'Data-parallel '
                                                                                                                                                         'ranks '
                                                                                                                                                         'each '
                                                                                                                                                         'node '
                                                                                                                                                         'runs '
                                                                                                                                                         '(--data-parallel-size-local, '
                                                                                                                                                         'usually '
                                                                                                                                                         'its '
                                                                                                                                                         'GPUs '
                                                                                                                                                         'divided '
                                                                                                                                                         'by '
                                                                                                                                                         'the '
                                                                                                                                                         'tensor-parallel '
                                                                                                                                                         'size); '
                                                                                                                                                         'the '
                                                                                                                                                         'data-parallel '
                                                                                                                                                         'size '
                                                                                                                                                         'is '
                                                                                                                                                         'ranksPerNode '
                                                                                                                                                         'x '
                                                                                                                                                         'nodeCount. '
                                                                                                                                                         'Default: '
                                                                                                                                                         'the '
                                                                                                                                                         "engine's "
                                                                                                                                                         '--data-parallel-size-local '
                                                                                                                                                         '(which '
                                                                                                                                                         'must '
                                                                                                                                                         'agree '
                                                                                                                                                         'where '
                                                                                                                                                         'both '
                                                                                                                                                         'are '
                                                                                                                                                         'given).',
                                                                                                                                          'minimum': 1,
                                                                                                                                          'maximum': 1024},
                                                                                                                         'hybridLoadBalancing': {'type': 'boolean',
                                                                                                                                                 'description': 'Every '
                                                                                                                                                                'node '
                                                                                                                                                                'serves '
                                                                                                                                                                'its '
                                                                                                                                                                'own '
                                                                                                                                                                'ranks '
                                                                                                                                                                '(--data-parallel-hybrid-lb): '
                                                                                                                                                                'the '
                                                                                                                                                                'InferencePool '
                                                                                                                                                                'and '
                                                                                                                                                                'the '
                                                                                                                                                                'PodMonitor '
                                                                                                                                                                'take '
                                                                                                                                                                'every '
                                                                                                                                                                'pod '
                                                                                                                                                                'of '
                                                                                                                                                                'the '
                                                                                                                                                                'role. '
                                                                                                                                                                'Default '
                                                                                                                                                                'false: '
                                                                                                                                                                'the '
                                                                                                                                                                'leader '
                                                                                                                                                                'serves '
                                                                                                                                                                'every '
                                                                                                                                                                'rank '
                                                                                                                                                                'and '
                                                                                                                                                                'the '
                                                                                                                                                                'workers '
                                                                                                                                                                'run '
                                                                                                                                                                '--headless.'}}},
                                                                                         'workerTemplate': {'type': 'object',
                                                                                                            'description': 'Bootstrap '
                                                                                                                           'custom '
                                                                                                                           'only '
                                                                                                                           '(and '
                                                                                                                           'then '
                                                                                                                           'required): '
                                                                                                                           'the '
                                                                                                                           "workers' "
                                                                                                                           'pod '
                                                                                                                           'template, '
                                                                                                                           'run '
                                                                                                                           'as '
                                                                                                                           'written, '
                                                                                                                           'as '
                                                                                                                           'template '
                                                                                                                           'is '
                                                                                                                           'the '
                                                                                                                           "leader's.",
                                                                                                            'x-kubernetes-preserve-unknown-fields': True,
                                                                                                            'properties': {'metadata': {'type': 'object',
                                                                                                                                        'x-kubernetes-preserve-unknown-fields': True,
                                                                                                                                        'properties': {'labels': {'type': 'object',
                                                                                                                                                                  'additionalProperties': {'type': 'string'}},
                                                                                                                                                       'annotations': {'type': 'object',
                                                                                                                                                                       'additionalProperties': {'type': 'string'}}}},
                                                                                                                           'spec': {'type': 'object',
                                                                                                                                    'x-kubernetes-preserve-unknown-fields': True,
                                                                                                                                    'required': ['containers'],
                                                                                                                                    'properties': {'containers': {'type': 'array',
                                                                                                                                                                  'minItems': 1,
                                                                                                                                                                  'items': {'type': 'object',
                                                                                                                                                                            'x-kubernetes-preserve-unknown-fields': True,
                                                                                                                                                                            'required': ['name'],
                                                                                                                                                                            'properties': {'name': {'type': 'string'},
                                                                                                                                                                                           'command': {'type': 'array',
                                                                                                                                                                                                       'items': {'type': 'string'}},
                                                                                                                                                                                           'args': {'type': 'array',
                                                                                                                                                                                                    'items': {'type': 'string'}},
                                                                                                                                                                                           'ports': {'type': 'array',
                                                                                                                                                                                                     'items': {'type': 'object',
                                                                                                                                                                                                               'x-kubernetes-preserve-unknown-fields': True,
                                                                                                                                                                                                               'required': ['containerPort'],
                                                                                                                                                                                                               'properties': {'containerPort': {'type': 'integer',
                                                                                                                                                                                                                                                'format': 'int32'}}}},
                                                                                                                                                                                           'env': {'type': 'array',
                                                                                                                                                                                                   'items': {'type': 'object',
                                                                                                                                                                                                             'x-kubernetes-preserve-unknown-fields': True,
                                                                                                                                                                                                             'required': ['name'],
                                                                                                                                                                                                             'properties': {'name': {'type': 'string'}}}},
                                                                                                                                                                                           'volumeMounts': {'type': 'array',
                                                                                                                                                                                                            'items': {'type': 'object',
                                                                                                                                                                                                                      'x-kubernetes-preserve-unknown-fields': True,
                                                                                                                                                                                                                      'required': ['name'],
                                                                                                                                                                                                                      'properties': {'name': {'type': 'string'}}}},
                                                                                                                                                                                           'lifecycle': {'type': 'object',
                                                                                                                                                                                                         'x-kubernetes-preserve-unknown-fields': True},
                                                                                                                                                                                           'readinessProbe': {'type': 'object',
                                                                                                                                                                                                              'x-kubernetes-preserve-unknown-fields': True},
                                                                                                                                                                                           'livenessProbe': {'type': 'object',
                                                                                                                                                                                                             'x-kubernetes-preserve-unknown-fields': True},
                                                                                                                                                                                           'startupProbe': {'type': 'object',
                                                                                                                                                                                                            'x-kubernetes-preserve-unknown-fields': True},
                                                                                                                                                                                           'resources': {'type': 'object',
                                                                                                                                                                                                         'x-kubernetes-preserve-unknown-fields': True,
                                                                                                                                                                                                         'properties': {'limits': {'type': 'object',
                                                                                                                                                                                                                                   'additionalProperties': {'x-kubernetes-int-or-string': True,
                                                                                                                                                                                                                                                            'anyOf': [{'type': 'integer'},
                                                                                                                                                                                                                                                                      {'type': 'string'}]}},
                                                                                                                                                                                                                        'requests': {'type': 'object',
                                                                                                                                                                                                                                     'additionalProperties': {'x-kubernetes-int-or-string': True,
                                                                                                                                                                                                                                                              'anyOf': [{'type': 'integer'},
                                                                                                                                                                                                                                                                        {'type': 'string'}]}}}}}}},
                                                                                                                                                   'initContainers': {'type': 'array',
                                                                                                                                                                      'items': {'type': 'object',
                                                                                                                                                                                'x-kubernetes-preserve-unknown-fields': True,
                                                                                                                                                                                'required': ['name'],
                                                                                                                                                                                'properties': {'name': {'type': 'string'},
                                                                                                                                                                                               'restartPolicy': {'type': 'string'},
                                                                                                                                                                                               'resources': {'type': 'object',
                                                                                                                                                                                                             'x-kubernetes-preserve-unknown-fields': True,
                                                                                                                                                                                                             'properties': {'limits': {'type': 'object',
                                                                                                                                                                                                                                       'additionalProperties': {'x-kubernetes-int-or-string': True,
                                                                                                                                                                                                                                                                'anyOf': [{'type': 'integer'},
                                                                                                                                                                                                                                                                          {'type': 'string'}]}},
                                                                                                                                                                                                                            'requests': {'type': 'object',
                                                                                                                                                                                                                                         'additionalProperties': {'x-kubernetes-int-or-string': True,
                                                                                                                                                                                                                                                                  'anyOf': [{'type': 'integer'},
                                                                                                                                                                                                                                                                            {'type': 'string'}]}}}}}}},
                                                                                                                                                   'volumes': {'type': 'array',
                                                                                                                                                               'items': {'type': 'object',
                                                                                                                                                                         'x-kubernetes-preserve-unknown-fields': True,
                                                                                                                                                                         'required': ['name'],
                                                                                                                                                                         'properties': {'name': {'type': 'string'}}}},
                                                                                                                                                   'overhead': {'type': 'object',
                                                                                                                                                                'additionalProperties': {'x-kubernetes-int-or-string': True,
                                                                                                                                                                                         'anyOf': [{'type': 'integer'},
                                                                                                                                                                                                   {'type': 'string'}]}}}}}},
                                                                                         'leaderArgs': {'type': 'array',
                                                                                                        'items': {'type': 'string'},
                                                                                                        'description': 'Server '
                                                                                                                       'flags '
                                                                                                                       'only '
                                                                                                                       'the '
                                                                                                                       "leader's "
                                                                                                                       'server '
                                                                                                                       'gets, '
                                                                                                                       'after '
                                                                                                                       'the '
                                                                                                                       "template's "
                                                                                                                       '(e.g. '
                                                                                                                       "vLLM's "
                                                                                                                       '--api-server-count, '
                                                                                                                       'which '
                                                                                                                       'headless '
                                                                                                                       'workers '
                                                                                                                       'refuse). '
                                                                                                                       'Not '
                                                                                                                       'with '
                                                                                                                       'bootstrap '
                                                                                                                       'custom.'},
                                                                                         'workerArgs': {'type': 'array',
                                                                                                        'items': {'type': 'string'},
                                                                                                        'description': 'Server '
                                                                                                                       'flags '
                                                                                                                       'only '
                                                                                                                       'the '
                                                                                                                       "workers' "
                                                                                                                       'servers '
                                                                                                                       'get, '
                                                                                                                       'after '
                                                                                                                       'the '
                                                                                                                       "template's. "
                                                                                                                       'Not '
                                                                                                                       'with '
                                                                                                                       'bootstrap '
                                                                                                                       'custom '
                                                                                                                       'or '
                                                                                                                       'ray '
                                                                                                                       '(Ray '
                                                                                                                       'workers '
                                                                                                                       'run '
                                                                                                                       'no '
                                                                                                                       'server). '
                                                                                                                       "vLLM's "
                                                                                                                       '--api-server-count, '
                                                                                                                       'which '
                                                                                                                       'headless '
                                                                                                                       'workers '
                                                                                                                       'refuse, '
                                                                                                                       'is '
                                                                                                                       'left '
                                                                                                                       'out '
                                                                                                                       'of '
                                                                                                                       'their '
                                                                                                                       'flags '
                                                                                                                       'by '
                                                                                                                       'itself.'}}},
                                                            'poolAPIVersion': {'type': 'string',
                                                                               'description': 'API of the '
                                                                                              'InferencePool '
                                                                                              '(router only). '
                                                                                              'inference.networking.k8s.io/v1 '
                                                                                              '(default) or '
                                                                                              'inference.networking.x-k8s.io/v1alpha2 '
                                                                                              'for gateways that '
                                                                                              'predate v1. It '
                                                                                              'chooses the '
                                                                                              'endpoint picker '
                                                                                              'generation unless '
                                                                                              'endpointPicker.generation '
                                                                                              'names one.',
                                                                               'enum': ['inference.networking.k8s.io/v1',
                                                                                        'inference.networking.x-k8s.io/v1alpha2']},
                                                            'targetPort': {'type': 'integer',
                                                                           'format': 'int32',
                                                                           'description': 'Port of the serving '
                                                                                          'pods the pool routes to '
                                                                                          '(router only). Default: '
                                                                                          'the serving (first) '
                                                                                          "container's port named "
                                                                                          'http, else its first '
                                                                                          'port.',
                                                                           'minimum': 1,
                                                                           'maximum': 65535},
                                                            'strategy': {'description': 'How the endpoint picker '
                                                                                        'scores pods (router '
                                                                                        'only); becomes its '
                                                                                        'EndpointPickerConfig. One '
                                                                                        'word (prefix-cache, '
                                                                                        'kv-cache-utilization, '
                                                                                        'queue-size, '
                                                                                        'lora-affinity: that '
                                                                                        'scorer leads the default '
                                                                                        'weighting; '
                                                                                        'pd-disaggregation: the '
                                                                                        'default weighting, and '
                                                                                        'the service must have a '
                                                                                        'prefiller and a decoder), '
                                                                                        'or the scorers and their '
                                                                                        'weights. A prefill/decode '
                                                                                        'service gets a prefill '
                                                                                        'and a decode profile '
                                                                                        'scored alike. Default: '
                                                                                        'queue-size 2, '
                                                                                        'kv-cache-utilization 2, '
                                                                                        'prefix-cache 3; where the '
                                                                                        'engines serve LoRA '
                                                                                        "adapters, lora-affinity's "
                                                                                        'weighting.',
                                                                         'anyOf': [{'type': 'string',
                                                                                    'enum': ['prefix-cache',
                                                                                             'kv-cache-utilization',
                                                                                             'queue-size',
                                                                                             'lora-affinity',
                                                                                             'pd-disaggregation']},
                                                                                   {'type': 'object',
                                                                                    'properties': {'scorers': {'type': 'array',
                                                                                                               'description': 'Scorers '
                                                                                                                              'and '
                                                                                                                              'their '
                                                                                                                              'weights. '
                                                                                                                              'Default: '
                                                                                                                              'queue-size '
                                                                                                                              '2, '
                                                                                                                              'kv-cache-utilization '
                                                                                                                              '2, '
                                                                                                                              'prefix-cache '
                                                                                                                              '3.',
                                                                                                               'minItems': 1,
                                                                                                               'items': {'type': 'object',
                                                                                                                         'required': ['type'],
                                                                                                                         'properties': {'type': {'type': 'string',
                                                                                                                                                 'enum': ['prefix-cache',
                                                                                                                                                          'kv-cache-utilization',
                                                                                                                                                          'queue-size',
                                                                                                                                                          'lora-affinity']},
                                                                                                                                        'weight': {'type': 'integer',
                                                                                                                                                   'description': 'Relative '
                                                                                                                                                                  'weight '
                                                                                                                                                                  'of '
                                                                                                                                                                  'the '
                                                                                                                                                                  'score '
                                                                                                                                                                  '(default '
                                                                                                                                                                  '1).',
                                                                                                                                                   'minimum': 1,
                                                                                                                                                   'maximum': 1000000},
                                                                                                                                        'parameters': {'type': 'object',
                                                                                                                                                       'description': 'The '
                                                                                                                                                                      "plugin's "
                                                                                                                                                                      'parameters, '
                                                                                                                                                                      'passed '
                                                                                                                                                                      'as '
                                                                                                                                                                      'given.',
                                                                                                                                                       'x-kubernetes-preserve-unknown-fields': True}}}},
                                                                                                   'prefillThreshold': {'type': 'integer',
                                                                                                                        'description': 'Prefill/decode '
                                                                                                                                       'services: '
                                                                                                                                       'run '
                                                                                                                                       'a '
                                                                                                                                       'separate '
                                                                                                                                       'prefill '
                                                                                                                                       'only '
                                                                                                                                       'when '
                                                                                                                                       'at '
                                                                                                                                       'least '
                                                                                                                                       'this '
                                                                                                                                       'much '
                                                                                                                                       'of '
                                                                                                                                       'the '
                                                                                                                                       'prompt '
                                                                                                                                       'is '
                                                                                                                                       'not '
                                                                                                                                       'in '
                                                                                                                                       'the '
                                                                                                                                       'decode '
                                                                                                                                       "pod's "
                                                                                                                                       'prefix '
                                                                                                                                       'cache '
                                                                                                                                       '(0, '
                                                                                                                                       'the '
                                                                                                                                       'default: '
                                                                                                                                       'always); '
                                                                                                                                       'counted '
                                                                                                                                       'in '
                                                                                                                                       'characters '
                                                                                                                                       'by '
                                                                                                                                       'the '
                                                                                                                                       'gie-v1.0 '
                                                                                                                                       'picker, '
                                                                                                                                       'in '
                                                                                                                                       'tokens '
                                                                                                                                       'by '
                                                                                                                                       'llm-d-router.',
                                                                                                                        'minimum': 0}}}]},
                                                            'endpointPickerConfig': {'type': 'string',
                                                                                     'description': 'EndpointPickerConfig '
                                                                                                    'YAML used '
                                                                                                    'verbatim '
                                                                                                    'instead of '
                                                                                                    'one built '
                                                                                                    'from strategy '
                                                                                                    '(router '
                                                                                                    'only).'},
                                                            'endpointPicker': {'type': 'object',
                                                                               'description': 'The endpoint '
                                                                                              "picker's Deployment "
                                                                                              '(router only).',
                                                                               'properties': {'replicas': {'type': 'integer',
                                                                                                           'description': 'How '
                                                                                                                          'many '
                                                                                                                          'pickers '
                                                                                                                          'run, '
                                                                                                                          'each '
                                                                                                                          'routing '
                                                                                                                          'its '
                                                                                                                          'share '
                                                                                                                          'of '
                                                                                                                          'the '
                                                                                                                          "gateway's "
                                                                                                                          'requests '
                                                                                                                          '(docs/router.md, '
                                                                                                                          '"A '
                                                                                                                          'picker '
                                                                                                                          'that '
                                                                                                                          'is '
                                                                                                                          'never '
                                                                                                                          'a '
                                                                                                                          'single '
                                                                                                                          'point '
                                                                                                                          'of '
                                                                                                                          'failure"). '
                                                                                                                          'From '
                                                                                                                          '2, '
                                                                                                                          'a '
                                                                                                                          'rolling '
                                                                                                                          'update, '
                                                                                                                          'a '
                                                                                                                          'node '
                                                                                                                          'drain '
                                                                                                                          'or '
                                                                                                                          'a '
                                                                                                                          'lost '
                                                                                                                          'node '
                                                                                                                          'leaves '
                                                                                                                          'a '
                                                                                                                          'picker '
                                                                                                                          'serving: '
                                                                                                                          'a '
                                                                                                                          'PodDisruptionBudget '
                                                                                                                          'lets '
                                                                                                                          'one '
                                                                                                                          'go '
                                                                                                                          'at '
                                                                                                                          'a '
                                                                                                                          'time '
                                                                                                                          'and '
                                                                                                                          'the '
                                                                                                                          'pods '
                                                                                                                          'spread '
                                                                                                                          'across '
                                                                                                                          'nodes '
                                                                                                                          'and '
                                                                                                                          'zones. '
                                                                                                                          '1 '
                                                                                                                          'saves '
                                                                                                                          'a '
                                                                                                                          'pod '
                                                                                                                          'and '
                                                                                                                          'keeps '
                                                                                                                          'one '
                                                                                                                          'view '
                                                                                                                          'of '
                                                                                                                          'the '
                                                                                                                          'prefix '
                                                                                                                          'caches, '
                                                                                                                          'at '
                                                                                                                          'the '
                                                                                                                          'cost '
                                                                                                                          'of '
                                                                                                                          'routing '
                                                                                                                          'stopping '
                                                                                                                          'while '
                                                                                                                          'that '
                                                                                                                          'picker '
                                                                                                                          'restarts. '
                                                                                                                          'Default: '
                                                                                                                          '2.',
                                                                                                           'minimum': 1,
                                                                                                           'maximum': 100},
                                                                                              'failureMode': {'type': 'string',
                                                                                                              'description': 'What '
                                                                                                                             'the '
                                                                                                                             'gateway '
                                                                                                                             'does '
                                                                                                                             'with '
                                                                                                                             'a '
                                                                                                                             'request '
                                                                                                                             'when '
                                                                                                                             'no '
                                                                                                                             'picker '
                                                                                                                             'answers, '
                                                                                                                             'written '
                                                                                                                             'to '
                                                                                                                             'the '
                                                                                                                             'InferencePool: '
                                                                                                                             'FailClose '
                                                                                                                             '(the '
                                                                                                                             'default) '
                                                                                                                             'refuses '
                                                                                                                             'it, '
                                                                                                                             'FailOpen '
                                                                                                                             'sends '
                                                                                                                             'it '
                                                                                                                             'to '
                                                                                                                             'a '
                                                                                                                             'pod '
                                                                                                                             'the '
                                                                                                                             'gateway '
                                                                                                                             'chooses '
                                                                                                                             'itself, '
                                                                                                                             'without '
                                                                                                                             'the '
                                                                                                                             "picker's "
                                                                                                                             'scoring.',
                                                                                                              'enum': ['FailClose',
                                                                                                                       'FailOpen']},
                                                                                              'podAnnotations': {'type': 'object',
                                                                                                                 'description': 'Annotations '
                                                                                                                                'for '
                                                                                                                                'the '
                                                                                                                                "picker's "
                                                                                                                                'pods '
                                                                                                                                '(a '
                                                                                                                                'service '
                                                                                                                                "mesh's, "
                                                                                                                                'a '
                                                                                                                                "scraper's), "
                                                                                                                                'beside '
                                                                                                                                'the '
                                                                                                                                'configuration '
                                                                                                                                'hash '
                                                                                                                                'that '
                                                                                                                                'restarts '
                                                                                                                                'them '
                                                                                                                                'when '
                                                                                                                                'their '
                                                                                                                                'configuration '
                                                                                                                                'changes.',
                                                                                                                 'additionalProperties': {'type': 'string'}},
                                                                                              'generation': {'type': 'string',
                                                                                                             'description': 'The '
                                                                                                                            'picker '
                                                                                                                            'release '
                                                                                                                            'line, '
                                                                                                                            'which '
                                                                                                                            'decides '
                                                                                                                            'its '
                                                                                                                            'image, '
                                                                                                                            'flags, '
                                                                                                                            'configuration '
                                                                                                                            'format '
                                                                                                                            'and '
                                                                                                                            'model '
                                                                                                                            'objects: '
                                                                                                                            'gie-v1.0 '
                                                                                                                            '(Gateway '
                                                                                                                            'API '
                                                                                                                            'Inference '
                                                                                                                            'Extension '
                                                                                                                            'v1.0; '
                                                                                                                            'reads '
                                                                                                                            'v1 '
                                                                                                                            'and '
                                                                                                                            'v1alpha2 '
                                                                                                                            'pools), '
                                                                                                                            'gie-v1.5 '
                                                                                                                            '(Gateway '
                                                                                                                            'API '
                                                                                                                            'Inference '
                                                                                                                            'Extension '
                                                                                                                            'v1.5; '
                                                                                                                            'v1 '
                                                                                                                            'pools; '
                                                                                                                            'flow '
                                                                                                                            'control), '
                                                                                                                            'gie-v0.5 '
                                                                                                                            '(v1alpha2 '
                                                                                                                            'pools) '
                                                                                                                            'or '
                                                                                                                            'llm-d-router '
                                                                                                                            '(v1 '
                                                                                                                            'pools; '
                                                                                                                            'flow '
                                                                                                                            'control; '
                                                                                                                            'the '
                                                                                                                            'only '
                                                                                                                            'one '
                                                                                                                            'with '
                                                                                                                            'a '
                                                                                                                            'prefill/decode '
                                                                                                                            'sidecar, '
                                                                                                                            'which '
                                                                                                                            'its '
                                                                                                                            "decoders' "
                                                                                                                            'pods '
                                                                                                                            'get). '
                                                                                                                            'Default: '
                                                                                                                            'llm-d-router '
                                                                                                                            'for '
                                                                                                                            'prefill/decode '
                                                                                                                            'services; '
                                                                                                                            'otherwise '
                                                                                                                            'gie-v1.0 '
                                                                                                                            'for '
                                                                                                                            'v1 '
                                                                                                                            'pools, '
                                                                                                                            'gie-v0.5 '
                                                                                                                            'for '
                                                                                                                            'v1alpha2 '
                                                                                                                            'pools '
                                                                                                                            '(docs/router.md).',
                                                                                                             'enum': ['gie-v0.5',
                                                                                                                      'gie-v1.0',
                                                                                                                      'gie-v1.5',
                                                                                                                      'llm-d-router']},
                                                                                              'image': {'type': 'string',
                                                                                                        'description': 'Another '
                                                                                                                       'image '
                                                                                                                       'of '
                                                                                                                       'the '
                                                                                                                       "generation's "
                                                                                                                       'picker '
                                                                                                                       '(a '
                                                                                                                       'mirror, '
                                                                                                                       'a '
                                                                                                                       'patched '
                                                                                                                       'build); '
                                                                                                                       'only '
                                                                                                                       'the '
                                                                                                                       'image '
                                                                                                                       'changes. '
                                                                                                                       'Default: '
                                                                                                                       'the '
                                                                                                                       "generation's "
                                                                                                                       '(docs/router.md).',
                                                                                                        'minLength': 1},
                                                                                              'flags': {'type': 'object',
                                                                                                        'description': 'Extra '
                                                                                                                       'command-line '
                                                                                                                       'flags, '
                                                                                                                       'name '
                                                                                                                       '(without '
                                                                                                                       'dashes) '
                                                                                                                       'to '
                                                                                                                       'value, '
                                                                                                                       'e.g. '
                                                                                                                       '{v: '
                                                                                                                       '"4"}. '
                                                                                                                       'Flags '
                                                                                                                       'the '
                                                                                                                       'router '
                                                                                                                       'sets '
                                                                                                                       '(pool '
                                                                                                                       'name, '
                                                                                                                       'namespace '
                                                                                                                       'and '
                                                                                                                       'group, '
                                                                                                                       'ports, '
                                                                                                                       'config '
                                                                                                                       'file) '
                                                                                                                       'may '
                                                                                                                       'only '
                                                                                                                       'repeat '
                                                                                                                       'its '
                                                                                                                       'value.',
                                                                                                        'additionalProperties': {'type': 'string'}},
                                                                                              'resources': {'type': 'object',
                                                                                                            'x-kubernetes-preserve-unknown-fields': True,
                                                                                                            'properties': {'limits': {'type': 'object',
                                                                                                                                      'additionalProperties': {'x-kubernetes-int-or-string': True,
                                                                                                                                                               'anyOf': [{'type': 'integer'},
                                                                                                                                                                         {'type': 'string'}]}},
                                                                                                                           'requests': {'type': 'object',
                                                                                                                                        'additionalProperties': {'x-kubernetes-int-or-string': True,
                                                                                                                                                                 'anyOf': [{'type': 'integer'},
                                                                                                                                                                           {'type': 'string'}]}}},
                                                                                                            'description': 'The '
                                                                                                                           'picker '
                                                                                                                           "container's "
                                                                                                                           'resources. '
                                                                                                                           'Default: '
                                                                                                                           'requests '
                                                                                                                           'of '
                                                                                                                           '1 '
                                                                                                                           'CPU '
                                                                                                                           'and '
                                                                                                                           '1Gi '
                                                                                                                           'of '
                                                                                                                           'memory, '
                                                                                                                           'a '
                                                                                                                           'memory '
                                                                                                                           'limit '
                                                                                                                           'of '
                                                                                                                           '4Gi.'},
                                                                                              'securityContext': {'type': 'object',
                                                                                                                  'description': 'The '
                                                                                                                                 'picker '
                                                                                                                                 "container's "
                                                                                                                                 'securityContext, '
                                                                                                                                 'instead '
                                                                                                                                 'of '
                                                                                                                                 'the '
                                                                                                                                 'default: '
                                                                                                                                 'the '
                                                                                                                                 'Pod '
                                                                                                                                 'Security '
                                                                                                                                 'Standard '
                                                                                                                                 '"restricted" '
                                                                                                                                 '(no '
                                                                                                                                 'privilege '
                                                                                                                                 'escalation, '
                                                                                                                                 'every '
                                                                                                                                 'capability '
                                                                                                                                 'dropped).',
                                                                                                                  'x-kubernetes-preserve-unknown-fields': True},
                                                                                              'podSecurityContext': {'type': 'object',
                                                                                                                     'description': 'The '
                                                                                                                                    'picker '
                                                                                                                                    "pod's "
                                                                                                                                    'securityContext, '
                                                                                                                                    'instead '
                                                                                                                                    'of '
                                                                                                                                    'the '
                                                                                                                                    'default: '
                                                                                                                                    'the '
                                                                                                                                    'Pod '
                                                                                                                                    'Security '
                                                                                                                                    'Standard '
                                                                                                                                    '"restricted" '
                                                                                                                                    '(non-root, '
                                                                                                                                    'as '
                                                                                                                                    'the '
                                                                                                                                    'picker '
                                                                                                                                    "images' "
                                                                                                                                    'user '
                                                                                                                                    '65532, '
                                                                                                                                    'the '
                                                                                                                                    'RuntimeDefault '
                                                                                                                                    'seccomp '
                                                                                                                                    'profile).',
                                                                                                                     'x-kubernetes-preserve-unknown-fields': True},
                                                                                              'networkPolicy': {'type': 'object',
                                                                                                                'description': 'The '
                                                                                                                               "picker's "
                                                                                                                               'own '
                                                                                                                               'peers '
                                                                                                                               'in '
                                                                                                                               'its '
                                                                                                                               'NetworkPolicy '
                                                                                                                               '(networking.k8s.io/v1), '
                                                                                                                               'which '
                                                                                                                               'lets '
                                                                                                                               'only '
                                                                                                                               'the '
                                                                                                                               'gateway '
                                                                                                                               'reach '
                                                                                                                               'the '
                                                                                                                               "picker's "
                                                                                                                               'ext-proc '
                                                                                                                               'port '
                                                                                                                               'and '
                                                                                                                               'only '
                                                                                                                               'the '
                                                                                                                               'scrapers '
                                                                                                                               'its '
                                                                                                                               'metrics '
                                                                                                                               'port; '
                                                                                                                               'without '
                                                                                                                               'it '
                                                                                                                               'the '
                                                                                                                               "service's "
                                                                                                                               'spec.networkPolicy '
                                                                                                                               'names '
                                                                                                                               'them '
                                                                                                                               '(gateway, '
                                                                                                                               'prometheus), '
                                                                                                                               'and '
                                                                                                                               'with '
                                                                                                                               'that '
                                                                                                                               'off '
                                                                                                                               'no '
                                                                                                                               'policy '
                                                                                                                               'is '
                                                                                                                               'rendered '
                                                                                                                               'for '
                                                                                                                               'the '
                                                                                                                               'picker '
                                                                                                                               'but '
                                                                                                                               'this '
                                                                                                                               'one. '
                                                                                                                               'Each '
                                                                                                                               'is '
                                                                                                                               'a '
                                                                                                                               'set '
                                                                                                                               'of '
                                                                                                                               'pods '
                                                                                                                               'by '
                                                                                                                               'their '
                                                                                                                               'labels: '
                                                                                                                               'podLabels '
                                                                                                                               'alone '
                                                                                                                               'selects '
                                                                                                                               'pods '
                                                                                                                               'of '
                                                                                                                               'the '
                                                                                                                               "picker's "
                                                                                                                               'namespace, '
                                                                                                                               'namespaceLabels '
                                                                                                                               'pods '
                                                                                                                               'of '
                                                                                                                               'the '
                                                                                                                               'namespaces '
                                                                                                                               'it '
                                                                                                                               'selects '
                                                                                                                               '(both: '
                                                                                                                               'those '
                                                                                                                               'pods '
                                                                                                                               'in '
                                                                                                                               'those '
                                                                                                                               'namespaces). '
                                                                                                                               'Other '
                                                                                                                               'traffic '
                                                                                                                               'from '
                                                                                                                               'the '
                                                                                                                               'picker '
                                                                                                                               '(the '
                                                                                                                               'API '
                                                                                                                               'server, '
                                                                                                                               'the '
                                                                                                                               "engines' "
                                                                                                                               'metrics) '
                                                                                                                               'is '
                                                                                                                               'not '
                                                                                                                               'restricted.',
                                                                                                                'required': ['gateway'],
                                                                                                                'properties': {'gateway': {'type': 'object',
                                                                                                                                           'description': 'The '
                                                                                                                                                          "gateway's "
                                                                                                                                                          'pods, '
                                                                                                                                                          'which '
                                                                                                                                                          'call '
                                                                                                                                                          'the '
                                                                                                                                                          'picker '
                                                                                                                                                          '(ext-proc, '
                                                                                                                                                          'port '
                                                                                                                                                          '9002), '
                                                                                                                                                          'e.g. '
                                                                                                                                                          '{podLabels: '
                                                                                                                                                          '{gateway.networking.k8s.io/gateway-name: '
                                                                                                                                                          'inference-gateway}}.',
                                                                                                                                           'minProperties': 1,
                                                                                                                                           'properties': {'podLabels': {'type': 'object',
                                                                                                                                                                        'description': 'Labels '
                                                                                                                                                                                       'the '
                                                                                                                                                                                       'pods '
                                                                                                                                                                                       'carry.',
                                                                                                                                                                        'additionalProperties': {'type': 'string'}},
                                                                                                                                                          'namespaceLabels': {'type': 'object',
                                                                                                                                                                              'description': 'Labels '
                                                                                                                                                                                             'their '
                                                                                                                                                                                             'namespaces '
                                                                                                                                                                                             'carry '
                                                                                                                                                                                             '(kubernetes.io/metadata.name '
                                                                                                                                                                                             'names '
                                                                                                                                                                                             'one).',
                                                                                                                                                                              'additionalProperties': {'type': 'string'}}}},
                                                                                                                               'scrapers': {'type': 'object',
                                                                                                                                            'description': 'The '
                                                                                                                                                           'pods '
                                                                                                                                                           'that '
                                                                                                                                                           'scrape '
                                                                                                                                                           'the '
                                                                                                                                                           "picker's "
                                                                                                                                                           'metrics '
                                                                                                                                                           '(port '
                                                                                                                                                           '9090), '
                                                                                                                                                           'e.g. '
                                                                                                                                                           "Prometheus's. "
                                                                                                                                                           'Omitted: '
                                                                                                                                                           'nothing '
                                                                                                                                                           'may '
                                                                                                                                                           'scrape '
                                                                                                                                                           'them.',
                                                                                                                                            'minProperties': 1,
                                                                                                                                            'properties': {'podLabels': {'type': 'object',
                                                                                                                                                                         'description': 'Labels '
                                                                                                                                                                                        'the '
                                                                                                                                                                                        'pods '
                                                                                                                                                                                        'carry.',
                                                                                                                                                                         'additionalProperties': {'type': 'string'}},
                                                                                                                                                           'namespaceLabels': {'type': 'object',
                                                                                                                                                                               'description': 'Labels '
                                                                                                                                                                                              'their '
                                                                                                                                                                                              'namespaces '
                                                                                                                                                                                              'carry '
                                                                                                                                                                                              '(kubernetes.io/metadata.name '
                                                                                                                                                                                              'names '
                                                                                                                                                                                              'one).',
                                                                                                                                                                               'additionalProperties': {'type': 'string'}}}}}}}},
                                                            'gateway': {'type': 'object',
                                                                        'description': 'A Gateway spec '
                                                                                       '(gateway.networking.k8s.io/v1); '
                                                                                       'the router creates the '
                                                                                       'Gateway (router only).',
                                                                        'x-kubernetes-preserve-unknown-fields': True},
                                                            'httproute': {'type': 'object',
                                                                          'description': 'HTTPRoute spec (router '
                                                                                         'only). Its rules are '
                                                                                         'kept; a rule without '
                                                                                         'backendRefs gets the '
                                                                                         'pool. parentRefs default '
                                                                                         "to the router's gateway.",
                                                                          'x-kubernetes-preserve-unknown-fields': True,
                                                                          'properties': {'parentRefs': {'type': 'array',
                                                                                                        'items': {'type': 'object',
                                                                                                                  'x-kubernetes-preserve-unknown-fields': True}},
                                                                                         'rules': {'type': 'array',
                                                                                                   'items': {'type': 'object',
                                                                                                             'x-kubernetes-preserve-unknown-fields': True,
                                                                                                             'properties': {'backendRefs': {'type': 'array',
                                                                                                                                            'items': {'type': 'object',
                                                                                                                                                      'x-kubernetes-preserve-unknown-fields': True,
                                                                                                                                                      'required': ['name'],
                                                                                                                                                      'properties': {'group': {'type': 'string'},
                                                                                                                                                                     'kind': {'type': 'string'},
                                                                                                                                                                     'name': {'type': 'string'},
                                                                                                                                                                     'port': {'type': 'integer',
                                                                                                                                                                              'format': 'int32'}}}}}}}}},
                                                            'inferencePaths': {'type': 'array',
                                                                               'description': 'Paths the HTTPRoute '
                                                                                              'matches beyond the '
                                                                                              'OpenAI serving '
                                                                                              'paths it always '
                                                                                              'matches '
                                                                                              '(/v1/completions, '
                                                                                              '/v1/chat/completions, '
                                                                                              '/v1/embeddings, '
                                                                                              '/v1/responses), '
                                                                                              'each exactly, e.g. '
                                                                                              '/v1/models or '
                                                                                              '/v1/audio/transcriptions '
                                                                                              '(router only). '
                                                                                              'Nothing else '
                                                                                              'reaches the engines '
                                                                                              'through a Gateway: '
                                                                                              'not their LoRA '
                                                                                              'adapter endpoints, '
                                                                                              '/tokenize, /metrics '
                                                                                              'or /health.',
                                                                               'items': {'type': 'string',
                                                                                         'minLength': 2,
                                                                                         'maxLength': 1024,
                                                                                         'pattern': '^/[^\\s?#]*$'}},
                                                            'sharedGateway': {'type': 'object',
                                                                              'description': 'Join a Gateway that '
                                                                                             'many services share '
                                                                                             'instead of making '
                                                                                             'one (router only): '
                                                                                             'the HTTPRoute '
                                                                                             'attaches to it and '
                                                                                             'matches, on the '
                                                                                             'header '
                                                                                             'X-Gateway-Model-Name, '
                                                                                             'only the model names '
                                                                                             'this service serves '
                                                                                             '(modelNames), so '
                                                                                             'services on one '
                                                                                             'Gateway never take '
                                                                                             "each other's "
                                                                                             'requests. The '
                                                                                             "Gateway's body-based "
                                                                                             'router sets that '
                                                                                             'header from the '
                                                                                             "request body's "
                                                                                             'model: install '
                                                                                             'charts/fusioninfer-bbr '
                                                                                             'once per Gateway '
                                                                                             '(docs/router.md, '
                                                                                             '"Many models on one '
                                                                                             'Gateway").',
                                                                              'required': ['name'],
                                                                              'properties': {'name': {'type': 'string',
                                                                                                      'description': 'The '
                                                                                                                     "Gateway's "
                                                                                                                     'name.',
                                                                                                      'minLength': 1,
                                                                                                      'maxLength': 253,
                                                                                                      'pattern': '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'},
                                                                                             'namespace': {'type': 'string',
                                                                                                           'description': 'The '
                                                                                                                          "Gateway's "
                                                                                                                          'namespace, '
                                                                                                                          'if '
                                                                                                                          'not '
                                                                                                                          'the '
                                                                                                                          "service's "
                                                                                                                          '(its '
                                                                                                                          'listeners '
                                                                                                                          'must '
                                                                                                                          'allow '
                                                                                                                          'routes '
                                                                                                                          'from '
                                                                                                                          'here).',
                                                                                                           'minLength': 1,
                                                                                                           'maxLength': 63,
                                                                                                           'pattern': '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'},
                                                                                             'sectionName': {'type': 'string',
                                                                                                             'description': 'The '
                                                                                                                            "Gateway's "
                                                                                                                            'listener '
                                                                                                                            'to '
                                                                                                                            'attach '
                                                                                                                            'to; '
                                                                                                                            'default '
                                                                                                                            'every '
                                                                                                                            'listener '
                                                                                                                            'that '
                                                                                                                            'allows '
                                                                                                                            'the '
                                                                                                                            'route.',
                                                                                                             'minLength': 1,
                                                                                                             'maxLength': 253,
                                                                                                             'pattern': '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'}}},
                                                            'modelNames': {'type': 'array',
                                                                           'description': 'The model names a '
                                                                                          'shared Gateway routes '
                                                                                          'to this service (router '
                                                                                          'with sharedGateway '
                                                                                          'only): what clients put '
                                                                                          "in the request body's "
                                                                                          'model. Default: the '
                                                                                          'names the serving '
                                                                                          "roles' engines serve "
                                                                                          '(--served-model-name, '
                                                                                          'else the model) and '
                                                                                          "model.adapters' names.",
                                                                           'minItems': 1,
                                                                           'maxItems': 64,
                                                                           'items': {'type': 'string',
                                                                                     'minLength': 1,
                                                                                     'maxLength': 4096}},
                                                            'modelRewrites': {'type': 'array',
                                                                              'description': 'Model names the '
                                                                                             'picker rewrites, '
                                                                                             'with weights, before '
                                                                                             'it routes (router '
                                                                                             'only): a request '
                                                                                             'whose body names '
                                                                                             'model is served as '
                                                                                             'one of targets (an '
                                                                                             "adapter's next "
                                                                                             "version, a model's "
                                                                                             'new name), chosen by '
                                                                                             'weight. Rendered as '
                                                                                             'an '
                                                                                             'InferenceModelRewrite, '
                                                                                             'which the '
                                                                                             'llm-d-router and '
                                                                                             'gie-v1.5 pickers '
                                                                                             'read '
                                                                                             '(docs/router.md, '
                                                                                             '"Canary").',
                                                                              'maxItems': 64,
                                                                              'items': {'type': 'object',
                                                                                        'required': ['model',
                                                                                                     'targets'],
                                                                                        'properties': {'model': {'type': 'string',
                                                                                                                 'description': 'The '
                                                                                                                                'model '
                                                                                                                                'name '
                                                                                                                                'clients '
                                                                                                                                'send.',
                                                                                                                 'minLength': 1,
                                                                                                                 'maxLength': 4096},
                                                                                                       'targets': {'type': 'array',
                                                                                                                   'description': 'The '
                                                                                                                                  'names '
                                                                                                                                  'the '
                                                                                                                                  'engines '
                                                                                                                                  'serve '
                                                                                                                                  'it '
                                                                                                                                  'as; '
                                                                                                                                  'weights '
                                                                                                                                  'on '
                                                                                                                                  'all '
                                                                                                                                  'or '
                                                                                                                                  'none '
                                                                                                                                  '(then '
                                                                                                                                  'they '
                                                                                                                                  'share '
                                                                                                                                  'evenly).',
                                                                                                                   'minItems': 1,
                                                                                                                   'maxItems': 10,
                                                                                                                   'items': {'type': 'object',
                                                                                                                             'required': ['model'],
                                                                                                                             'properties': {'model': {'type': 'string',
                                                                                                                                                      'minLength': 1,
                                                                                                                                                      'maxLength': 4096},
                                                                                                                                            'weight': {'type': 'integer',
                                                                                                                                                       'format': 'int32',
                                                                                                                                                       'minimum': 1,
                                                                                                                                                       'maximum': 1000000}}}}}}},
                                                            'canaryOf': {'type': 'object',
                                                                         'description': 'This service is a canary '
                                                                                        "of another service's pool "
                                                                                        'in the same namespace '
                                                                                        '(router only): its '
                                                                                        'HTTPRoute sends weight '
                                                                                        'percent of the requests '
                                                                                        'for its model names to '
                                                                                        'its own pool and the rest '
                                                                                        'to that pool (HTTPRoute '
                                                                                        'backendRef weights), '
                                                                                        'deciding those requests '
                                                                                        'whichever route is older '
                                                                                        '(docs/router.md, '
                                                                                        '"Canary").',
                                                                         'required': ['inferencePool', 'weight'],
                                                                         'properties': {'inferencePool': {'type': 'string',
                                                                                                          'description': 'The '
                                                                                                                         'stable '
                                                                                                                         "service's "
                                                                                                                         'InferencePool '
                                                                                                                         '(<service>-<router '
                                                                                                                         'role '
                                                                                                                         'name>).',
                                                                                                          'minLength': 1,
                                                                                                          'maxLength': 253,
                                                                                                          'pattern': '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'},
                                                                                        'weight': {'type': 'integer',
                                                                                                   'description': 'The '
                                                                                                                  'percentage '
                                                                                                                  'of '
                                                                                                                  'requests '
                                                                                                                  'this '
                                                                                                                  'canary '
                                                                                                                  'serves, '
                                                                                                                  '1 '
                                                                                                                  'to '
                                                                                                                  '99.',
                                                                                                   'minimum': 1,
                                                                                                   'maximum': 99}}},
                                                            'models': {'type': 'array',
                                                                       'description': 'Served models (router '
                                                                                      'only): an '
                                                                                      'InferenceObjective each '
                                                                                      'with a v1 pool, an '
                                                                                      'InferenceModel each with a '
                                                                                      'v1alpha2 pool.',
                                                                       'items': {'type': 'object',
                                                                                 'required': ['name'],
                                                                                 'properties': {'name': {'type': 'string',
                                                                                                         'description': 'Object '
                                                                                                                        'name '
                                                                                                                        'suffix '
                                                                                                                        '(<service>-<name>); '
                                                                                                                        'the '
                                                                                                                        'model '
                                                                                                                        'name '
                                                                                                                        'when '
                                                                                                                        'modelName '
                                                                                                                        'is '
                                                                                                                        'not '
                                                                                                                        'given.',
                                                                                                         'minLength': 1,
                                                                                                         'maxLength': 63,
                                                                                                         'pattern': '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'},
                                                                                                'modelName': {'type': 'string',
                                                                                                              'description': 'The '
                                                                                                                             'model '
                                                                                                                             'clients '
                                                                                                                             'ask '
                                                                                                                             'for '
                                                                                                                             '(v1alpha2 '
                                                                                                                             'InferenceModel '
                                                                                                                             'only).',
                                                                                                              'minLength': 1,
                                                                                                              'maxLength': 256},
                                                                                                'criticality': {'type': 'string',
                                                                                                                'description': 'Critical, '
                                                                                                                               'Standard '
                                                                                                                               'or '
                                                                                                                               'Sheddable: '
                                                                                                                               'which '
                                                                                                                               'requests '
                                                                                                                               'are '
                                                                                                                               'shed '
                                                                                                                               'first '
                                                                                                                               'when '
                                                                                                                               'the '
                                                                                                                               'pool '
                                                                                                                               'is '
                                                                                                                               'saturated '
                                                                                                                               '(an '
                                                                                                                               "InferenceObjective's "
                                                                                                                               'priority '
                                                                                                                               '1, '
                                                                                                                               '0 '
                                                                                                                               'or '
                                                                                                                               '-1).',
                                                                                                                'enum': ['Critical',
                                                                                                                         'Standard',
                                                                                                                         'Sheddable']},
                                                                                                'targetModels': {'type': 'array',
                                                                                                                 'description': 'Model '
                                                                                                                                'names '
                                                                                                                                '(e.g. '
                                                                                                                                'LoRA '
                                                                                                                                'adapter '
                                                                                                                                'versions) '
                                                                                                                                'served '
                                                                                                                                'for '
                                                                                                                                'modelName, '
                                                                                                                                'with '
                                                                                                                                'weights '
                                                                                                                                'to '
                                                                                                                                'split '
                                                                                                                                'traffic: '
                                                                                                                                'all '
                                                                                                                                'weighted '
                                                                                                                                'or '
                                                                                                                                'none '
                                                                                                                                '(v1alpha2 '
                                                                                                                                'InferenceModel '
                                                                                                                                'only).',
                                                                                                                 'minItems': 1,
                                                                                                                 'maxItems': 10,
                                                                                                                 'items': {'type': 'object',
                                                                                                                           'required': ['name'],
                                                                                                                           'properties': {'name': {'type': 'string',
                                                                                                                                                   'minLength': 1,
                                                                                                                                                   'maxLength': 253},
                                                                                                                                          'weight': {'type': 'integer',
                                                                                                                                                     'format': 'int32',
                                                                                                                                                     'minimum': 1,
                                                                                                                                                     'maximum': 1000000}}}}}}}}}},
                         'model': {'type': 'object',
                                   'description': "Where every serving role's weights come from, unless the role "
                                                  'names its own (roles[].model). See docs/models.md.',
                                   'required': ['source'],
                                   'properties': {'source': {'type': 'string',
                                                             'description': 'hf://ORG/NAME, pvc://CLAIM/PATH or '
                                                                            's3://BUCKET/PREFIX.',
                                                             'pattern': '^(hf://[A-Za-z0-9][-A-Za-z0-9_.]*/[A-Za-z0-9][-A-Za-z0-9_.]*|pvc://[a-z0-9]([-a-z0-9.]*[a-z0-9])?(/[^/\\x00]+)*/?|s3://[a-z0-9][-a-z0-9.]{1,61}[a-z0-9](/[^\\x00]*)?)$',
                                                             'maxLength': 1024},
                                                  'revision': {'type': 'string',
                                                               'description': 'hf://: the commit (40 hexadecimal '
                                                                              'digits) to serve: a branch would '
                                                                              'move under a running service. '
                                                                              's3://: a name for what the prefix '
                                                                              'holds now (default "current"); a '
                                                                              'new name fetches it again, beside '
                                                                              'the old. Not for pvc://.',
                                                               'pattern': '^[A-Za-z0-9][-A-Za-z0-9_.]{0,127}$'},
                                                  'credentials': {'type': 'object',
                                                                  'description': "A Secret of the service's "
                                                                                 'namespace holding the '
                                                                                 'credentials: for hf://, key '
                                                                                 'token (a Hugging Face access '
                                                                                 'token); for s3://, keys '
                                                                                 'AWS_ACCESS_KEY_ID and '
                                                                                 'AWS_SECRET_ACCESS_KEY. Read only '
                                                                                 'by the fetch Job (and the engine '
                                                                                 'where nothing is cached); never '
                                                                                 'in values.',
                                                                  'required': ['secretName'],
                                                                  'properties': {'secretName': {'type': 'string',
                                                                                                'minLength': 1,
                                                                                                'maxLength': 253,
                                                                                                'pattern': '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'}}},
                                                  'endpoint': {'type': 'string',
                                                               'description': "hf://: a hub mirror's URL "
                                                                              '(HF_ENDPOINT; default the Hugging '
                                                                              'Face hub). s3://: the S3-compatible '
                                                                              "store's URL (default AWS S3 of "
                                                                              'region).',
                                                               'pattern': '^https?://[^\\s]+$',
                                                               'maxLength': 2048},
                                                  'region': {'type': 'string',
                                                             'description': "s3:// only - the bucket's region "
                                                                            '(default us-east-1).',
                                                             'pattern': '^[a-z0-9-]{1,64}$'},
                                                  'loadFormat': {'type': 'string',
                                                                 'description': 'runai_streamer: the engine '
                                                                                'streams the weights from the '
                                                                                'files into GPU memory as it reads '
                                                                                "them (vLLM's and SGLang's "
                                                                                '--load-format; the image needs '
                                                                                'the runai-model-streamer package, '
                                                                                "which vLLM's images have), rather "
                                                                                'than reading each file whole '
                                                                                'first.',
                                                                 'enum': ['runai_streamer']},
                                                  'adapters': {'type': 'array',
                                                               'description': 'LoRA adapters of this model, each '
                                                                              'fetched onto spec.modelCache beside '
                                                                              'it (hf:// or s3://) and loaded by '
                                                                              'the engine at start under its name '
                                                                              "(vLLM's --lora-modules, SGLang's "
                                                                              '--lora-paths, with --enable-lora). '
                                                                              'Needs spec.modelCache.',
                                                               'maxItems': 64,
                                                               'items': {'type': 'object',
                                                                         'required': ['name', 'source'],
                                                                         'properties': {'name': {'type': 'string',
                                                                                                 'description': 'The '
                                                                                                                'model '
                                                                                                                'name '
                                                                                                                'clients '
                                                                                                                'ask '
                                                                                                                'for '
                                                                                                                'to '
                                                                                                                'use '
                                                                                                                'the '
                                                                                                                'adapter.',
                                                                                                 'minLength': 1,
                                                                                                 'maxLength': 128,
                                                                                                 'pattern': '^[A-Za-z0-9][-A-Za-z0-9_.]*(/[A-Za-z0-9][-A-Za-z0-9_.]*)?$'},
                                                                                        'source': {'type': 'string',
                                                                                                   'description': 'hf://ORG/NAME, '
                                                                                                                  'pvc://CLAIM/PATH '
                                                                                                                  'or '
                                                                                                                  's3://BUCKET/PREFIX.',
                                                                                                   'pattern': '^(hf://[A-Za-z0-9][-A-Za-z0-9_.]*/[A-Za-z0-9][-A-Za-z0-9_.]*|pvc://[a-z0-9]([-a-z0-9.]*[a-z0-9])?(/[^/\\x00]+)*/?|s3://[a-z0-9][-a-z0-9.]{1,61}[a-z0-9](/[^\\x00]*)?)$',
                                                                                                   'maxLength': 1024},
                                                                                        'revision': {'type': 'string',
                                                                                                     'description': 'hf://: '
                                                                                                                    'the '
                                                                                                                    'commit '
                                                                                                                    '(40 '
                                                                                                                    'hexadecimal '
                                                                                                                    'digits) '
                                                                                                                    'to '
                                                                                                                    'serve: '
                                                                                                                    'a '
                                                                                                                    'branch '
                                                                                                                    'would '
                                                                                                                    'move '
                                                                                                                    'under '
                                                                                                                    'a '
                                                                                                                    'running '
                                                                                                                    'service. '
                                                                                                                    's3://: '
                                                                                                                    'a '
                                                                                                                    'name '
                                                                                                                    'for '
                                                                                                                    'what '
                                                                                                                    'the '
                                                                                                                    'prefix '
                                                                                                                    'holds '
                                                                                                                    'now '
                                                                                                                    '(default '
                                                                                                                    '"current"); '
                                                                                                                    'a '
                                                                                                                    'new '
                                                                                                                    'name '
                                                                                                                    'fetches '
                                                                                                                    'it '
                                                                                                                    'again, '
                                                                                                                    'beside '
                                                                                                                    'the '
                                                                                                                    'old. '
                                                                                                                    'Not '
                                                                                                                    'for '
                                                                                                                    'pvc://.',
                                                                                                     'pattern': '^[A-Za-z0-9][-A-Za-z0-9_.]{0,127}$'},
                                                                                        'credentials': {'type': 'object',
                                                                                                        'description': 'A '
                                                                                                                       'Secret '
                                                                                                                       'of '
                                                                                                                       'the '
                                                                                                                       "service's "
                                                                                                                       'namespace '
                                                                                                                       'holding '
                                                                                                                       'the '
                                                                                                                       'credentials: '
                                                                                                                       'for '
                                                                                                                       'hf://, '
                                                                                                                       'key '
                                                                                                                       'token '
                                                                                                                       '(a '
                                                                                                                       'Hugging '
                                                                                                                       'Face '
                                                                                                                       'access '
                                                                                                                       'token); '
                                                                                                                       'for '
                                                                                                                       's3://, '
                                                                                                                       'keys '
                                                                                                                       'AWS_ACCESS_KEY_ID '
                                                                                                                       'and '
                                                                                                                       'AWS_SECRET_ACCESS_KEY. '
                                                                                                                       'Read '
                                                                                                                       'only '
                                                                                                                       'by '
                                                                                                                       'the '
                                                                                                                       'fetch '
                                                                                                                       'Job '
                                                                                                                       '(and '
                                                                                                                       'the '
                                                                                                                       'engine '
                                                                                                                       'where '
                                                                                                                       'nothing '
                                                                                                                       'is '
                                                                                                                       'cached); '
                                                                                                                       'never '
                                                                                                                       'in '
                                                                                                                       'values.',
                                                                                                        'required': ['secretName'],
                                                                                                        'properties': {'secretName': {'type': 'string',
                                                                                                                                      'minLength': 1,
                                                                                                                                      'maxLength': 253,
                                                                                                                                      'pattern': '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'}}},
                                                                                        'endpoint': {'type': 'string',
                                                                                                     'description': 'hf://: '
                                                                                                                    'a '
                                                                                                                    'hub '
                                                                                                                    "mirror's "
                                                                                                                    'URL '
                                                                                                                    '(HF_ENDPOINT; '
                                                                                                                    'default '
                                                                                                                    'the '
                                                                                                                    'Hugging '
                                                                                                                    'Face '
                                                                                                                    'hub). '
                                                                                                                    's3://: '
                                                                                                                    'the '
                                                                                                                    'S3-compatible '
                                                                                                                    "store's "
                                                                                                                    'URL '
                                                                                                                    '(default '
                                                                                                                    'AWS '
                                                                                                                    'S3 '
                                                                                                                    'of '
                                                                                                                    'region).',
                                                                                                     'pattern': '^https?://[^\\s]+$',
                                                                                                     'maxLength': 2048},
                                                                                        'region': {'type': 'string',
                                                                                                   'description': 's3:// '
                                                                                                                  'only '
                                                                                                                  '- '
                                                                                                                  'the '
                                                                                                                  "bucket's "
                                                                                                                  'region '
                                                                                                                  '(default '
                                                                                                                  'us-east-1).',
                                                                                                   'pattern': '^[a-z0-9-]{1,64}$'}}}}}},
                         'modelCache': {'type': 'object',
                                        'description': 'One volume holding the weights of hf:// and s3:// sources, '
                                                       'fetched once per service and revision by a Job '
                                                       '(<service>-fetch-<hash>) and mounted read-only by every '
                                                       'serving pod, which starts only once its revision is '
                                                       "complete; the engines' compile caches too, per engine "
                                                       'image. Either an existing claim (claimName) or one made '
                                                       'for the service (<service>-model-cache, kept on uninstall '
                                                       'unless keep is false). See docs/models.md.',
                                        'properties': {'claimName': {'type': 'string',
                                                                     'description': 'An existing '
                                                                                    'PersistentVolumeClaim of the '
                                                                                    'namespace (ReadWriteMany, or '
                                                                                    'ReadWriteOnce where every '
                                                                                    'serving pod runs on one '
                                                                                    'node). Not with size, '
                                                                                    'storageClassName or keep.',
                                                                     'minLength': 1,
                                                                     'maxLength': 253,
                                                                     'pattern': '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'},
                                                       'size': {'description': 'The claim made for the service: '
                                                                               'its storage request (a quantity '
                                                                               'such as 200Gi): the weights of '
                                                                               'every revision kept, plus the '
                                                                               'compile caches. Required without '
                                                                               'claimName.',
                                                                'x-kubernetes-int-or-string': True,
                                                                'anyOf': [{'type': 'integer'}, {'type': 'string'}]},
                                                       'storageClassName': {'type': 'string',
                                                                            'description': "The made claim's "
                                                                                           'StorageClass (default '
                                                                                           "the cluster's default "
                                                                                           'class).',
                                                                            'minLength': 1,
                                                                            'maxLength': 253},
                                                       'accessMode': {'type': 'string',
                                                                      'description': "The made claim's access "
                                                                                     'mode: ReadWriteMany '
                                                                                     '(default; pods of several '
                                                                                     'nodes share it) or '
                                                                                     'ReadWriteOnce (every serving '
                                                                                     'pod and the fetch Job on one '
                                                                                     'node).',
                                                                      'enum': ['ReadWriteMany', 'ReadWriteOnce'],
                                                                      'default': 'ReadWriteMany'},
                                                       'keep': {'type': 'boolean',
                                                                'description': 'Keep the made claim and the '
                                                                               'weights on it when the release is '
                                                                               'uninstalled (default true; '
                                                                               'helm.sh/resource-policy keep).',
                                                                'default': True},
                                                       'compileCache': {'type': 'boolean',
                                                                        'description': "Keep the engines' compile "
                                                                                       "caches (vLLM's "
                                                                                       'torch.compile cache, '
                                                                                       "Triton's and "
                                                                                       "TorchInductor's) on the "
                                                                                       'volume, one folder per '
                                                                                       'engine image, so a '
                                                                                       'restarted or added replica '
                                                                                       'does not compile again '
                                                                                       '(default true).',
                                                                        'default': True},
                                                       'fetch': {'type': 'object',
                                                                 'description': "The fetch Job's pod.",
                                                                 'properties': {'image': {'type': 'string',
                                                                                          'description': 'The '
                                                                                                         'image '
                                                                                                         'that '
                                                                                                         'fetches '
                                                                                                         '(default: '
                                                                                                         'the '
                                                                                                         'serving '
                                                                                                         "container's "
                                                                                                         'own, '
                                                                                                         'which '
                                                                                                         'has the '
                                                                                                         "hub's "
                                                                                                         'client, '
                                                                                                         'huggingface_hub, '
                                                                                                         'and '
                                                                                                         'boto3 '
                                                                                                         'for '
                                                                                                         's3://). '
                                                                                                         'It must '
                                                                                                         'have '
                                                                                                         'Python '
                                                                                                         '3.9 or '
                                                                                                         'later '
                                                                                                         'and the '
                                                                                                         'client '
                                                                                                         'of its '
                                                                                                         'source.',
                                                                                          'minLength': 1},
                                                                                'resources': {'type': 'object',
                                                                                              'description': 'The '
                                                                                                             'fetching '
                                                                                                             "container's "
                                                                                                             'resources '
                                                                                                             '(a '
                                                                                                             'ResourceRequirements; '
                                                                                                             'default: '
                                                                                                             'requests '
                                                                                                             'of '
                                                                                                             'half '
                                                                                                             'a '
                                                                                                             'core '
                                                                                                             'and '
                                                                                                             '1Gi '
                                                                                                             'of '
                                                                                                             'memory, '
                                                                                                             'a '
                                                                                                             'memory '
                                                                                                             'limit '
                                                                                                             'of '
                                                                                                             '4Gi).',
                                                                                              'x-kubernetes-preserve-unknown-fields': True},
                                                                                'backoffLimit': {'type': 'integer',
                                                                                                 'format': 'int32',
                                                                                                 'description': 'Retries '
                                                                                                                'of '
                                                                                                                'a '
                                                                                                                'failed '
                                                                                                                'fetch '
                                                                                                                '(default '
                                                                                                                '6); '
                                                                                                                'each '
                                                                                                                'retry '
                                                                                                                'keeps '
                                                                                                                'the '
                                                                                                                'files '
                                                                                                                'already '
                                                                                                                'complete.',
                                                                                                 'minimum': 0,
                                                                                                 'maximum': 100},
                                                                                'podAnnotations': {'type': 'object',
                                                                                                   'description': 'Annotations '
                                                                                                                  'for '
                                                                                                                  'the '
                                                                                                                  'fetch '
                                                                                                                  "Job's "
                                                                                                                  'pod '
                                                                                                                  '(a '
                                                                                                                  'service '
                                                                                                                  "mesh's: "
                                                                                                                  'a '
                                                                                                                  'Job '
                                                                                                                  'whose '
                                                                                                                  'pod '
                                                                                                                  'carries '
                                                                                                                  'a '
                                                                                                                  "mesh's "
                                                                                                                  'sidecar '
                                                                                                                  'never '
                                                                                                                  'completes '
                                                                                                                  'unless '
                                                                                                                  'the '
                                                                                                                  'mesh '
                                                                                                                  'is '
                                                                                                                  'told '
                                                                                                                  'to '
                                                                                                                  'leave '
                                                                                                                  'it '
                                                                                                                  'out).',
                                                                                                   'additionalProperties': {'type': 'string'}}}}}},
                         'layout': {'type': 'string',
                                    'description': 'replica (default): one LeaderWorkerSet per role replica, each '
                                                   'independent; a template change restarts every replica of the '
                                                   'role at once. role: one LeaderWorkerSet per role, its replicas '
                                                   "the LWS's groups; a template change rolls through them "
                                                   '(roles[].rollout) and a role can autoscale '
                                                   '(roles[].autoscaling). disaggregated (prefill/decode '
                                                   'services): one DisaggregatedSet whose roles roll together as '
                                                   'one revision, so a prefill and a decode of different revisions '
                                                   'never serve one request. Changing it on an installed service '
                                                   'restarts every pod. See docs/layouts.md.',
                                    'enum': ['replica', 'role', 'disaggregated'],
                                    'default': 'replica'},
                         'schedulingStrategy': {'type': 'object',
                                                'description': 'Pod-level scheduling policy.',
                                                'properties': {'schedulerName': {'type': 'string',
                                                                                 'description': 'Scheduler for the '
                                                                                                'pods. '
                                                                                                'Gang-scheduled '
                                                                                                'services default '
                                                                                                'to "volcano" and '
                                                                                                'accept no other; '
                                                                                                'others keep the '
                                                                                                "cluster's default "
                                                                                                'scheduler.',
                                                                                 'minLength': 1},
                                                               'queue': {'type': 'string',
                                                                         'description': 'The Volcano queue of the '
                                                                                        "service's PodGroup (its "
                                                                                        "spec.queue; Volcano's "
                                                                                        'default queue otherwise). '
                                                                                        'Gang-scheduled services '
                                                                                        'only; the pre-install '
                                                                                        'check refuses a queue '
                                                                                        'that does not exist or is '
                                                                                        'not Open.',
                                                                         'minLength': 1,
                                                                         'maxLength': 253,
                                                                         'pattern': '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'},
                                                               'priorityClassName': {'type': 'string',
                                                                                     'description': 'The '
                                                                                                    'PriorityClass '
                                                                                                    'of the '
                                                                                                    'service: its '
                                                                                                    "PodGroup's "
                                                                                                    'priority '
                                                                                                    'among '
                                                                                                    "Volcano's "
                                                                                                    'jobs, and '
                                                                                                    'every serving '
                                                                                                    "pod's "
                                                                                                    'priorityClassName '
                                                                                                    '(Kubernetes '
                                                                                                    'gives each '
                                                                                                    'pod its '
                                                                                                    'priority). '
                                                                                                    'The '
                                                                                                    'pre-install '
                                                                                                    'check refuses '
                                                                                                    'one that does '
                                                                                                    'not exist.',
                                                                                     'minLength': 1,
                                                                                     'maxLength': 253,
                                                                                     'pattern': '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'}}},
                         'gangSchedule': {'type': 'object',
                                          'description': 'Which pods Volcano must place together. Omitted, '
                                                         'multi-node and prefill/decode services are '
                                                         'gang-scheduled at level role and single-node monolithic '
                                                         'ones are not. Every replica is always atomic: all its '
                                                         'pods are placed, or none.',
                                          'properties': {'enable': {'type': 'boolean',
                                                                    'description': 'Gang-schedule the service (one '
                                                                                   'Volcano PodGroup). Default '
                                                                                   'true.',
                                                                    'default': True},
                                                         'level': {'type': 'string',
                                                                   'description': 'group: every replica of every '
                                                                                  'role together, all or nothing. '
                                                                                  'role: the first minRoleReplicas '
                                                                                  'replicas of each role together '
                                                                                  '(the atomic minimum), further '
                                                                                  'replicas each as capacity '
                                                                                  'allows.',
                                                                   'enum': ['group', 'role'],
                                                                   'default': 'role'},
                                                         'minRoleReplicas': {'type': 'object',
                                                                             'description': 'Level role: role name '
                                                                                            'to the number of its '
                                                                                            'replicas in the '
                                                                                            'atomic minimum '
                                                                                            '(default 1, at most '
                                                                                            "the role's replicas).",
                                                                             'additionalProperties': {'type': 'integer',
                                                                                                      'format': 'int32',
                                                                                                      'minimum': 1,
                                                                                                      'maximum': 2147483647}},
                                                         'networkTopology': {'type': 'object',
                                                                             'description': 'The default of every '
                                                                                            "serving role's "
                                                                                            'networkTopology: each '
                                                                                            "replica's pods within "
                                                                                            'one HyperNode of at '
                                                                                            'most the given tier '
                                                                                            "(a role's own "
                                                                                            'networkTopology '
                                                                                            'overrides it; mode '
                                                                                            'none there opts the '
                                                                                            'role out). Mode none '
                                                                                            'has no use here.',
                                                                             'properties': {'mode': {'type': 'string',
                                                                                                     'description': 'hard '
                                                                                                                    '(default): '
                                                                                                                    'never '
                                                                                                                    'beyond '
                                                                                                                    'the '
                                                                                                                    'tier; '
                                                                                                                    'a '
                                                                                                                    'replica '
                                                                                                                    'that '
                                                                                                                    'fits '
                                                                                                                    'in '
                                                                                                                    'no '
                                                                                                                    'domain '
                                                                                                                    'of '
                                                                                                                    'it '
                                                                                                                    'waits, '
                                                                                                                    'whole. '
                                                                                                                    'soft: '
                                                                                                                    'the '
                                                                                                                    'lowest '
                                                                                                                    'tier '
                                                                                                                    'that '
                                                                                                                    'fits '
                                                                                                                    'first, '
                                                                                                                    'then '
                                                                                                                    'any '
                                                                                                                    '(no '
                                                                                                                    'bound). '
                                                                                                                    'none: '
                                                                                                                    'no '
                                                                                                                    'constraint '
                                                                                                                    'for '
                                                                                                                    'this '
                                                                                                                    "role's "
                                                                                                                    'replicas '
                                                                                                                    '(a '
                                                                                                                    'role '
                                                                                                                    'only).',
                                                                                                     'enum': ['hard',
                                                                                                              'soft',
                                                                                                              'none']},
                                                                                            'highestTierAllowed': {'type': 'integer',
                                                                                                                   'format': 'int32',
                                                                                                                   'description': 'Mode '
                                                                                                                                  'hard '
                                                                                                                                  '- '
                                                                                                                                  'the '
                                                                                                                                  'highest '
                                                                                                                                  'tier '
                                                                                                                                  'number '
                                                                                                                                  '(from '
                                                                                                                                  '1) '
                                                                                                                                  'the '
                                                                                                                                  'pods '
                                                                                                                                  'may '
                                                                                                                                  'span.',
                                                                                                                   'minimum': 1,
                                                                                                                   'maximum': 2147483647},
                                                                                            'highestTierName': {'type': 'string',
                                                                                                                'description': 'Mode '
                                                                                                                               'hard '
                                                                                                                               '- '
                                                                                                                               'the '
                                                                                                                               'highest '
                                                                                                                               'tier '
                                                                                                                               'by '
                                                                                                                               'its '
                                                                                                                               "HyperNodes' "
                                                                                                                               'tierName '
                                                                                                                               '(such '
                                                                                                                               'as '
                                                                                                                               'rack).',
                                                                                                                'minLength': 1,
                                                                                                                'maxLength': 253}}},
                                                         'serviceNetworkTopology': {'type': 'object',
                                                                                    'description': "The PodGroup's "
                                                                                                   'own network '
                                                                                                   'topology: '
                                                                                                   'every pod of '
                                                                                                   'the service, '
                                                                                                   'each replica '
                                                                                                   'of each role, '
                                                                                                   'within one '
                                                                                                   'HyperNode of '
                                                                                                   'at most the '
                                                                                                   'given tier '
                                                                                                   '(such as '
                                                                                                   'prefill and '
                                                                                                   'decode within '
                                                                                                   'one spine for '
                                                                                                   'their KV-cache '
                                                                                                   'transfers). '
                                                                                                   'Volcano places '
                                                                                                   'later replicas '
                                                                                                   'under the '
                                                                                                   'domain it '
                                                                                                   'chose first, '
                                                                                                   'so the whole '
                                                                                                   'service must '
                                                                                                   'fit in it. '
                                                                                                   'Mode none has '
                                                                                                   'no use here.',
                                                                                    'properties': {'mode': {'type': 'string',
                                                                                                            'description': 'hard '
                                                                                                                           '(default): '
                                                                                                                           'never '
                                                                                                                           'beyond '
                                                                                                                           'the '
                                                                                                                           'tier; '
                                                                                                                           'a '
                                                                                                                           'replica '
                                                                                                                           'that '
                                                                                                                           'fits '
                                                                                                                           'in '
                                                                                                                           'no '
                                                                                                                           'domain '
                                                                                                                           'of '
                                                                                                                           'it '
                                                                                                                           'waits, '
                                                                                                                           'whole. '
                                                                                                                           'soft: '
                                                                                                                           'the '
                                                                                                                           'lowest '
                                                                                                                           'tier '
                                                                                                                           'that '
                                                                                                                           'fits '
                                                                                                                           'first, '
                                                                                                                           'then '
                                                                                                                           'any '
                                                                                                                           '(no '
                                                                                                                           'bound). '
                                                                                                                           'none: '
                                                                                                                           'no '
                                                                                                                           'constraint '
                                                                                                                           'for '
                                                                                                                           'this '
                                                                                                                           "role's "
                                                                                                                           'replicas '
                                                                                                                           '(a '
                                                                                                                           'role '
                                                                                                                           'only).',
                                                                                                            'enum': ['hard',
                                                                                                                     'soft',
                                                                                                                     'none']},
                                                                                                   'highestTierAllowed': {'type': 'integer',
                                                                                                                          'format': 'int32',
                                                                                                                          'description': 'Mode '
                                                                                                                                         'hard '
                                                                                                                                         '- '
                                                                                                                                         'the '
                                                                                                                                         'highest '
                                                                                                                                         'tier '
                                                                                                                                         'number '
                                                                                                                                         '(from '
                                                                                                                                         '1) '
                                                                                                                                         'the '
                                                                                                                                         'pods '
                                                                                                                                         'may '
                                                                                                                                         'span.',
                                                                                                                          'minimum': 1,
                                                                                                                          'maximum': 2147483647},
                                                                                                   'highestTierName': {'type': 'string',
                                                                                                                       'description': 'Mode '
                                                                                                                                      'hard '
                                                                                                                                      '- '
                                                                                                                                      'the '
                                                                                                                                      'highest '
                                                                                                                                      'tier '
                                                                                                                                      'by '
                                                                                                                                      'its '
                                                                                                                                      "HyperNodes' "
                                                                                                                                      'tierName '
                                                                                                                                      '(such '
                                                                                                                                      'as '
                                                                                                                                      'rack).',
                                                                                                                       'minLength': 1,
                                                                                                                       'maxLength': 253}}}}},
                         'service': {'type': 'object',
                                     'description': "A Service over every serving role's serving pods, named "
                                                    '<service>-serving, for clients that call the service without '
                                                    'a Gateway (a monolithic service of several worker roles); the '
                                                    "roles must serve on one port. As a role's service otherwise.",
                                     'properties': {'type': {'type': 'string',
                                                             'description': 'ClusterIP (the default), NodePort or '
                                                                            'LoadBalancer.',
                                                             'enum': ['ClusterIP', 'NodePort', 'LoadBalancer']},
                                                    'headless': {'type': 'boolean',
                                                                 'description': 'No cluster IP (clusterIP None): '
                                                                                'DNS answers with the serving '
                                                                                "pods' own addresses, for clients "
                                                                                'that balance over them '
                                                                                'themselves. ClusterIP only. '
                                                                                'Default false.'},
                                                    'annotations': {'type': 'object',
                                                                    'description': "The Service's annotations (a "
                                                                                   "load balancer's, a mesh's).",
                                                                    'additionalProperties': {'type': 'string'}}}},
                         'tls': {'type': 'object',
                                 'description': 'TLS between the gateway, the prefill/decode sidecar and the '
                                                'engines, as KServe runs it: every serving pod mounts the Secret '
                                                '(kubernetes.io/tls: tls.crt, tls.key, and ca.crt to verify peers '
                                                "with) read-only, the engines serve HTTPS with it (vLLM's and "
                                                "SGLang's --ssl-certfile and --ssl-keyfile; vLLM reloads it when "
                                                'it changes), their probes ask in HTTPS, the prefill/decode '
                                                "sidecar serves and dials in TLS, the picker scrapes the engines' "
                                                'metrics in HTTPS, and Services name their ports https. The '
                                                "InferencePool API has no field for a backend's TLS: the gateway's "
                                                'own backend-TLS setting names it (docs/router.md).',
                                 'properties': {'secretName': {'type': 'string',
                                                               'description': 'The Secret holding the serving '
                                                                              "certificate, in the service's "
                                                                              'namespace: required, unless '
                                                                              'certManager writes it (then default '
                                                                              '<service>-serving-tls).',
                                                               'minLength': 1,
                                                               'maxLength': 253,
                                                               'pattern': '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'},
                                                'certManager': {'type': 'object',
                                                                'description': 'A cert-manager Certificate '
                                                                               '(cert-manager.io/v1) writes the '
                                                                               'Secret, from the issuer named '
                                                                               'here, for localhost, 127.0.0.1 and '
                                                                               "the service's Services, and renews "
                                                                               'it (the engines and the sidecar '
                                                                               'read a renewed certificate without '
                                                                               'a restart). The pre-install check '
                                                                               'requires its API.',
                                                                'required': ['issuerRef'],
                                                                'properties': {'issuerRef': {'type': 'object',
                                                                                             'description': 'The '
                                                                                                            'Issuer '
                                                                                                            'or '
                                                                                                            'ClusterIssuer '
                                                                                                            'that '
                                                                                                            'signs '
                                                                                                            'it.',
                                                                                             'required': ['name'],
                                                                                             'properties': {'name': {'type': 'string',
                                                                                                                     'minLength': 1},
                                                                                                            'kind': {'type': 'string',
                                                                                                                     'description': 'Issuer '
                                                                                                                                    '(the '
                                                                                                                                    'default) '
                                                                                                                                    'or '
                                                                                                                                    'ClusterIssuer.',
                                                                                                                     'enum': ['Issuer',
                                                                                                                              'ClusterIssuer']},
                                                                                                            'group': {'type': 'string',
                                                                                                                      'description': 'The '
                                                                                                                                     "issuer's "
                                                                                                                                     'API '
                                                                                                                                     'group '
                                                                                                                                     '(default '
                                                                                                                                     'cert-manager.io).',
                                                                                                                      'minLength': 1}}},
                                                                               'duration': {'type': 'string',
                                                                                            'description': 'How '
                                                                                                           'long a '
                                                                                                           'certificate '
                                                                                                           'is '
                                                                                                           'valid, '
                                                                                                           'a Go '
                                                                                                           'duration '
                                                                                                           'such '
                                                                                                           'as '
                                                                                                           '2160h '
                                                                                                           '(the '
                                                                                                           "issuer's "
                                                                                                           'default).',
                                                                                            'minLength': 1},
                                                                               'renewBefore': {'type': 'string',
                                                                                               'description': 'How '
                                                                                                              'long '
                                                                                                              'before '
                                                                                                              'it '
                                                                                                              'expires '
                                                                                                              'it '
                                                                                                              'is '
                                                                                                              'renewed '
                                                                                                              "(cert-manager's "
                                                                                                              'default, '
                                                                                                              'a '
                                                                                                              'third '
                                                                                                              'of '
                                                                                                              'it).',
                                                                                               'minLength': 1}}},
                                                'verifyPeers': {'type': 'boolean',
                                                                'description': "The sidecar verifies the engines' "
                                                                               "certificates against the Secret's "
                                                                               "ca.crt (the prefill engine's by "
                                                                               'its pod address, the decode '
                                                                               "engine's as localhost). Default "
                                                                               'false: encrypted, not verified, '
                                                                               'since a certificate issued ahead '
                                                                               'names no pod address.'}}},
                         'monitoring': {'type': 'object',
                                        'description': 'Prometheus Operator monitors (monitoring.coreos.com/v1; '
                                                       'the pre-install check requires the API where they are '
                                                       'enabled). See docs/monitoring.md.',
                                        'properties': {'podMonitor': {'type': 'object',
                                                                      'description': 'One PodMonitor per serving '
                                                                                     "role, scraping vLLM's "
                                                                                     '/metrics on the serving port '
                                                                                     "of each replica's leader "
                                                                                     '(the pod that runs the '
                                                                                     "engine's API server: a "
                                                                                     "multi-node replica's other "
                                                                                     'pods serve none), and one '
                                                                                     "for a router's endpoint "
                                                                                     'picker (its metrics port, '
                                                                                     "9090). The pods' service, "
                                                                                     'role and component-type '
                                                                                     "labels become the metrics' "
                                                                                     'labels.',
                                                                      'properties': {'enabled': {'type': 'boolean',
                                                                                                 'description': 'Create '
                                                                                                                'the '
                                                                                                                'PodMonitors. '
                                                                                                                'Default '
                                                                                                                'false.',
                                                                                                 'default': False},
                                                                                     'interval': {'type': 'string',
                                                                                                  'description': 'How '
                                                                                                                 'often '
                                                                                                                 'Prometheus '
                                                                                                                 'scrapes, '
                                                                                                                 'as '
                                                                                                                 'a '
                                                                                                                 'Prometheus '
                                                                                                                 'duration '
                                                                                                                 '(e.g. '
                                                                                                                 '30s); '
                                                                                                                 'default '
                                                                                                                 'its '
                                                                                                                 'global '
                                                                                                                 'scrape '
                                                                                                                 'interval.'},
                                                                                     'labels': {'type': 'object',
                                                                                                'description': 'Labels '
                                                                                                               'of '
                                                                                                               'every '
                                                                                                               'PodMonitor, '
                                                                                                               'such '
                                                                                                               'as '
                                                                                                               'the '
                                                                                                               'one '
                                                                                                               'a '
                                                                                                               "Prometheus's "
                                                                                                               'podMonitorSelector '
                                                                                                               'matches '
                                                                                                               '(e.g. '
                                                                                                               'release: '
                                                                                                               'kube-prometheus-stack).',
                                                                                                'additionalProperties': {'type': 'string'}},
                                                                                     'pickerAuthorization': {'type': 'object',
                                                                                                             'description': 'The '
                                                                                                                            'picker '
                                                                                                                            "endpoint's "
                                                                                                                            'authorization, '
                                                                                                                            'as '
                                                                                                                            'a '
                                                                                                                            'PodMonitor '
                                                                                                                            "endpoint's "
                                                                                                                            '(e.g. '
                                                                                                                            '{type: '
                                                                                                                            'Bearer, '
                                                                                                                            'credentials: '
                                                                                                                            '{name: '
                                                                                                                            'SECRET, '
                                                                                                                            'key: '
                                                                                                                            'token}}): '
                                                                                                                            'the '
                                                                                                                            "picker's "
                                                                                                                            'metrics '
                                                                                                                            'endpoint '
                                                                                                                            'serves '
                                                                                                                            'only '
                                                                                                                            'tokens '
                                                                                                                            'the '
                                                                                                                            'API '
                                                                                                                            'server '
                                                                                                                            'authenticates '
                                                                                                                            'and '
                                                                                                                            'allows '
                                                                                                                            'to '
                                                                                                                            'get '
                                                                                                                            '/metrics.',
                                                                                                             'x-kubernetes-preserve-unknown-fields': True}}}}},
                         'networkPolicy': {'type': 'object',
                                           'description': 'NetworkPolicies (networking.k8s.io/v1) for every pod '
                                                          'the service runs, on by default: each admits exactly '
                                                          'the connections the service needs (docs/security.md) — '
                                                          "the Gateway's pods to the pods its route sends to, the "
                                                          "picker and Prometheus to the metrics, a replica's own "
                                                          'pods to its bootstrap ports, the prefill/decode pods to '
                                                          'each other, the frontends to their serving pods, the '
                                                          'clients to the Services and frontends — and refuses the '
                                                          "rest. They take effect only where the cluster's network "
                                                          'plugin enforces NetworkPolicies.',
                                           'properties': {'enabled': {'type': 'boolean',
                                                                      'description': 'Render the policies. Default '
                                                                                     'true; false renders none '
                                                                                     "(not even the picker's).",
                                                                      'default': True},
                                                          'gateway': {'type': 'object',
                                                                      'description': "The Gateway's pods, which "
                                                                                     "send requests to the pool's "
                                                                                     'pods and call the picker. '
                                                                                     'Default: every pod of the '
                                                                                     "Gateway's namespace (the "
                                                                                     "shared Gateway's, else the "
                                                                                     "service's own); name them "
                                                                                     'where your Gateway '
                                                                                     'implementation runs its '
                                                                                     'proxies elsewhere (Envoy '
                                                                                     'Gateway: '
                                                                                     'envoy-gateway-system).',
                                                                      'minProperties': 1,
                                                                      'properties': {'podLabels': {'type': 'object',
                                                                                                   'description': 'Labels '
                                                                                                                  'the '
                                                                                                                  'pods '
                                                                                                                  'carry.',
                                                                                                   'additionalProperties': {'type': 'string'}},
                                                                                     'namespaceLabels': {'type': 'object',
                                                                                                         'description': 'Labels '
                                                                                                                        'their '
                                                                                                                        'namespaces '
                                                                                                                        'carry '
                                                                                                                        '(kubernetes.io/metadata.name '
                                                                                                                        'names '
                                                                                                                        'one).',
                                                                                                         'additionalProperties': {'type': 'string'}}}},
                                                          'prometheus': {'type': 'object',
                                                                         'description': "Prometheus's pods, which "
                                                                                        "scrape the serving pods' "
                                                                                        "and the picker's metrics. "
                                                                                        'Default: every pod of the '
                                                                                        "namespace a role's "
                                                                                        'autoscaling.prometheus.serverAddress '
                                                                                        'names '
                                                                                        '(http://NAME.NAMESPACE[.svc…]), '
                                                                                        'else none; required with '
                                                                                        'spec.monitoring.podMonitor '
                                                                                        'where no address names '
                                                                                        'one.',
                                                                         'minProperties': 1,
                                                                         'properties': {'podLabels': {'type': 'object',
                                                                                                      'description': 'Labels '
                                                                                                                     'the '
                                                                                                                     'pods '
                                                                                                                     'carry.',
                                                                                                      'additionalProperties': {'type': 'string'}},
                                                                                        'namespaceLabels': {'type': 'object',
                                                                                                            'description': 'Labels '
                                                                                                                           'their '
                                                                                                                           'namespaces '
                                                                                                                           'carry '
                                                                                                                           '(kubernetes.io/metadata.name '
                                                                                                                           'names '
                                                                                                                           'one).',
                                                                                                            'additionalProperties': {'type': 'string'}}}},
                                                          'clients': {'type': 'object',
                                                                      'description': 'Who may call the serving '
                                                                                     'pods through spec.service '
                                                                                     'and roles[].service, and the '
                                                                                     'frontends; on a service '
                                                                                     'without a router, who may '
                                                                                     'call its serving pods. '
                                                                                     'Default: every pod of the '
                                                                                     "service's namespace.",
                                                                      'minProperties': 1,
                                                                      'properties': {'podLabels': {'type': 'object',
                                                                                                   'description': 'Labels '
                                                                                                                  'the '
                                                                                                                  'pods '
                                                                                                                  'carry.',
                                                                                                   'additionalProperties': {'type': 'string'}},
                                                                                     'namespaceLabels': {'type': 'object',
                                                                                                         'description': 'Labels '
                                                                                                                        'their '
                                                                                                                        'namespaces '
                                                                                                                        'carry '
                                                                                                                        '(kubernetes.io/metadata.name '
                                                                                                                        'names '
                                                                                                                        'one).',
                                                                                                         'additionalProperties': {'type': 'string'}}}},
                                                          'ingress': {'type': 'array',
                                                                      'description': 'More sources admitted to '
                                                                                     'every serving pod.',
                                                                      'items': {'type': 'object',
                                                                                'description': 'Pods by their '
                                                                                               'labels (podLabels '
                                                                                               'alone: of the '
                                                                                               "service's "
                                                                                               'namespace; '
                                                                                               'namespaceLabels: '
                                                                                               'of the namespaces '
                                                                                               'they select), or '
                                                                                               'addresses (cidr), '
                                                                                               'and the ports '
                                                                                               '(TCP; all if '
                                                                                               'omitted).',
                                                                                'minProperties': 1,
                                                                                'properties': {'podLabels': {'type': 'object',
                                                                                                             'description': 'Labels '
                                                                                                                            'the '
                                                                                                                            'pods '
                                                                                                                            'carry.',
                                                                                                             'additionalProperties': {'type': 'string'}},
                                                                                               'namespaceLabels': {'type': 'object',
                                                                                                                   'description': 'Labels '
                                                                                                                                  'their '
                                                                                                                                  'namespaces '
                                                                                                                                  'carry '
                                                                                                                                  '(kubernetes.io/metadata.name '
                                                                                                                                  'names '
                                                                                                                                  'one).',
                                                                                                                   'additionalProperties': {'type': 'string'}},
                                                                                               'cidr': {'type': 'string',
                                                                                                        'description': 'Addresses, '
                                                                                                                       'as '
                                                                                                                       'a '
                                                                                                                       'CIDR '
                                                                                                                       '(e.g. '
                                                                                                                       '10.0.0.0/8), '
                                                                                                                       'instead '
                                                                                                                       'of '
                                                                                                                       'labels.'},
                                                                                               'ports': {'type': 'array',
                                                                                                         'description': 'The '
                                                                                                                        'TCP '
                                                                                                                        'ports; '
                                                                                                                        'all '
                                                                                                                        'if '
                                                                                                                        'omitted.',
                                                                                                         'items': {'type': 'integer',
                                                                                                                   'minimum': 1,
                                                                                                                   'maximum': 65535}}}}},
                                                          'egress': {'type': 'object',
                                                                     'description': 'Egress is not restricted '
                                                                                    'unless restrict is true. '
                                                                                    'Restricted, a pod may reach '
                                                                                    "the cluster's DNS (kube-dns "
                                                                                    'in kube-system), the '
                                                                                    "service's own pods it talks "
                                                                                    'to (its replica group, the '
                                                                                    'prefill/decode peers, the '
                                                                                    "picker's and frontends' "
                                                                                    'serving pods), the API server '
                                                                                    'where it calls it (the '
                                                                                    'picker, the prefill/decode '
                                                                                    'sidecar, the frontends) and '
                                                                                    'what `to` adds: a serving pod '
                                                                                    'that reads a model cache '
                                                                                    'needs nothing more; one that '
                                                                                    'downloads its weights, and '
                                                                                    'the fetch Jobs, need the hub '
                                                                                    'in `to`.',
                                                                     'properties': {'restrict': {'type': 'boolean',
                                                                                                 'description': 'Restrict '
                                                                                                                'egress. '
                                                                                                                'Default '
                                                                                                                'false.',
                                                                                                 'default': False},
                                                                                    'apiServer': {'type': 'array',
                                                                                                  'description': 'The '
                                                                                                                 'API '
                                                                                                                 "server's "
                                                                                                                 'addresses '
                                                                                                                 '(CIDRs, '
                                                                                                                 'e.g. '
                                                                                                                 '172.20.0.1/32 '
                                                                                                                 'and '
                                                                                                                 'the '
                                                                                                                 'control '
                                                                                                                 "plane's "
                                                                                                                 'own), '
                                                                                                                 'required '
                                                                                                                 'with '
                                                                                                                 'restrict '
                                                                                                                 'where '
                                                                                                                 'a '
                                                                                                                 'pod '
                                                                                                                 'calls '
                                                                                                                 'the '
                                                                                                                 'API '
                                                                                                                 'server.',
                                                                                                  'items': {'type': 'string'}},
                                                                                    'to': {'type': 'array',
                                                                                           'description': 'More '
                                                                                                          'destinations '
                                                                                                          'for '
                                                                                                          'every '
                                                                                                          'pod (a '
                                                                                                          'model '
                                                                                                          'hub, an '
                                                                                                          'object '
                                                                                                          'store, '
                                                                                                          'a '
                                                                                                          'proxy).',
                                                                                           'items': {'type': 'object',
                                                                                                     'description': 'Pods '
                                                                                                                    'by '
                                                                                                                    'their '
                                                                                                                    'labels '
                                                                                                                    '(podLabels '
                                                                                                                    'alone: '
                                                                                                                    'of '
                                                                                                                    'the '
                                                                                                                    "service's "
                                                                                                                    'namespace; '
                                                                                                                    'namespaceLabels: '
                                                                                                                    'of '
                                                                                                                    'the '
                                                                                                                    'namespaces '
                                                                                                                    'they '
                                                                                                                    'select), '
                                                                                                                    'or '
                                                                                                                    'addresses '
                                                                                                                    '(cidr), '
                                                                                                                    'and '
                                                                                                                    'the '
                                                                                                                    'ports '
                                                                                                                    '(TCP; '
                                                                                                                    'all '
                                                                                                                    'if '
                                                                                                                    'omitted).',
                                                                                                     'minProperties': 1,
                                                                                                     'properties': {'podLabels': {'type': 'object',
                                                                                                                                  'description': 'Labels '
                                                                                                                                                 'the '
                                                                                                                                                 'pods '
                                                                                                                                                 'carry.',
                                                                                                                                  'additionalProperties': {'type': 'string'}},
                                                                                                                    'namespaceLabels': {'type': 'object',
                                                                                                                                        'description': 'Labels '
                                                                                                                                                       'their '
                                                                                                                                                       'namespaces '
                                                                                                                                                       'carry '
                                                                                                                                                       '(kubernetes.io/metadata.name '
                                                                                                                                                       'names '
                                                                                                                                                       'one).',
                                                                                                                                        'additionalProperties': {'type': 'string'}},
                                                                                                                    'cidr': {'type': 'string',
                                                                                                                             'description': 'Addresses, '
                                                                                                                                            'as '
                                                                                                                                            'a '
                                                                                                                                            'CIDR '
                                                                                                                                            '(e.g. '
                                                                                                                                            '10.0.0.0/8), '
                                                                                                                                            'instead '
                                                                                                                                            'of '
                                                                                                                                            'labels.'},
                                                                                                                    'ports': {'type': 'array',
                                                                                                                              'description': 'The '
                                                                                                                                             'TCP '
                                                                                                                                             'ports; '
                                                                                                                                             'all '
                                                                                                                                             'if '
                                                                                                                                             'omitted.',
                                                                                                                              'items': {'type': 'integer',
                                                                                                                                        'minimum': 1,
                                                                                                                                        'maximum': 65535}}}}}}}}}}},
 'status': {'type': 'object',
            'properties': {'observedGeneration': {'type': 'integer', 'format': 'int64'},
                           'conditions': {'type': 'array',
                                          'x-kubernetes-list-type': 'map',
                                          'x-kubernetes-list-map-keys': ['type'],
                                          'items': {'type': 'object',
                                                    'required': ['type',
                                                                 'status',
                                                                 'lastTransitionTime',
                                                                 'reason',
                                                                 'message'],
                                                    'properties': {'type': {'type': 'string', 'maxLength': 316},
                                                                   'status': {'type': 'string',
                                                                              'enum': ['True', 'False', 'Unknown']},
                                                                   'observedGeneration': {'type': 'integer',
                                                                                          'format': 'int64',
                                                                                          'minimum': 0},
                                                                   'lastTransitionTime': {'type': 'string',
                                                                                          'format': 'date-time'},
                                                                   'reason': {'type': 'string', 'maxLength': 1024},
                                                                   'message': {'type': 'string',
                                                                               'maxLength': 32768}}}},
                           'components': {'type': 'object',
                                          'description': 'Per-role status, keyed by role name.',
                                          'additionalProperties': {'type': 'object',
                                                                   'required': ['desiredReplicas',
                                                                                'readyReplicas',
                                                                                'nodesPerReplica',
                                                                                'totalPods',
                                                                                'readyPods',
                                                                                'phase'],
                                                                   'properties': {'desiredReplicas': {'type': 'integer',
                                                                                                      'format': 'int32'},
                                                                                  'readyReplicas': {'type': 'integer',
                                                                                                    'format': 'int32'},
                                                                                  'nodesPerReplica': {'type': 'integer',
                                                                                                      'format': 'int32'},
                                                                                  'totalPods': {'type': 'integer',
                                                                                                'format': 'int32'},
                                                                                  'readyPods': {'type': 'integer',
                                                                                                'format': 'int32'},
                                                                                  'phase': {'type': 'string',
                                                                                            'enum': ['Pending',
                                                                                                     'Deploying',
                                                                                                     'Running',
                                                                                                     'Failed',
                                                                                                     'Unknown']},
                                                                                  'lastUpdateTime': {'type': 'string',
                                                                                                     'format': 'date-time'}}}}}}}

SPEC_SCHEMA: dict[str, Any] = {'$schema': 'http://json-schema.org/draft-07/schema#',
 'type': 'object',
 'description': 'The desired serving topology.',
 'required': ['roles'],
 'properties': {'roles': {'type': 'array',
                          'description': 'Logical components of the inference topology, each a user-named role.',
                          'minItems': 1,
                          'items': {'type': 'object',
                                    'required': ['name', 'componentType'],
                                    'properties': {'name': {'type': 'string',
                                                            'description': 'Unique name of the role; part of every '
                                                                           "generated object's name.",
                                                            'minLength': 1,
                                                            'maxLength': 63,
                                                            'pattern': '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'},
                                                   'componentType': {'type': 'string',
                                                                     'description': 'worker (monolithic), '
                                                                                    'prefiller, decoder, router '
                                                                                    '(the Gateway API Inference '
                                                                                    "Extension's endpoint picker "
                                                                                    'and routing objects) or '
                                                                                    'frontend (a router of the '
                                                                                    "engines' own, such as "
                                                                                    "SGLang's, as a Deployment "
                                                                                    'that finds the serving pods '
                                                                                    'itself: see frontend).',
                                                                     'enum': ['worker',
                                                                              'prefiller',
                                                                              'decoder',
                                                                              'router',
                                                                              'frontend']},
                                                   'replicas': {'type': 'integer',
                                                                'description': 'Serving instances of the role '
                                                                               '(default 1, at most 10000; not on '
                                                                               "a router; a frontend's pods, "
                                                                               'default 2): in layout replica one '
                                                                               'LeaderWorkerSet each, in role and '
                                                                               'disaggregated the groups of the '
                                                                               "role's LeaderWorkerSet.",
                                                                'minimum': 0,
                                                                'maximum': 10000},
                                                   'rollout': {'type': 'object',
                                                               'description': 'Layouts role and disaggregated: how '
                                                                              'a template change rolls through the '
                                                                              "role's groups (its "
                                                                              "LeaderWorkerSet's "
                                                                              'rolloutStrategy.rollingUpdateConfiguration, '
                                                                              'rolled by the LWS controller; in '
                                                                              'layout disaggregated the '
                                                                              "DisaggregatedSet role's, rolled "
                                                                              'with the other roles as one '
                                                                              'revision).',
                                                               'properties': {'maxUnavailable': {'description': 'Groups '
                                                                                                                '(replicas) '
                                                                                                                'that '
                                                                                                                'may '
                                                                                                                'be '
                                                                                                                'down '
                                                                                                                'during '
                                                                                                                'the '
                                                                                                                'rollout: '
                                                                                                                'a '
                                                                                                                'count '
                                                                                                                '(>= '
                                                                                                                '0) '
                                                                                                                'or '
                                                                                                                'a '
                                                                                                                'percentage '
                                                                                                                '("25%", '
                                                                                                                'at '
                                                                                                                'most '
                                                                                                                '100%) '
                                                                                                                'of '
                                                                                                                'the '
                                                                                                                'replicas, '
                                                                                                                'rounded '
                                                                                                                'down '
                                                                                                                '(default '
                                                                                                                '1; '
                                                                                                                'layout '
                                                                                                                'disaggregated '
                                                                                                                '0). '
                                                                                                                'Not '
                                                                                                                '0 '
                                                                                                                'together '
                                                                                                                'with '
                                                                                                                'maxSurge '
                                                                                                                '0.',
                                                                                                 'anyOf': [{'type': 'integer'},
                                                                                                           {'type': 'string'}]},
                                                                              'maxSurge': {'description': 'Extra '
                                                                                                          'groups '
                                                                                                          'created '
                                                                                                          'during '
                                                                                                          'the '
                                                                                                          'rollout: '
                                                                                                          'a count '
                                                                                                          '(>= 0) '
                                                                                                          'or a '
                                                                                                          'percentage '
                                                                                                          '(at '
                                                                                                          'most '
                                                                                                          '100%) '
                                                                                                          'of the '
                                                                                                          'replicas, '
                                                                                                          'rounded '
                                                                                                          'up '
                                                                                                          '(default '
                                                                                                          '0; '
                                                                                                          'layout '
                                                                                                          'disaggregated '
                                                                                                          '1). '
                                                                                                          'Each is '
                                                                                                          'placed '
                                                                                                          'whole, '
                                                                                                          'as '
                                                                                                          'capacity '
                                                                                                          'allows '
                                                                                                          '(it is '
                                                                                                          'never '
                                                                                                          'in the '
                                                                                                          "gang's "
                                                                                                          'atomic '
                                                                                                          'minimum).',
                                                                                           'anyOf': [{'type': 'integer'},
                                                                                                     {'type': 'string'}]},
                                                                              'partition': {'type': 'integer',
                                                                                            'description': 'Layout '
                                                                                                           'role: '
                                                                                                           'groups '
                                                                                                           'with '
                                                                                                           'an '
                                                                                                           'index '
                                                                                                           'below '
                                                                                                           'this '
                                                                                                           'keep '
                                                                                                           'the '
                                                                                                           'old '
                                                                                                           'template '
                                                                                                           '(a '
                                                                                                           'canary '
                                                                                                           'updates '
                                                                                                           'the '
                                                                                                           'groups '
                                                                                                           'from '
                                                                                                           'partition '
                                                                                                           'up). '
                                                                                                           'Default '
                                                                                                           '0: '
                                                                                                           'every '
                                                                                                           'group. '
                                                                                                           'A '
                                                                                                           'DisaggregatedSet '
                                                                                                           'has '
                                                                                                           'none.',
                                                                                            'minimum': 0,
                                                                                            'maximum': 2147483647}},
                                                               'additionalProperties': False},
                                                   'model': {'type': 'object',
                                                             'description': "Where the role's weights come from "
                                                                            '(default: spec.model). hf://ORG/NAME '
                                                                            'at a pinned revision, '
                                                                            'pvc://CLAIM/PATH (weights already on '
                                                                            'a volume of the namespace) or '
                                                                            's3://BUCKET/PREFIX (an S3-compatible '
                                                                            'store). With spec.modelCache, hf:// '
                                                                            'and s3:// are fetched once per '
                                                                            'service and revision onto the cache '
                                                                            'volume and every serving pod reads '
                                                                            'them from it, hub access off; the '
                                                                            'engine is given the local path, and '
                                                                            'the model name clients ask for stays '
                                                                            "what the container's command names "
                                                                            "(or the source's ORG/NAME). See "
                                                                            'docs/models.md.',
                                                             'required': ['source'],
                                                             'properties': {'source': {'type': 'string',
                                                                                       'description': 'hf://ORG/NAME, '
                                                                                                      'pvc://CLAIM/PATH '
                                                                                                      'or '
                                                                                                      's3://BUCKET/PREFIX.',
                                                                                       'pattern': '^(hf://[A-Za-z0-9][-A-Za-z0-9_.]*/[A-Za-z0-9][-A-Za-z0-9_.]*|pvc://[a-z0-9]([-a-z0-9.]*[a-z0-9])?(/[^/\\x00]+)*/?|s3://[a-z0-9][-a-z0-9.]{1,61}[a-z0-9](/[^\\x00]*)?)$',
                                                                                       'maxLength': 1024},
                                                                            'revision': {'type': 'string',
                                                                                         'description': 'hf://: '
                                                                                                        'the '
                                                                                                        'commit '
                                                                                                        '(40 '
                                                                                                        'hexadecimal '
                                                                                                        'digits) '
                                                                                                        'to serve: '
                                                                                                        'a branch '
                                                                                                        'would '
                                                                                                        'move '
                                                                                                        'under a '
                                                                                                        'running '
                                                                                                        'service. '
                                                                                                        's3://: a '
                                                                                                        'name for '
                                                                                                        'what the '
                                                                                                        'prefix '
                                                                                                        'holds now '
                                                                                                        '(default '
                                                                                                        '"current"); '
                                                                                                        'a new '
                                                                                                        'name '
                                                                                                        'fetches '
                                                                                                        'it again, '
                                                                                                        'beside '
                                                                                                        'the old. '
                                                                                                        'Not for '
                                                                                                        'pvc://.',
                                                                                         'pattern': '^[A-Za-z0-9][-A-Za-z0-9_.]{0,127}$'},
                                                                            'credentials': {'type': 'object',
                                                                                            'description': 'A '
                                                                                                           'Secret '
                                                                                                           'of the '
                                                                                                           "service's "
                                                                                                           'namespace '
                                                                                                           'holding '
                                                                                                           'the '
                                                                                                           'credentials: '
                                                                                                           'for '
                                                                                                           'hf://, '
                                                                                                           'key '
                                                                                                           'token '
                                                                                                           '(a '
                                                                                                           'Hugging '
                                                                                                           'Face '
                                                                                                           'access '
                                                                                                           'token); '
                                                                                                           'for '
                                                                                                           's3://, '
                                                                                                           'keys '
                                                                                                           'AWS_ACCESS_KEY_ID '
                                                                                                           'and '
                                                                                                           'AWS_SECRET_ACCESS_KEY. '
                                                                                                           'Read '
                                                                                                           'only '
                                                                                                           'by the '
                                                                                                           'fetch '
                                                                                                           'Job '
                                                                                                           '(and '
                                                                                                           'the '
                                                                                                           'engine '
                                                                                                           'where '
                                                                                                           'nothing '
                                                                                                           'is '
                                                                                                           'cached); '
                                                                                                           'never '
                                                                                                           'in '
                                                                                                           'values.',
                                                                                            'required': ['secretName'],
                                                                                            'properties': {'secretName': {'type': 'string',
                                                                                                                          'minLength': 1,
                                                                                                                          'maxLength': 253,
                                                                                                                          'pattern': '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'}},
                                                                                            'additionalProperties': False},
                                                                            'endpoint': {'type': 'string',
                                                                                         'description': 'hf://: a '
                                                                                                        'hub '
                                                                                                        "mirror's "
                                                                                                        'URL '
                                                                                                        '(HF_ENDPOINT; '
                                                                                                        'default '
                                                                                                        'the '
                                                                                                        'Hugging '
                                                                                                        'Face '
                                                                                                        'hub). '
                                                                                                        's3://: '
                                                                                                        'the '
                                                                                                        'S3-compatible '
                                                                                                        "store's "
                                                                                                        'URL '
                                                                                                        '(default '
                                                                                                        'AWS S3 of '
                                                                                                        'region).',
                                                                                         'pattern': '^https?://[^\\s]+$',
                                                                                         'maxLength': 2048},
                                                                            'region': {'type': 'string',
                                                                                       'description': 's3:// only '
                                                                                                      '- the '
                                                                                                      "bucket's "
                                                                                                      'region '
                                                                                                      '(default '
                                                                                                      'us-east-1).',
                                                                                       'pattern': '^[a-z0-9-]{1,64}$'},
                                                                            'loadFormat': {'type': 'string',
                                                                                           'description': 'runai_streamer: '
                                                                                                          'the '
                                                                                                          'engine '
                                                                                                          'streams '
                                                                                                          'the '
                                                                                                          'weights '
                                                                                                          'from '
                                                                                                          'the '
                                                                                                          'files '
                                                                                                          'into '
                                                                                                          'GPU '
                                                                                                          'memory '
                                                                                                          'as it '
                                                                                                          'reads '
                                                                                                          'them '
                                                                                                          "(vLLM's "
                                                                                                          'and '
                                                                                                          "SGLang's "
                                                                                                          '--load-format; '
                                                                                                          'the '
                                                                                                          'image '
                                                                                                          'needs '
                                                                                                          'the '
                                                                                                          'runai-model-streamer '
                                                                                                          'package, '
                                                                                                          'which '
                                                                                                          "vLLM's "
                                                                                                          'images '
                                                                                                          'have), '
                                                                                                          'rather '
                                                                                                          'than '
                                                                                                          'reading '
                                                                                                          'each '
                                                                                                          'file '
                                                                                                          'whole '
                                                                                                          'first.',
                                                                                           'enum': ['runai_streamer']},
                                                                            'adapters': {'type': 'array',
                                                                                         'description': 'LoRA '
                                                                                                        'adapters '
                                                                                                        'of this '
                                                                                                        'model, '
                                                                                                        'each '
                                                                                                        'fetched '
                                                                                                        'onto '
                                                                                                        'spec.modelCache '
                                                                                                        'beside it '
                                                                                                        '(hf:// or '
                                                                                                        's3://) '
                                                                                                        'and '
                                                                                                        'loaded by '
                                                                                                        'the '
                                                                                                        'engine at '
                                                                                                        'start '
                                                                                                        'under its '
                                                                                                        'name '
                                                                                                        "(vLLM's "
                                                                                                        '--lora-modules, '
                                                                                                        "SGLang's "
                                                                                                        '--lora-paths, '
                                                                                                        'with '
                                                                                                        '--enable-lora). '
                                                                                                        'Needs '
                                                                                                        'spec.modelCache.',
                                                                                         'maxItems': 64,
                                                                                         'items': {'type': 'object',
                                                                                                   'required': ['name',
                                                                                                                'source'],
                                                                                                   'properties': {'name': {'type': 'string',
                                                                                                                           'description': 'The '
                                                                                                                                          'model '
                                                                                                                                          'name '
                                                                                                                                          'clients '
                                                                                                                                          'ask '
                                                                                                                                          'for '
                                                                                                                                          'to '
                                                                                                                                          'use '
                                                                                                                                          'the '
                                                                                                                                          'adapter.',
                                                                                                                           'minLength': 1,
                                                                                                                           'maxLength': 128,
                                                                                                                           'pattern': '^[A-Za-z0-9][-A-Za-z0-9_.]*(/[A-Za-z0-9][-A-Za-z0-9_.]*)?$'},
                                                                                                                  'source': {'type': 'string',
                                                                                                                             'description': 'hf://ORG/NAME, '
                                                                                                                                            'pvc://CLAIM/PATH '
                                                                                                                                            'or '
                                                                                                                                            's3://BUCKET/PREFIX.',
                                                                                                                             'pattern': '^(hf://[A-Za-z0-9][-A-Za-z0-9_.]*/[A-Za-z0-9][-A-Za-z0-9_.]*|pvc://[a-z0-9]([-a-z0-9.]*[a-z0-9])?(/[^/\\x00]+)*/?|s3://[a-z0-9][-a-z0-9.]{1,61}[a-z0-9](/[^\\x00]*)?)$',
                                                                                                                             'maxLength': 1024},
                                                                                                                  'revision': {'type': 'string',
                                                                                                                               'description': 'hf://: '
                                                                                                                                              'the '
                                                                                                                                              'commit '
                                                                                                                                              '(40 '
                                                                                                                                              'hexadecimal '
                                                                                                                                              'digits) '
                                                                                                                                              'to '
                                                                                                                                              'serve: '
                                                                                                                                              'a '
                                                                                                                                              'branch '
                                                                                                                                              'would '
                                                                                                                                              'move '
                                                                                                                                              'under '
                                                                                                                                              'a '
                                                                                                                                              'running '
                                                                                                                                              'service. '
                                                                                                                                              's3://: '
                                                                                                                                              'a '
                                                                                                                                              'name '
                                                                                                                                              'for '
                                                                                                                                              'what '
                                                                                                                                              'the '
                                                                                                                                              'prefix '
                                                                                                                                              'holds '
                                                                                                                                              'now '
                                                                                                                                              '(default '
                                                                                                                                              '"current"); '
                                                                                                                                              'a '
                                                                                                                                              'new '
                                                                                                                                              'name '
                                                                                                                                              'fetches '
                                                                                                                                              'it '
                                                                                                                                              'again, '
                                                                                                                                              'beside '
                                                                                                                                              'the '
                                                                                                                                              'old. '
                                                                                                                                              'Not '
                                                                                                                                              'for '
                                                                                                                                              'pvc://.',
                                                                                                                               'pattern': '^[A-Za-z0-9][-A-Za-z0-9_.]{0,127}$'},
                                                                                                                  'credentials': {'type': 'object',
                                                                                                                                  'description': 'A '
                                                                                                                                                 'Secret '
                                                                                                                                                 'of '
                                                                                                                                                 'the '
                                                                                                                                                 "service's "
                                                                                                                                                 'namespace '
                                                                                                                                                 'holding '
                                                                                                                                                 'the '
                                                                                                                                                 'credentials: '
                                                                                                                                                 'for '
                                                                                                                                                 'hf://, '
                                                                                                                                                 'key '
                                                                                                                                                 'token '
                                                                                                                                                 '(a '
                                                                                                                                                 'Hugging '
                                                                                                                                                 'Face '
                                                                                                                                                 'access '
                                                                                                                                                 'token); '
                                                                                                                                                 'for '
                                                                                                                                                 's3://, '
                                                                                                                                                 'keys '
                                                                                                                                                 'AWS_ACCESS_KEY_ID '
                                                                                                                                                 'and '
                                                                                                                                                 'AWS_SECRET_ACCESS_KEY. '
                                                                                                                                                 'Read '
                                                                                                                                                 'only '
                                                                                                                                                 'by '
                                                                                                                                                 'the '
                                                                                                                                                 'fetch '
                                                                                                                                                 'Job '
                                                                                                                                                 '(and '
                                                                                                                                                 'the '
                                                                                                                                                 'engine '
                                                                                                                                                 'where '
                                                                                                                                                 'nothing '
                                                                                                                                                 'is '
                                                                                                                                                 'cached); '
                                                                                                                                                 'never '
                                                                                                                                                 'in '
                                                                                                                                                 'values.',
                                                                                                                                  'required': ['secretName'],
                                                                                                                                  'properties': {'secretName': {'type': 'string',
                                                                                                                                                                'minLength': 1,
                                                                                                                                                                'maxLength': 253,
                                                                                                                                                                'pattern': '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'}},
                                                                                                                                  'additionalProperties': False},
                                                                                                                  'endpoint': {'type': 'string',
                                                                                                                               'description': 'hf://: '
                                                                                                                                              'a '
                                                                                                                                              'hub '
                                                                                                                                              "mirror's "
                                                                                                                                              'URL '
                                                                                                                                              '(HF_ENDPOINT; '
                                                                                                                                              'default '
                                                                                                                                              'the '
                                                                                                                                              'Hugging '
                                                                                                                                              'Face '
                                                                                                                                              'hub). '
                                                                                                                                              's3://: '
                                                                                                                                              'the '
                                                                                                                                              'S3-compatible '
                                                                                                                                              "store's "
                                                                                                                                              'URL '
                                                                                                                                              '(default '
                                                                                                                                              'AWS '
                                                                                                                                              'S3 '
                                                                                                                                              'of '
                                                                                                                                              'region).',
                                                                                                                               'pattern': '^https?://[^\\s]+$',
                                                                                                                               'maxLength': 2048},
                                                                                                                  'region': {'type': 'string',
                                                                                                                             'description': 's3:// '
                                                                                                                                            'only '
                                                                                                                                            '- '
                                                                                                                                            'the '
                                                                                                                                            "bucket's "
                                                                                                                                            'region '
                                                                                                                                            '(default '
                                                                                                                                            'us-east-1).',
                                                                                                                             'pattern': '^[a-z0-9-]{1,64}$'}},
                                                                                                   'additionalProperties': False}}},
                                                             'additionalProperties': False},
                                                   'autoscaling': {'type': 'object',
                                                                   'description': 'Layouts role and disaggregated: '
                                                                                  "the role's replica count "
                                                                                  'follows a signal, through its '
                                                                                  'scale subresource (its '
                                                                                  "LeaderWorkerSet's; in layout "
                                                                                  'disaggregated its '
                                                                                  "DisaggregatedSetRoleScaler's), "
                                                                                  'in whole replicas; replicas is '
                                                                                  "then the autoscaler's (leave it "
                                                                                  'out of the role). With '
                                                                                  'prometheus (or triggers), a '
                                                                                  'KEDA ScaledObject on the LLM '
                                                                                  'signals the router and engines '
                                                                                  'report (docs/autoscaling.md); '
                                                                                  'with metrics, or neither, a '
                                                                                  'HorizontalPodAutoscaler '
                                                                                  '(autoscaling/v2).',
                                                                   'required': ['maxReplicas'],
                                                                   'properties': {'minReplicas': {'type': 'integer',
                                                                                                  'description': 'Fewest '
                                                                                                                 'replicas '
                                                                                                                 '(default '
                                                                                                                 '1). '
                                                                                                                 '0 '
                                                                                                                 '- '
                                                                                                                 'the '
                                                                                                                 'role '
                                                                                                                 'stands '
                                                                                                                 'at '
                                                                                                                 'zero '
                                                                                                                 'while '
                                                                                                                 'idle '
                                                                                                                 '- '
                                                                                                                 'needs '
                                                                                                                 'KEDA '
                                                                                                                 '(prometheus '
                                                                                                                 'or '
                                                                                                                 'triggers) '
                                                                                                                 'and, '
                                                                                                                 'on '
                                                                                                                 'a '
                                                                                                                 'routed '
                                                                                                                 'role, '
                                                                                                                 'a '
                                                                                                                 'picker '
                                                                                                                 'with '
                                                                                                                 'flow '
                                                                                                                 'control '
                                                                                                                 'to '
                                                                                                                 'hold '
                                                                                                                 'the '
                                                                                                                 'requests '
                                                                                                                 'that '
                                                                                                                 'arrive '
                                                                                                                 'meanwhile '
                                                                                                                 '(docs/autoscaling.md).',
                                                                                                  'minimum': 0,
                                                                                                  'maximum': 10000},
                                                                                  'maxReplicas': {'type': 'integer',
                                                                                                  'description': 'Most '
                                                                                                                 'replicas; '
                                                                                                                 'at '
                                                                                                                 'least '
                                                                                                                 'minReplicas '
                                                                                                                 'and '
                                                                                                                 'at '
                                                                                                                 'least '
                                                                                                                 '1.',
                                                                                                  'minimum': 1,
                                                                                                  'maximum': 10000},
                                                                                  'fallbackReplicas': {'type': 'integer',
                                                                                                       'description': 'KEDA '
                                                                                                                      'only '
                                                                                                                      '(prometheus): '
                                                                                                                      'the '
                                                                                                                      'replicas '
                                                                                                                      'the '
                                                                                                                      'role '
                                                                                                                      'gets '
                                                                                                                      'while '
                                                                                                                      'a '
                                                                                                                      'signal '
                                                                                                                      'cannot '
                                                                                                                      'be '
                                                                                                                      'read '
                                                                                                                      '- '
                                                                                                                      'its '
                                                                                                                      'Prometheus '
                                                                                                                      'unreachable, '
                                                                                                                      'or '
                                                                                                                      'none '
                                                                                                                      'of '
                                                                                                                      'the '
                                                                                                                      "service's "
                                                                                                                      'pods '
                                                                                                                      'scraped '
                                                                                                                      'there '
                                                                                                                      '(a '
                                                                                                                      'PodMonitor '
                                                                                                                      'that '
                                                                                                                      'Prometheus '
                                                                                                                      'does '
                                                                                                                      'not '
                                                                                                                      'select) '
                                                                                                                      '- '
                                                                                                                      'rather '
                                                                                                                      'than '
                                                                                                                      'a '
                                                                                                                      'count '
                                                                                                                      'from '
                                                                                                                      'a '
                                                                                                                      'signal '
                                                                                                                      'read '
                                                                                                                      'as '
                                                                                                                      'nothing; '
                                                                                                                      'a '
                                                                                                                      'role '
                                                                                                                      'at '
                                                                                                                      'zero '
                                                                                                                      'is '
                                                                                                                      'woken '
                                                                                                                      'to '
                                                                                                                      'it '
                                                                                                                      '(KEDA '
                                                                                                                      '2.19 '
                                                                                                                      'or '
                                                                                                                      'later). '
                                                                                                                      'Default '
                                                                                                                      'minReplicas, '
                                                                                                                      'at '
                                                                                                                      'least '
                                                                                                                      '1 '
                                                                                                                      '(docs/autoscaling.md).',
                                                                                                       'minimum': 1,
                                                                                                       'maximum': 10000},
                                                                                  'metrics': {'type': 'array',
                                                                                              'description': 'The '
                                                                                                             "HorizontalPodAutoscaler's: "
                                                                                                             'autoscaling/v2 '
                                                                                                             'MetricSpecs '
                                                                                                             'as '
                                                                                                             'it '
                                                                                                             'takes '
                                                                                                             'them '
                                                                                                             '(omitted: '
                                                                                                             'its '
                                                                                                             'default, '
                                                                                                             '80% '
                                                                                                             'average '
                                                                                                             'CPU '
                                                                                                             'utilization). '
                                                                                                             'Pods '
                                                                                                             'and '
                                                                                                             'Resource '
                                                                                                             'metrics '
                                                                                                             'are '
                                                                                                             'read '
                                                                                                             'from '
                                                                                                             'the '
                                                                                                             'leader '
                                                                                                             'pods '
                                                                                                             '(the '
                                                                                                             'scale '
                                                                                                             "subresource's "
                                                                                                             'selector). '
                                                                                                             'Not '
                                                                                                             'with '
                                                                                                             'prometheus '
                                                                                                             'or '
                                                                                                             'triggers.',
                                                                                              'items': {'type': 'object',
                                                                                                        'required': ['type'],
                                                                                                        'properties': {'type': {'type': 'string',
                                                                                                                                'enum': ['ContainerResource',
                                                                                                                                         'External',
                                                                                                                                         'Object',
                                                                                                                                         'Pods',
                                                                                                                                         'Resource']}}}},
                                                                                  'prometheus': {'type': 'object',
                                                                                                 'description': 'KEDA: '
                                                                                                                'the '
                                                                                                                'Prometheus '
                                                                                                                '(or '
                                                                                                                'Thanos '
                                                                                                                'querier) '
                                                                                                                'that '
                                                                                                                'scrapes '
                                                                                                                'what '
                                                                                                                "spec.monitoring's "
                                                                                                                'PodMonitors '
                                                                                                                'select; '
                                                                                                                'the '
                                                                                                                'signals '
                                                                                                                'are '
                                                                                                                'queried '
                                                                                                                'there, '
                                                                                                                'pinned '
                                                                                                                'to '
                                                                                                                'this '
                                                                                                                "service's "
                                                                                                                'namespace, '
                                                                                                                'service '
                                                                                                                'and '
                                                                                                                'role.',
                                                                                                 'required': ['serverAddress'],
                                                                                                 'properties': {'serverAddress': {'type': 'string',
                                                                                                                                  'description': 'Its '
                                                                                                                                                 'HTTP(S) '
                                                                                                                                                 'URL, '
                                                                                                                                                 'such '
                                                                                                                                                 'as '
                                                                                                                                                 'http://prometheus-operated.monitoring:9090.',
                                                                                                                                  'minLength': 1,
                                                                                                                                  'maxLength': 2048,
                                                                                                                                  'pattern': '^https?://[^\\s]+$'},
                                                                                                                'credentials': {'type': 'object',
                                                                                                                                'description': 'A '
                                                                                                                                               'Secret '
                                                                                                                                               'of '
                                                                                                                                               'the '
                                                                                                                                               "service's "
                                                                                                                                               'namespace '
                                                                                                                                               'holding '
                                                                                                                                               'what '
                                                                                                                                               'the '
                                                                                                                                               'Prometheus '
                                                                                                                                               'asks '
                                                                                                                                               'for, '
                                                                                                                                               'made '
                                                                                                                                               'into '
                                                                                                                                               'a '
                                                                                                                                               'KEDA '
                                                                                                                                               'TriggerAuthentication '
                                                                                                                                               '- '
                                                                                                                                               'bearer '
                                                                                                                                               '(key '
                                                                                                                                               'token), '
                                                                                                                                               'basic '
                                                                                                                                               '(keys '
                                                                                                                                               'username, '
                                                                                                                                               'password); '
                                                                                                                                               'key '
                                                                                                                                               'ca, '
                                                                                                                                               'if '
                                                                                                                                               'present, '
                                                                                                                                               'verifies '
                                                                                                                                               'its '
                                                                                                                                               'certificate.',
                                                                                                                                'required': ['secretName',
                                                                                                                                             'mode'],
                                                                                                                                'properties': {'secretName': {'type': 'string',
                                                                                                                                                              'minLength': 1,
                                                                                                                                                              'maxLength': 253,
                                                                                                                                                              'pattern': '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'},
                                                                                                                                               'mode': {'type': 'string',
                                                                                                                                                        'enum': ['bearer',
                                                                                                                                                                 'basic']},
                                                                                                                                               'ca': {'type': 'boolean',
                                                                                                                                                      'description': 'The '
                                                                                                                                                                     'Secret '
                                                                                                                                                                     'has '
                                                                                                                                                                     'key '
                                                                                                                                                                     'ca, '
                                                                                                                                                                     'the '
                                                                                                                                                                     'CA '
                                                                                                                                                                     'that '
                                                                                                                                                                     'signed '
                                                                                                                                                                     'the '
                                                                                                                                                                     "Prometheus's "
                                                                                                                                                                     'certificate.'}},
                                                                                                                                'additionalProperties': False},
                                                                                                                'unsafeSsl': {'type': 'boolean',
                                                                                                                              'description': 'Skip '
                                                                                                                                             'verifying '
                                                                                                                                             'the '
                                                                                                                                             "Prometheus's "
                                                                                                                                             'certificate '
                                                                                                                                             '(default '
                                                                                                                                             'false).'}},
                                                                                                 'additionalProperties': False},
                                                                                  'signals': {'type': 'array',
                                                                                              'description': 'What '
                                                                                                             'the '
                                                                                                             "role's "
                                                                                                             'size '
                                                                                                             'follows, '
                                                                                                             'each '
                                                                                                             'with '
                                                                                                             'a '
                                                                                                             'target '
                                                                                                             'per '
                                                                                                             'replica; '
                                                                                                             'the '
                                                                                                             'replicas '
                                                                                                             'are '
                                                                                                             'the '
                                                                                                             'largest '
                                                                                                             'any '
                                                                                                             'signal '
                                                                                                             'asks '
                                                                                                             'for '
                                                                                                             '(sum '
                                                                                                             'over '
                                                                                                             'the '
                                                                                                             'role '
                                                                                                             'divided '
                                                                                                             'by '
                                                                                                             'its '
                                                                                                             'target, '
                                                                                                             'rounded '
                                                                                                             'up). '
                                                                                                             'Default '
                                                                                                             '- a '
                                                                                                             'routed '
                                                                                                             'role '
                                                                                                             'picker-queue '
                                                                                                             '1 '
                                                                                                             'and '
                                                                                                             'picker-running '
                                                                                                             '8 (a '
                                                                                                             'picker '
                                                                                                             'with '
                                                                                                             'flow '
                                                                                                             'control), '
                                                                                                             'else '
                                                                                                             'engine-queue '
                                                                                                             '1; a '
                                                                                                             'prefill '
                                                                                                             'role '
                                                                                                             'prefill-backlog '
                                                                                                             '4000.',
                                                                                              'minItems': 1,
                                                                                              'maxItems': 6,
                                                                                              'items': {'type': 'object',
                                                                                                        'required': ['type',
                                                                                                                     'target'],
                                                                                                        'properties': {'type': {'type': 'string',
                                                                                                                                'description': 'picker-queue '
                                                                                                                                               '- '
                                                                                                                                               'requests '
                                                                                                                                               'waiting '
                                                                                                                                               'in '
                                                                                                                                               'the '
                                                                                                                                               "router's "
                                                                                                                                               'pickers '
                                                                                                                                               '(flow '
                                                                                                                                               'control); '
                                                                                                                                               'picker-running '
                                                                                                                                               '- '
                                                                                                                                               'requests '
                                                                                                                                               'the '
                                                                                                                                               'pickers '
                                                                                                                                               'have '
                                                                                                                                               'in '
                                                                                                                                               'flight; '
                                                                                                                                               'engine-queue '
                                                                                                                                               '- '
                                                                                                                                               'requests '
                                                                                                                                               'waiting '
                                                                                                                                               'in '
                                                                                                                                               'the '
                                                                                                                                               "role's "
                                                                                                                                               'engines '
                                                                                                                                               '(vllm:num_requests_waiting, '
                                                                                                                                               'sglang:num_queue_reqs); '
                                                                                                                                               'engine-running '
                                                                                                                                               '- '
                                                                                                                                               'running '
                                                                                                                                               'in '
                                                                                                                                               'them; '
                                                                                                                                               'kv-cache '
                                                                                                                                               '- '
                                                                                                                                               'their '
                                                                                                                                               'KV-cache '
                                                                                                                                               'use, '
                                                                                                                                               '0 '
                                                                                                                                               'to '
                                                                                                                                               '1; '
                                                                                                                                               'prefill-backlog '
                                                                                                                                               '- '
                                                                                                                                               'prompt '
                                                                                                                                               'tokens '
                                                                                                                                               'per '
                                                                                                                                               'second '
                                                                                                                                               'reaching '
                                                                                                                                               'a '
                                                                                                                                               'prefill '
                                                                                                                                               "role's "
                                                                                                                                               'engines.',
                                                                                                                                'enum': ['picker-queue',
                                                                                                                                         'picker-running',
                                                                                                                                         'engine-queue',
                                                                                                                                         'engine-running',
                                                                                                                                         'kv-cache',
                                                                                                                                         'prefill-backlog']},
                                                                                                                       'target': {'type': 'number',
                                                                                                                                  'description': 'What '
                                                                                                                                                 'one '
                                                                                                                                                 'replica '
                                                                                                                                                 'should '
                                                                                                                                                 'carry '
                                                                                                                                                 '(greater '
                                                                                                                                                 'than '
                                                                                                                                                 '0).',
                                                                                                                                  'minimum': 0}},
                                                                                                        'additionalProperties': False}},
                                                                                  'keepUpWith': {'type': 'object',
                                                                                                 'description': 'At '
                                                                                                                'least '
                                                                                                                'ratio '
                                                                                                                'replicas '
                                                                                                                'of '
                                                                                                                'this '
                                                                                                                'role '
                                                                                                                'per '
                                                                                                                'replica '
                                                                                                                'of '
                                                                                                                'another '
                                                                                                                'serving '
                                                                                                                'role '
                                                                                                                '(rounded '
                                                                                                                'up), '
                                                                                                                'as '
                                                                                                                'it '
                                                                                                                'scales '
                                                                                                                '- '
                                                                                                                'a '
                                                                                                                'prefill '
                                                                                                                'role '
                                                                                                                'that '
                                                                                                                'keeps '
                                                                                                                'up '
                                                                                                                'with '
                                                                                                                'its '
                                                                                                                'decoders, '
                                                                                                                'so '
                                                                                                                'no '
                                                                                                                'decode '
                                                                                                                'waits '
                                                                                                                'without '
                                                                                                                'a '
                                                                                                                'prefill '
                                                                                                                'to '
                                                                                                                'feed '
                                                                                                                'it. '
                                                                                                                'KEDA '
                                                                                                                'only.',
                                                                                                 'required': ['role',
                                                                                                              'ratio'],
                                                                                                 'properties': {'role': {'type': 'string',
                                                                                                                         'minLength': 1,
                                                                                                                         'maxLength': 63},
                                                                                                                'ratio': {'type': 'number',
                                                                                                                          'minimum': 0,
                                                                                                                          'maximum': 100}},
                                                                                                 'additionalProperties': False},
                                                                                  'triggers': {'type': 'array',
                                                                                               'description': 'KEDA '
                                                                                                              'triggers '
                                                                                                              'as '
                                                                                                              'ScaledObject '
                                                                                                              'takes '
                                                                                                              'them, '
                                                                                                              'passed '
                                                                                                              'verbatim '
                                                                                                              'beside '
                                                                                                              'the '
                                                                                                              'signals '
                                                                                                              '(KEDA '
                                                                                                              'only): '
                                                                                                              'for '
                                                                                                              'what '
                                                                                                              'the '
                                                                                                              'signals '
                                                                                                              'do '
                                                                                                              'not '
                                                                                                              'cover.',
                                                                                               'items': {'type': 'object',
                                                                                                         'required': ['type'],
                                                                                                         'properties': {'type': {'type': 'string',
                                                                                                                                 'minLength': 1}}}},
                                                                                  'behavior': {'type': 'object',
                                                                                               'description': 'The '
                                                                                                              "HorizontalPodAutoscaler's "
                                                                                                              'behavior '
                                                                                                              '(scaleUp, '
                                                                                                              'scaleDown), '
                                                                                                              'verbatim. '
                                                                                                              'Default '
                                                                                                              'with '
                                                                                                              'KEDA: '
                                                                                                              'scale '
                                                                                                              'up '
                                                                                                              'by '
                                                                                                              'at '
                                                                                                              'most '
                                                                                                              'doubling '
                                                                                                              'per '
                                                                                                              'cold '
                                                                                                              'start '
                                                                                                              '(the '
                                                                                                              'serving '
                                                                                                              "container's "
                                                                                                              'startup '
                                                                                                              'probe '
                                                                                                              'budget), '
                                                                                                              'so '
                                                                                                              'replicas '
                                                                                                              'still '
                                                                                                              'starting '
                                                                                                              'are '
                                                                                                              'not '
                                                                                                              'added '
                                                                                                              'again; '
                                                                                                              'scale '
                                                                                                              'down '
                                                                                                              'to '
                                                                                                              'the '
                                                                                                              'highest '
                                                                                                              'demand '
                                                                                                              'of '
                                                                                                              'the '
                                                                                                              'last '
                                                                                                              'cold '
                                                                                                              'start '
                                                                                                              '(a '
                                                                                                              'window '
                                                                                                              'of '
                                                                                                              '60 '
                                                                                                              'to '
                                                                                                              '600 '
                                                                                                              's).'}},
                                                                   'additionalProperties': False},
                                                   'networkTopology': {'type': 'object',
                                                                       'description': 'Volcano network topology '
                                                                                      'for each replica of the '
                                                                                      'role (its subgroup of the '
                                                                                      'PodGroup): all of a '
                                                                                      "replica's pods within one "
                                                                                      'HyperNode of at most the '
                                                                                      'given tier, such as a rack '
                                                                                      'or an NVLink domain. '
                                                                                      'Overrides '
                                                                                      'gangSchedule.networkTopology; '
                                                                                      'mode none opts the role '
                                                                                      'out. Needs a gang-scheduled '
                                                                                      "service and Volcano's "
                                                                                      'network-topology-aware '
                                                                                      'plugin; not on a router '
                                                                                      '(docs/gang-scheduling.md).',
                                                                       'properties': {'mode': {'type': 'string',
                                                                                               'description': 'hard '
                                                                                                              '(default): '
                                                                                                              'never '
                                                                                                              'beyond '
                                                                                                              'the '
                                                                                                              'tier; '
                                                                                                              'a '
                                                                                                              'replica '
                                                                                                              'that '
                                                                                                              'fits '
                                                                                                              'in '
                                                                                                              'no '
                                                                                                              'domain '
                                                                                                              'of '
                                                                                                              'it '
                                                                                                              'waits, '
                                                                                                              'whole. '
                                                                                                              'soft: '
                                                                                                              'the '
                                                                                                              'lowest '
                                                                                                              'tier '
                                                                                                              'that '
                                                                                                              'fits '
                                                                                                              'first, '
                                                                                                              'then '
                                                                                                              'any '
                                                                                                              '(no '
                                                                                                              'bound). '
                                                                                                              'none: '
                                                                                                              'no '
                                                                                                              'constraint '
                                                                                                              'for '
                                                                                                              'this '
                                                                                                              "role's "
                                                                                                              'replicas '
                                                                                                              '(a '
                                                                                                              'role '
                                                                                                              'only).',
                                                                                               'enum': ['hard',
                                                                                                        'soft',
                                                                                                        'none']},
                                                                                      'highestTierAllowed': {'type': 'integer',
                                                                                                             'description': 'Mode '
                                                                                                                            'hard '
                                                                                                                            '- '
                                                                                                                            'the '
                                                                                                                            'highest '
                                                                                                                            'tier '
                                                                                                                            'number '
                                                                                                                            '(from '
                                                                                                                            '1) '
                                                                                                                            'the '
                                                                                                                            'pods '
                                                                                                                            'may '
                                                                                                                            'span.',
                                                                                                             'minimum': 1,
                                                                                                             'maximum': 2147483647},
                                                                                      'highestTierName': {'type': 'string',
                                                                                                          'description': 'Mode '
                                                                                                                         'hard '
                                                                                                                         '- '
                                                                                                                         'the '
                                                                                                                         'highest '
                                                                                                                         'tier '
                                                                                                                         'by '
                                                                                                                         'its '
                                                                                                                         "HyperNodes' "
                                                                                                                         'tierName '
                                                                                                                         '(such '
                                                                                                                         'as '
                                                                                                                         'rack).',
                                                                                                          'minLength': 1,
                                                                                                          'maxLength': 253}},
                                                                       'additionalProperties': False},
                                                   'service': {'type': 'object',
                                                               'description': "A Service over the role's serving "
                                                                              'pods, for clients that call them '
                                                                              'without a Gateway, named '
                                                                              '<service>-<role>-serving (a '
                                                                              "frontend's: <service>-<role>): each "
                                                                              "replica's leader, or every pod "
                                                                              'where every node serves. Its ports '
                                                                              'are those the serving container '
                                                                              'declares (the one the role serves '
                                                                              'on first, named http unless named), '
                                                                              'else the port the engine serves on; '
                                                                              'https where spec.tls is set.',
                                                               'properties': {'type': {'type': 'string',
                                                                                       'description': 'ClusterIP '
                                                                                                      '(the '
                                                                                                      'default), '
                                                                                                      'NodePort or '
                                                                                                      'LoadBalancer.',
                                                                                       'enum': ['ClusterIP',
                                                                                                'NodePort',
                                                                                                'LoadBalancer']},
                                                                              'headless': {'type': 'boolean',
                                                                                           'description': 'No '
                                                                                                          'cluster '
                                                                                                          'IP '
                                                                                                          '(clusterIP '
                                                                                                          'None): '
                                                                                                          'DNS '
                                                                                                          'answers '
                                                                                                          'with '
                                                                                                          'the '
                                                                                                          'serving '
                                                                                                          "pods' "
                                                                                                          'own '
                                                                                                          'addresses, '
                                                                                                          'for '
                                                                                                          'clients '
                                                                                                          'that '
                                                                                                          'balance '
                                                                                                          'over '
                                                                                                          'them '
                                                                                                          'themselves. '
                                                                                                          'ClusterIP '
                                                                                                          'only. '
                                                                                                          'Default '
                                                                                                          'false.'},
                                                                              'annotations': {'type': 'object',
                                                                                              'description': 'The '
                                                                                                             "Service's "
                                                                                                             'annotations '
                                                                                                             '(a '
                                                                                                             'load '
                                                                                                             "balancer's, "
                                                                                                             'a '
                                                                                                             "mesh's).",
                                                                                              'additionalProperties': {'type': 'string'}}},
                                                               'additionalProperties': False},
                                                   'frontend': {'type': 'object',
                                                                'description': 'Frontend roles only (and then '
                                                                               'required): the router the template '
                                                                               'runs in front of the serving '
                                                                               'roles, and how its pods learn the '
                                                                               'serving pods. sglang-router: '
                                                                               "SGLang's router (sglang_router, "
                                                                               'sgl-model-gateway) discovering '
                                                                               'them through the Kubernetes API — '
                                                                               "the service's serving pods by "
                                                                               'label (prefill and decode apart '
                                                                               'for a prefill/decode service), in '
                                                                               'its own namespace, with a Role '
                                                                               'that lets it read pods '
                                                                               '(docs/frontends.md).',
                                                                'required': ['kind'],
                                                                'properties': {'kind': {'type': 'string',
                                                                                        'enum': ['sglang-router']}},
                                                                'additionalProperties': False},
                                                   'recoveryPolicy': {'type': 'string',
                                                                      'description': 'What a failed pod restarts. '
                                                                                     'RoleRestart (default): its '
                                                                                     'whole replica, leader and '
                                                                                     'workers (LWS restartPolicy '
                                                                                     'RecreateGroupOnPodRestart). '
                                                                                     'None: only that pod (LWS '
                                                                                     'restartPolicy None).',
                                                                      'enum': ['RoleRestart', 'None']},
                                                   'disruptionBudget': {'type': 'object',
                                                                        'description': 'A PodDisruptionBudget over '
                                                                                       "the role's pods, counted "
                                                                                       'in whole replicas: a drain '
                                                                                       'may take down at most '
                                                                                       'maxUnavailableReplicas of '
                                                                                       'them at once (one evicted '
                                                                                       'pod takes its whole '
                                                                                       'multi-node replica down, '
                                                                                       'so the budget admits one '
                                                                                       'eviction per replica it '
                                                                                       'allows, then waits for the '
                                                                                       'replicas to be whole '
                                                                                       'again). Pods that are not '
                                                                                       'ready may always be '
                                                                                       'evicted, so it never '
                                                                                       'blocks a drain for good. '
                                                                                       'Default - on for a '
                                                                                       'multi-node role (nodeCount '
                                                                                       '2 or more), 1 replica.',
                                                                        'properties': {'enabled': {'type': 'boolean'},
                                                                                       'maxUnavailableReplicas': {'type': 'integer',
                                                                                                                  'description': 'Replicas '
                                                                                                                                 'a '
                                                                                                                                 'voluntary '
                                                                                                                                 'disruption '
                                                                                                                                 'may '
                                                                                                                                 'take '
                                                                                                                                 'down '
                                                                                                                                 'at '
                                                                                                                                 'once '
                                                                                                                                 '(default '
                                                                                                                                 '1).',
                                                                                                                  'minimum': 1,
                                                                                                                  'maximum': 10000}},
                                                                        'additionalProperties': False},
                                                   'template': {'type': 'object',
                                                                'description': 'Pod template (a PodTemplateSpec) '
                                                                               "for the role's pods.",
                                                                'properties': {'metadata': {'type': 'object',
                                                                                            'properties': {'labels': {'type': 'object',
                                                                                                                      'additionalProperties': {'type': 'string'}},
                                                                                                           'annotations': {'type': 'object',
                                                                                                                           'additionalProperties': {'type': 'string'}}}},
                                                                               'spec': {'type': 'object',
                                                                                        'required': ['containers'],
                                                                                        'properties': {'containers': {'type': 'array',
                                                                                                                      'minItems': 1,
                                                                                                                      'items': {'type': 'object',
                                                                                                                                'required': ['name'],
                                                                                                                                'properties': {'name': {'type': 'string'},
                                                                                                                                               'command': {'type': 'array',
                                                                                                                                                           'items': {'type': 'string'}},
                                                                                                                                               'args': {'type': 'array',
                                                                                                                                                        'items': {'type': 'string'}},
                                                                                                                                               'ports': {'type': 'array',
                                                                                                                                                         'items': {'type': 'object',
                                                                                                                                                                   'required': ['containerPort'],
                                                                                                                                                                   'properties': {'containerPort': {'type': 'integer'}}}},
                                                                                                                                               'env': {'type': 'array',
                                                                                                                                                       'items': {'type': 'object',
                                                                                                                                                                 'required': ['name'],
                                                                                                                                                                 'properties': {'name': {'type': 'string'}}}},
                                                                                                                                               'volumeMounts': {'type': 'array',
                                                                                                                                                                'items': {'type': 'object',
                                                                                                                                                                          'required': ['name'],
                                                                                                                                                                          'properties': {'name': {'type': 'string'}}}},
                                                                                                                                               'lifecycle': {'type': 'object'},
                                                                                                                                               'readinessProbe': {'type': 'object'},
                                                                                                                                               'livenessProbe': {'type': 'object'},
                                                                                                                                               'startupProbe': {'type': 'object'},
                                                                                                                                               'resources': {'type': 'object',
                                                                                                                                                             'properties': {'limits': {'type': 'object',
                                                                                                                                                                                       'additionalProperties': {'anyOf': [{'type': 'integer'},
                                                                                                                                                                                                                          {'type': 'string'}]}},
                                                                                                                                                                            'requests': {'type': 'object',
                                                                                                                                                                                         'additionalProperties': {'anyOf': [{'type': 'integer'},
                                                                                                                                                                                                                            {'type': 'string'}]}}}}}}},
                                                                                                       'initContainers': {'type': 'array',
                                                                                                                          'items': {'type': 'object',
                                                                                                                                    'required': ['name'],
                                                                                                                                    'properties': {'name': {'type': 'string'},
                                                                                                                                                   'restartPolicy': {'type': 'string'},
                                                                                                                                                   'resources': {'type': 'object',
                                                                                                                                                                 'properties': {'limits': {'type': 'object',
                                                                                                                                                                                           'additionalProperties': {'anyOf': [{'type': 'integer'},
                                                                                                                                                                                                                              {'type': 'string'}]}},
                                                                                                                                                                                'requests': {'type': 'object',
                                                                                                                                                                                             'additionalProperties': {'anyOf': [{'type': 'integer'},
                                                                                                                                                                                                                                {'type': 'string'}]}}}}}}},
                                                                                                       'volumes': {'type': 'array',
                                                                                                                   'items': {'type': 'object',
                                                                                                                             'required': ['name'],
                                                                                                                             'properties': {'name': {'type': 'string'}}}},
                                                                                                       'overhead': {'type': 'object',
                                                                                                                    'additionalProperties': {'anyOf': [{'type': 'integer'},
                                                                                                                                                       {'type': 'string'}]}}}}}},
                                                   'multinode': {'type': 'object',
                                                                 'description': 'Spread each replica over several '
                                                                                'nodes: a leader pod and nodeCount '
                                                                                '- 1 workers, joined as the '
                                                                                'bootstrap says '
                                                                                '(docs/expansion.md, multi-node '
                                                                                'bootstraps).',
                                                                 'required': ['nodeCount'],
                                                                 'properties': {'nodeCount': {'type': 'integer',
                                                                                              'description': 'Pods '
                                                                                                             '(nodes) '
                                                                                                             'per '
                                                                                                             'replica.',
                                                                                              'minimum': 1,
                                                                                              'maximum': 2147483647},
                                                                                'bootstrap': {'type': 'string',
                                                                                              'description': 'How '
                                                                                                             'a '
                                                                                                             "replica's "
                                                                                                             'nodes '
                                                                                                             'join. '
                                                                                                             'ray: '
                                                                                                             'a '
                                                                                                             'Ray '
                                                                                                             'cluster, '
                                                                                                             'the '
                                                                                                             'server '
                                                                                                             'started '
                                                                                                             'on '
                                                                                                             'its '
                                                                                                             'head '
                                                                                                             'with '
                                                                                                             '--distributed-executor-backend '
                                                                                                             'ray '
                                                                                                             '(images '
                                                                                                             'with '
                                                                                                             'Ray: '
                                                                                                             'vLLM '
                                                                                                             'before '
                                                                                                             '0.19). '
                                                                                                             'vllm: '
                                                                                                             "vLLM's "
                                                                                                             'own '
                                                                                                             'multi-node '
                                                                                                             'launch '
                                                                                                             '(--nnodes, '
                                                                                                             '--node-rank, '
                                                                                                             '--master-addr; '
                                                                                                             'workers '
                                                                                                             '--headless). '
                                                                                                             'vllm-data-parallel: '
                                                                                                             'one '
                                                                                                             'vLLM '
                                                                                                             'data-parallel '
                                                                                                             'engine '
                                                                                                             'per '
                                                                                                             'node '
                                                                                                             '(dataParallel). '
                                                                                                             'sglang: '
                                                                                                             "SGLang's "
                                                                                                             '(--dist-init-addr, '
                                                                                                             '--nnodes, '
                                                                                                             '--node-rank). '
                                                                                                             'custom: '
                                                                                                             'the '
                                                                                                             'leader '
                                                                                                             'runs '
                                                                                                             'template '
                                                                                                             'and '
                                                                                                             'the '
                                                                                                             'workers '
                                                                                                             'workerTemplate, '
                                                                                                             'as '
                                                                                                             'written. '
                                                                                                             'Default: '
                                                                                                             'ray '
                                                                                                             'for '
                                                                                                             'a '
                                                                                                             'vllm/vllm-openai '
                                                                                                             'image '
                                                                                                             'before '
                                                                                                             'v0.19, '
                                                                                                             'vllm '
                                                                                                             'for '
                                                                                                             'one '
                                                                                                             'from '
                                                                                                             'v0.19, '
                                                                                                             'sglang '
                                                                                                             'for '
                                                                                                             'an '
                                                                                                             'SGLang '
                                                                                                             'image '
                                                                                                             'or '
                                                                                                             'server '
                                                                                                             'command; '
                                                                                                             'any '
                                                                                                             'other '
                                                                                                             'image '
                                                                                                             'must '
                                                                                                             'say.',
                                                                                              'enum': ['ray',
                                                                                                       'vllm',
                                                                                                       'vllm-data-parallel',
                                                                                                       'sglang',
                                                                                                       'custom']},
                                                                                'servingCommand': {'type': 'array',
                                                                                                   'description': 'Command '
                                                                                                                  'that '
                                                                                                                  'starts '
                                                                                                                  'the '
                                                                                                                  'model '
                                                                                                                  'server '
                                                                                                                  'when '
                                                                                                                  'the '
                                                                                                                  'serving '
                                                                                                                  '(first) '
                                                                                                                  'container '
                                                                                                                  'sets '
                                                                                                                  'no '
                                                                                                                  'command '
                                                                                                                  'of '
                                                                                                                  'its '
                                                                                                                  'own: '
                                                                                                                  'an '
                                                                                                                  "image's "
                                                                                                                  'entrypoint '
                                                                                                                  'cannot '
                                                                                                                  'be '
                                                                                                                  'read '
                                                                                                                  'at '
                                                                                                                  'render '
                                                                                                                  'time. '
                                                                                                                  'Defaults '
                                                                                                                  'to '
                                                                                                                  '["vllm", '
                                                                                                                  '"serve"], '
                                                                                                                  'the '
                                                                                                                  'vllm/vllm-openai '
                                                                                                                  'entrypoint; '
                                                                                                                  'bootstrap '
                                                                                                                  'sglang: '
                                                                                                                  '["python3", '
                                                                                                                  '"-m", '
                                                                                                                  '"sglang.launch_server"]. '
                                                                                                                  'Not '
                                                                                                                  'with '
                                                                                                                  'bootstrap '
                                                                                                                  'custom.',
                                                                                                   'minItems': 1,
                                                                                                   'items': {'type': 'string'}},
                                                                                'rendezvousPort': {'type': 'integer',
                                                                                                   'description': 'The '
                                                                                                                  "leader's "
                                                                                                                  'port '
                                                                                                                  'the '
                                                                                                                  'other '
                                                                                                                  'nodes '
                                                                                                                  'join '
                                                                                                                  'at: '
                                                                                                                  'the '
                                                                                                                  'Ray '
                                                                                                                  "head's "
                                                                                                                  '(default '
                                                                                                                  '6379), '
                                                                                                                  "vLLM's "
                                                                                                                  'master '
                                                                                                                  'port '
                                                                                                                  '(default '
                                                                                                                  '29501), '
                                                                                                                  'the '
                                                                                                                  'data-parallel '
                                                                                                                  'RPC '
                                                                                                                  'port '
                                                                                                                  '(default '
                                                                                                                  '29550) '
                                                                                                                  'or '
                                                                                                                  "SGLang's "
                                                                                                                  'dist-init '
                                                                                                                  'port '
                                                                                                                  '(default '
                                                                                                                  '20000). '
                                                                                                                  'Added '
                                                                                                                  'to '
                                                                                                                  'the '
                                                                                                                  "leader's "
                                                                                                                  'ports. '
                                                                                                                  'Not '
                                                                                                                  'with '
                                                                                                                  'bootstrap '
                                                                                                                  'custom.',
                                                                                                   'minimum': 1,
                                                                                                   'maximum': 65535},
                                                                                'dataParallel': {'type': 'object',
                                                                                                 'description': 'Bootstrap '
                                                                                                                'vllm-data-parallel '
                                                                                                                'only, '
                                                                                                                'and '
                                                                                                                'then '
                                                                                                                'required '
                                                                                                                'unless '
                                                                                                                'the '
                                                                                                                "engine's "
                                                                                                                'own '
                                                                                                                '--data-parallel-size-local '
                                                                                                                'gives '
                                                                                                                'its '
                                                                                                                'ranks '
                                                                                                                'a '
                                                                                                                'node.',
                                                                                                 'properties': {'ranksPerNode': {'type': 'integer',
                                                                                                                                 'description': 'Data-parallel '
                                                                                                                                                'ranks '
                                                                                                                                                'each '
                                                                                                                                                'node '
                                                                                                                                                'runs '
                                                                                                                                                '(--data-parallel-size-local, '
                                                                                                                                                'usually '
                                                                                                                                                'its '
                                                                                                                                                'GPUs '
                                                                                                                                                'divided '
                                                                                                                                                'by '
                                                                                                                                                'the '
                                                                                                                                                'tensor-parallel '
                                                                                                                                                'size); '
                                                                                                                                                'the '
                                                                                                                                                'data-parallel '
                                                                                                                                                'size '
                                                                                                                                                'is '
                                                                                                                                                'ranksPerNode '
                                                                                                                                                'x '
                                                                                                                                                'nodeCount. '
                                                                                                                                                'Default: '
                                                                                                                                                'the '
                                                                                                                                                "engine's "
                                                                                                                                                '--data-parallel-size-local '
                                                                                                                                                '(which '
                                                                                                                                                'must '
                                                                                                                                                'agree '
                                                                                                                                                'where '
                                                                                                                                                'both '
                                                                                                                                                'are '
                                                                                                                                                'given).',
                                                                                                                                 'minimum': 1,
                                                                                                                                 'maximum': 1024},
                                                                                                                'hybridLoadBalancing': {'type': 'boolean',
                                                                                                                                        'description': 'Every '
                                                                                                                                                       'node '
                                                                                                                                                       'serves '
                                                                                                                                                       'its '
                                                                                                                                                       'own '
                                                                                                                                                       'ranks '
                                                                                                                                                       '(--data-parallel-hybrid-lb): '
                                                                                                                                                       'the '
                                                                                                                                                       'InferencePool '
                                                                                                                                                       'and '
                                                                                                                                                       'the '
                                                                                                                                                       'PodMonitor '
                                                                                                                                                       'take '
                                                                                                                                                       'every '
                                                                                                                                                       'pod '
                                                                                                                                                       'of '
                                                                                                                                                       'the '
                                                                                                                                                       'role. '
                                                                                                                                                       'Default '
                                                                                                                                                       'false: '
                                                                                                                                                       'the '
                                                                                                                                                       'leader '
                                                                                                                                                       'serves '
                                                                                                                                                       'every '
                                                                                                                                                       'rank '
                                                                                                                                                       'and '
                                                                                                                                                       'the '
                                                                                                                                                       'workers '
                                                                                                                                                       'run '
                                                                                                                                                       '--headless.'}},
                                                                                                 'additionalProperties': False},
                                                                                'workerTemplate': {'type': 'object',
                                                                                                   'description': 'Bootstrap '
                                                                                                                  'custom '
                                                                                                                  'only '
                                                                                                                  '(and '
                                                                                                                  'then '
                                                                                                                  'required): '
                                                                                                                  'the '
                                                                                                                  "workers' "
                                                                                                                  'pod '
                                                                                                                  'template, '
                                                                                                                  'run '
                                                                                                                  'as '
                                                                                                                  'written, '
                                                                                                                  'as '
                                                                                                                  'template '
                                                                                                                  'is '
                                                                                                                  'the '
                                                                                                                  "leader's.",
                                                                                                   'properties': {'metadata': {'type': 'object',
                                                                                                                               'properties': {'labels': {'type': 'object',
                                                                                                                                                         'additionalProperties': {'type': 'string'}},
                                                                                                                                              'annotations': {'type': 'object',
                                                                                                                                                              'additionalProperties': {'type': 'string'}}}},
                                                                                                                  'spec': {'type': 'object',
                                                                                                                           'required': ['containers'],
                                                                                                                           'properties': {'containers': {'type': 'array',
                                                                                                                                                         'minItems': 1,
                                                                                                                                                         'items': {'type': 'object',
                                                                                                                                                                   'required': ['name'],
                                                                                                                                                                   'properties': {'name': {'type': 'string'},
                                                                                                                                                                                  'command': {'type': 'array',
                                                                                                                                                                                              'items': {'type': 'string'}},
                                                                                                                                                                                  'args': {'type': 'array',
                                                                                                                                                                                           'items': {'type': 'string'}},
                                                                                                                                                                                  'ports': {'type': 'array',
                                                                                                                                                                                            'items': {'type': 'object',
                                                                                                                                                                                                      'required': ['containerPort'],
                                                                                                                                                                                                      'properties': {'containerPort': {'type': 'integer'}}}},
                                                                                                                                                                                  'env': {'type': 'array',
                                                                                                                                                                                          'items': {'type': 'object',
                                                                                                                                                                                                    'required': ['name'],
                                                                                                                                                                                                    'properties': {'name': {'type': 'string'}}}},
                                                                                                                                                                                  'volumeMounts': {'type': 'array',
                                                                                                                                                                                                   'items': {'type': 'object',
                                                                                                                                                                                                             'required': ['name'],
                                                                                                                                                                                                             'properties': {'name': {'type': 'string'}}}},
                                                                                                                                                                                  'lifecycle': {'type': 'object'},
                                                                                                                                                                                  'readinessProbe': {'type': 'object'},
                                                                                                                                                                                  'livenessProbe': {'type': 'object'},
                                                                                                                                                                                  'startupProbe': {'type': 'object'},
                                                                                                                                                                                  'resources': {'type': 'object',
                                                                                                                                                                                                'properties': {'limits': {'type': 'object',
                                                                                                                                                                                                                          'additionalProperties': {'anyOf': [{'type': 'integer'},
                                                                                                                                                                                                                                                             {'type': 'string'}]}},
                                                                                                                                                                                                               'requests': {'type': 'object',
                                                                                                                                                                                                                            'additionalProperties': {'anyOf': [{'type': 'integer'},
                                                                                                                                                                                                                                                               {'type': 'string'}]}}}}}}},
                                                                                                                                          'initContainers': {'type': 'array',
                                                                                                                                                             'items': {'type': 'object',
                                                                                                                                                                       'required': ['name'],
                                                                                                                                                                       'properties': {'name': {'type': 'string'},
                                                                                                                                                                                      'restartPolicy': {'type': 'string'},
                                                                                                                                                                                      'resources': {'type': 'object',
                                                                                                                                                                                                    'properties': {'limits': {'type': 'object',
                                                                                                                                                                                                                              'additionalProperties': {'anyOf': [{'type': 'integer'},
                                                                                                                                                                                                                                                                 {'type': 'string'}]}},
                                                                                                                                                                                                                   'requests': {'type': 'object',
                                                                                                                                                                                                                                'additionalProperties': {'anyOf': [{'type': 'integer'},
                                                                                                                                                                                                                                                                   {'type': 'string'}]}}}}}}},
                                                                                                                                          'volumes': {'type': 'array',
                                                                                                                                                      'items': {'type': 'object',
                                                                                                                                                                'required': ['name'],
                                                                                                                                                                'properties': {'name': {'type': 'string'}}}},
                                                                                                                                          'overhead': {'type': 'object',
                                                                                                                                                       'additionalProperties': {'anyOf': [{'type': 'integer'},
                                                                                                                                                                                          {'type': 'string'}]}}}}}},
                                                                                'leaderArgs': {'type': 'array',
                                                                                               'items': {'type': 'string'},
                                                                                               'description': 'Server '
                                                                                                              'flags '
                                                                                                              'only '
                                                                                                              'the '
                                                                                                              "leader's "
                                                                                                              'server '
                                                                                                              'gets, '
                                                                                                              'after '
                                                                                                              'the '
                                                                                                              "template's "
                                                                                                              '(e.g. '
                                                                                                              "vLLM's "
                                                                                                              '--api-server-count, '
                                                                                                              'which '
                                                                                                              'headless '
                                                                                                              'workers '
                                                                                                              'refuse). '
                                                                                                              'Not '
                                                                                                              'with '
                                                                                                              'bootstrap '
                                                                                                              'custom.'},
                                                                                'workerArgs': {'type': 'array',
                                                                                               'items': {'type': 'string'},
                                                                                               'description': 'Server '
                                                                                                              'flags '
                                                                                                              'only '
                                                                                                              'the '
                                                                                                              "workers' "
                                                                                                              'servers '
                                                                                                              'get, '
                                                                                                              'after '
                                                                                                              'the '
                                                                                                              "template's. "
                                                                                                              'Not '
                                                                                                              'with '
                                                                                                              'bootstrap '
                                                                                                              'custom '
                                                                                                              'or '
                                                                                                              'ray '
                                                                                                              '(Ray '
                                                                                                              'workers '
                                                                                                              'run '
                                                                                                              'no '
                                                                                                              'server). '
                                                                                                              "vLLM's "
                                                                                                              '--api-server-count, '
                                                                                                              'which '
                                                                                                              'headless '
                                                                                                              'workers '
                                                                                                              'refuse, '
                                                                                                              'is '
                                                                                                              'left '
                                                                                                              'out '
                                                                                                              'of '
                                                                                                              'their '
                                                                                                              'flags '
                                                                                                              'by '
                                                                                                              'itself.'}},
                                                                 'additionalProperties': False},
                                                   'poolAPIVersion': {'type': 'string',
                                                                      'description': 'API of the InferencePool '
                                                                                     '(router only). '
                                                                                     'inference.networking.k8s.io/v1 '
                                                                                     '(default) or '
                                                                                     'inference.networking.x-k8s.io/v1alpha2 '
                                                                                     'for gateways that predate '
                                                                                     'v1. It chooses the endpoint '
                                                                                     'picker generation unless '
                                                                                     'endpointPicker.generation '
                                                                                     'names one.',
                                                                      'enum': ['inference.networking.k8s.io/v1',
                                                                               'inference.networking.x-k8s.io/v1alpha2']},
                                                   'targetPort': {'type': 'integer',
                                                                  'description': 'Port of the serving pods the '
                                                                                 'pool routes to (router only). '
                                                                                 'Default: the serving (first) '
                                                                                 "container's port named http, "
                                                                                 'else its first port.',
                                                                  'minimum': 1,
                                                                  'maximum': 65535},
                                                   'strategy': {'description': 'How the endpoint picker scores '
                                                                               'pods (router only); becomes its '
                                                                               'EndpointPickerConfig. One word '
                                                                               '(prefix-cache, '
                                                                               'kv-cache-utilization, queue-size, '
                                                                               'lora-affinity: that scorer leads '
                                                                               'the default weighting; '
                                                                               'pd-disaggregation: the default '
                                                                               'weighting, and the service must '
                                                                               'have a prefiller and a decoder), '
                                                                               'or the scorers and their weights. '
                                                                               'A prefill/decode service gets a '
                                                                               'prefill and a decode profile '
                                                                               'scored alike. Default: queue-size '
                                                                               '2, kv-cache-utilization 2, '
                                                                               'prefix-cache 3; where the engines '
                                                                               'serve LoRA adapters, '
                                                                               "lora-affinity's weighting.",
                                                                'anyOf': [{'type': 'string',
                                                                           'enum': ['prefix-cache',
                                                                                    'kv-cache-utilization',
                                                                                    'queue-size',
                                                                                    'lora-affinity',
                                                                                    'pd-disaggregation']},
                                                                          {'type': 'object',
                                                                           'properties': {'scorers': {'type': 'array',
                                                                                                      'description': 'Scorers '
                                                                                                                     'and '
                                                                                                                     'their '
                                                                                                                     'weights. '
                                                                                                                     'Default: '
                                                                                                                     'queue-size '
                                                                                                                     '2, '
                                                                                                                     'kv-cache-utilization '
                                                                                                                     '2, '
                                                                                                                     'prefix-cache '
                                                                                                                     '3.',
                                                                                                      'minItems': 1,
                                                                                                      'items': {'type': 'object',
                                                                                                                'required': ['type'],
                                                                                                                'properties': {'type': {'type': 'string',
                                                                                                                                        'enum': ['prefix-cache',
                                                                                                                                                 'kv-cache-utilization',
                                                                                                                                                 'queue-size',
                                                                                                                                                 'lora-affinity']},
                                                                                                                               'weight': {'type': 'integer',
                                                                                                                                          'description': 'Relative '
                                                                                                                                                         'weight '
                                                                                                                                                         'of '
                                                                                                                                                         'the '
                                                                                                                                                         'score '
                                                                                                                                                         '(default '
                                                                                                                                                         '1).',
                                                                                                                                          'minimum': 1,
                                                                                                                                          'maximum': 1000000},
                                                                                                                               'parameters': {'type': 'object',
                                                                                                                                              'description': 'The '
                                                                                                                                                             "plugin's "
                                                                                                                                                             'parameters, '
                                                                                                                                                             'passed '
                                                                                                                                                             'as '
                                                                                                                                                             'given.'}},
                                                                                                                'additionalProperties': False}},
                                                                                          'prefillThreshold': {'type': 'integer',
                                                                                                               'description': 'Prefill/decode '
                                                                                                                              'services: '
                                                                                                                              'run '
                                                                                                                              'a '
                                                                                                                              'separate '
                                                                                                                              'prefill '
                                                                                                                              'only '
                                                                                                                              'when '
                                                                                                                              'at '
                                                                                                                              'least '
                                                                                                                              'this '
                                                                                                                              'much '
                                                                                                                              'of '
                                                                                                                              'the '
                                                                                                                              'prompt '
                                                                                                                              'is '
                                                                                                                              'not '
                                                                                                                              'in '
                                                                                                                              'the '
                                                                                                                              'decode '
                                                                                                                              "pod's "
                                                                                                                              'prefix '
                                                                                                                              'cache '
                                                                                                                              '(0, '
                                                                                                                              'the '
                                                                                                                              'default: '
                                                                                                                              'always); '
                                                                                                                              'counted '
                                                                                                                              'in '
                                                                                                                              'characters '
                                                                                                                              'by '
                                                                                                                              'the '
                                                                                                                              'gie-v1.0 '
                                                                                                                              'picker, '
                                                                                                                              'in '
                                                                                                                              'tokens '
                                                                                                                              'by '
                                                                                                                              'llm-d-router.',
                                                                                                               'minimum': 0}},
                                                                           'additionalProperties': False}]},
                                                   'endpointPickerConfig': {'type': 'string',
                                                                            'description': 'EndpointPickerConfig '
                                                                                           'YAML used verbatim '
                                                                                           'instead of one built '
                                                                                           'from strategy (router '
                                                                                           'only).'},
                                                   'endpointPicker': {'type': 'object',
                                                                      'description': "The endpoint picker's "
                                                                                     'Deployment (router only).',
                                                                      'properties': {'replicas': {'type': 'integer',
                                                                                                  'description': 'How '
                                                                                                                 'many '
                                                                                                                 'pickers '
                                                                                                                 'run, '
                                                                                                                 'each '
                                                                                                                 'routing '
                                                                                                                 'its '
                                                                                                                 'share '
                                                                                                                 'of '
                                                                                                                 'the '
                                                                                                                 "gateway's "
                                                                                                                 'requests '
                                                                                                                 '(docs/router.md, '
                                                                                                                 '"A '
                                                                                                                 'picker '
                                                                                                                 'that '
                                                                                                                 'is '
                                                                                                                 'never '
                                                                                                                 'a '
                                                                                                                 'single '
                                                                                                                 'point '
                                                                                                                 'of '
                                                                                                                 'failure"). '
                                                                                                                 'From '
                                                                                                                 '2, '
                                                                                                                 'a '
                                                                                                                 'rolling '
                                                                                                                 'update, '
                                                                                                                 'a '
                                                                                                                 'node '
                                                                                                                 'drain '
                                                                                                                 'or '
                                                                                                                 'a '
                                                                                                                 'lost '
                                                                                                                 'node '
                                                                                                                 'leaves '
                                                                                                                 'a '
                                                                                                                 'picker '
                                                                                                                 'serving: '
                                                                                                                 'a '
                                                                                                                 'PodDisruptionBudget '
                                                                                                                 'lets '
                                                                                                                 'one '
                                                                                                                 'go '
                                                                                                                 'at '
                                                                                                                 'a '
                                                                                                                 'time '
                                                                                                                 'and '
                                                                                                                 'the '
                                                                                                                 'pods '
                                                                                                                 'spread '
                                                                                                                 'across '
                                                                                                                 'nodes '
                                                                                                                 'and '
                                                                                                                 'zones. '
                                                                                                                 '1 '
                                                                                                                 'saves '
                                                                                                                 'a '
                                                                                                                 'pod '
                                                                                                                 'and '
                                                                                                                 'keeps '
                                                                                                                 'one '
                                                                                                                 'view '
                                                                                                                 'of '
                                                                                                                 'the '
                                                                                                                 'prefix '
                                                                                                                 'caches, '
                                                                                                                 'at '
                                                                                                                 'the '
                                                                                                                 'cost '
                                                                                                                 'of '
                                                                                                                 'routing '
                                                                                                                 'stopping '
                                                                                                                 'while '
                                                                                                                 'that '
                                                                                                                 'picker '
                                                                                                                 'restarts. '
                                                                                                                 'Default: '
                                                                                                                 '2.',
                                                                                                  'minimum': 1,
                                                                                                  'maximum': 100},
                                                                                     'failureMode': {'type': 'string',
                                                                                                     'description': 'What '
                                                                                                                    'the '
                                                                                                                    'gateway '
                                                                                                                    'does '
                                                                                                                    'with '
                                                                                                                    'a '
                                                                                                                    'request '
                                                                                                                    'when '
                                                                                                                    'no '
                                                                                                                    'picker '
                                                                                                                    'answers, '
                                                                                                                    'written '
                                                                                                                    'to '
                                                                                                                    'the '
                                                                                                                    'InferencePool: '
                                                                                                                    'FailClose '
                                                                                                                    '(the '
                                                                                                                    'default) '
                                                                                                                    'refuses '
                                                                                                                    'it, '
                                                                                                                    'FailOpen '
                                                                                                                    'sends '
                                                                                                                    'it '
                                                                                                                    'to '
                                                                                                                    'a '
                                                                                                                    'pod '
                                                                                                                    'the '
                                                                                                                    'gateway '
                                                                                                                    'chooses '
                                                                                                                    'itself, '
                                                                                                                    'without '
                                                                                                                    'the '
                                                                                                                    "picker's "
                                                                                                                    'scoring.',
                                                                                                     'enum': ['FailClose',
                                                                                                              'FailOpen']},
                                                                                     'podAnnotations': {'type': 'object',
                                                                                                        'description': 'Annotations '
                                                                                                                       'for '
                                                                                                                       'the '
                                                                                                                       "picker's "
                                                                                                                       'pods '
                                                                                                                       '(a '
                                                                                                                       'service '
                                                                                                                       "mesh's, "
                                                                                                                       'a '
                                                                                                                       "scraper's), "
                                                                                                                       'beside '
                                                                                                                       'the '
                                                                                                                       'configuration '
                                                                                                                       'hash '
                                                                                                                       'that '
                                                                                                                       'restarts '
                                                                                                                       'them '
                                                                                                                       'when '
                                                                                                                       'their '
                                                                                                                       'configuration '
                                                                                                                       'changes.',
                                                                                                        'additionalProperties': {'type': 'string'}},
                                                                                     'generation': {'type': 'string',
                                                                                                    'description': 'The '
                                                                                                                   'picker '
                                                                                                                   'release '
                                                                                                                   'line, '
                                                                                                                   'which '
                                                                                                                   'decides '
                                                                                                                   'its '
                                                                                                                   'image, '
                                                                                                                   'flags, '
                                                                                                                   'configuration '
                                                                                                                   'format '
                                                                                                                   'and '
                                                                                                                   'model '
                                                                                                                   'objects: '
                                                                                                                   'gie-v1.0 '
                                                                                                                   '(Gateway '
                                                                                                                   'API '
                                                                                                                   'Inference '
                                                                                                                   'Extension '
                                                                                                                   'v1.0; '
                                                                                                                   'reads '
                                                                                                                   'v1 '
                                                                                                                   'and '
                                                                                                                   'v1alpha2 '
                                                                                                                   'pools), '
                                                                                                                   'gie-v1.5 '
                                                                                                                   '(Gateway '
                                                                                                                   'API '
                                                                                                                   'Inference '
                                                                                                                   'Extension '
                                                                                                                   'v1.5; '
                                                                                                                   'v1 '
                                                                                                                   'pools; '
                                                                                                                   'flow '
                                                                                                                   'control), '
                                                                                                                   'gie-v0.5 '
                                                                                                                   '(v1alpha2 '
                                                                                                                   'pools) '
                                                                                                                   'or '
                                                                                                                   'llm-d-router '
                                                                                                                   '(v1 '
                                                                                                                   'pools; '
                                                                                                                   'flow '
                                                                                                                   'control; '
                                                                                                                   'the '
                                                                                                                   'only '
                                                                                                                   'one '
                                                                                                                   'with '
                                                                                                                   'a '
                                                                                                                   'prefill/decode '
                                                                                                                   'sidecar, '
                                                                                                                   'which '
                                                                                                                   'its '
                                                                                                                   "decoders' "
                                                                                                                   'pods '
                                                                                                                   'get). '
                                                                                                                   'Default: '
                                                                                                                   'llm-d-router '
                                                                                                                   'for '
                                                                                                                   'prefill/decode '
                                                                                                                   'services; '
                                                                                                                   'otherwise '
                                                                                                                   'gie-v1.0 '
                                                                                                                   'for '
                                                                                                                   'v1 '
                                                                                                                   'pools, '
                                                                                                                   'gie-v0.5 '
                                                                                                                   'for '
                                                                                                                   'v1alpha2 '
                                                                                                                   'pools '
                                                                                                                   '(docs/router.md).',
                                                                                                    'enum': ['gie-v0.5',
                                                                                                             'gie-v1.0',
                                                                                                             'gie-v1.5',
                                                                                                             'llm-d-router']},
                                                                                     'image': {'type': 'string',
                                                                                               'description': 'Another '
                                                                                                              'image '
                                                                                                              'of '
                                                                                                              'the '
                                                                                                              "generation's "
                                                                                                              'picker '
                                                                                                              '(a '
                                                                                                              'mirror, '
                                                                                                              'a '
                                                                                                              'patched '
                                                                                                              'build); '
                                                                                                              'only '
                                                                                                              'the '
                                                                                                              'image '
                                                                                                              'changes. '
                                                                                                              'Default: '
                                                                                                              'the '
                                                                                                              "generation's "
                                                                                                              '(docs/router.md).',
                                                                                               'minLength': 1},
                                                                                     'flags': {'type': 'object',
                                                                                               'description': 'Extra '
                                                                                                              'command-line '
                                                                                                              'flags, '
                                                                                                              'name '
                                                                                                              '(without '
                                                                                                              'dashes) '
                                                                                                              'to '
                                                                                                              'value, '
                                                                                                              'e.g. '
                                                                                                              '{v: '
                                                                                                              '"4"}. '
                                                                                                              'Flags '
                                                                                                              'the '
                                                                                                              'router '
                                                                                                              'sets '
                                                                                                              '(pool '
                                                                                                              'name, '
                                                                                                              'namespace '
                                                                                                              'and '
                                                                                                              'group, '
                                                                                                              'ports, '
                                                                                                              'config '
                                                                                                              'file) '
                                                                                                              'may '
                                                                                                              'only '
                                                                                                              'repeat '
                                                                                                              'its '
                                                                                                              'value.',
                                                                                               'additionalProperties': {'type': 'string'}},
                                                                                     'resources': {'type': 'object',
                                                                                                   'properties': {'limits': {'type': 'object',
                                                                                                                             'additionalProperties': {'anyOf': [{'type': 'integer'},
                                                                                                                                                                {'type': 'string'}]}},
                                                                                                                  'requests': {'type': 'object',
                                                                                                                               'additionalProperties': {'anyOf': [{'type': 'integer'},
                                                                                                                                                                  {'type': 'string'}]}}},
                                                                                                   'description': 'The '
                                                                                                                  'picker '
                                                                                                                  "container's "
                                                                                                                  'resources. '
                                                                                                                  'Default: '
                                                                                                                  'requests '
                                                                                                                  'of '
                                                                                                                  '1 '
                                                                                                                  'CPU '
                                                                                                                  'and '
                                                                                                                  '1Gi '
                                                                                                                  'of '
                                                                                                                  'memory, '
                                                                                                                  'a '
                                                                                                                  'memory '
                                                                                                                  'limit '
                                                                                                                  'of '
                                                                                                                  '4Gi.'},
                                                                                     'securityContext': {'type': 'object',
                                                                                                         'description': 'The '
                                                                                                                        'picker '
                                                                                                                        "container's "
                                                                                                                        'securityContext, '
                                                                                                                        'instead '
                                                                                                                        'of '
                                                                                                                        'the '
                                                                                                                        'default: '
                                                                                                                        'the '
                                                                                                                        'Pod '
                                                                                                                        'Security '
                                                                                                                        'Standard '
                                                                                                                        '"restricted" '
                                                                                                                        '(no '
                                                                                                                        'privilege '
                                                                                                                        'escalation, '
                                                                                                                        'every '
                                                                                                                        'capability '
                                                                                                                        'dropped).'},
                                                                                     'podSecurityContext': {'type': 'object',
                                                                                                            'description': 'The '
                                                                                                                           'picker '
                                                                                                                           "pod's "
                                                                                                                           'securityContext, '
                                                                                                                           'instead '
                                                                                                                           'of '
                                                                                                                           'the '
                                                                                                                           'default: '
                                                                                                                           'the '
                                                                                                                           'Pod '
                                                                                                                           'Security '
                                                                                                                           'Standard '
                                                                                                                           '"restricted" '
                                                                                                                           '(non-root, '
                                                                                                                           'as '
                                                                                                                           'the '
                                                                                                                           'picker '
                                                                                                                           "images' "
                                                                                                                           'user '
                                                                                                                           '65532, '
                                                                                                                           'the '
                                                                                                                           'RuntimeDefault '
                                                                                                                           'seccomp '
                                                                                                                           'profile).'},
                                                                                     'networkPolicy': {'type': 'object',
                                                                                                       'description': 'The '
                                                                                                                      "picker's "
                                                                                                                      'own '
                                                                                                                      'peers '
                                                                                                                      'in '
                                                                                                                      'its '
                                                                                                                      'NetworkPolicy '
                                                                                                                      '(networking.k8s.io/v1), '
                                                                                                                      'which '
                                                                                                                      'lets '
                                                                                                                      'only '
                                                                                                                      'the '
                                                                                                                      'gateway '
                                                                                                                      'reach '
                                                                                                                      'the '
                                                                                                                      "picker's "
                                                                                                                      'ext-proc '
                                                                                                                      'port '
                                                                                                                      'and '
                                                                                                                      'only '
                                                                                                                      'the '
                                                                                                                      'scrapers '
                                                                                                                      'its '
                                                                                                                      'metrics '
                                                                                                                      'port; '
                                                                                                                      'without '
                                                                                                                      'it '
                                                                                                                      'the '
                                                                                                                      "service's "
                                                                                                                      'spec.networkPolicy '
                                                                                                                      'names '
                                                                                                                      'them '
                                                                                                                      '(gateway, '
                                                                                                                      'prometheus), '
                                                                                                                      'and '
                                                                                                                      'with '
                                                                                                                      'that '
                                                                                                                      'off '
                                                                                                                      'no '
                                                                                                                      'policy '
                                                                                                                      'is '
                                                                                                                      'rendered '
                                                                                                                      'for '
                                                                                                                      'the '
                                                                                                                      'picker '
                                                                                                                      'but '
                                                                                                                      'this '
                                                                                                                      'one. '
                                                                                                                      'Each '
                                                                                                                      'is '
                                                                                                                      'a '
                                                                                                                      'set '
                                                                                                                      'of '
                                                                                                                      'pods '
                                                                                                                      'by '
                                                                                                                      'their '
                                                                                                                      'labels: '
                                                                                                                      'podLabels '
                                                                                                                      'alone '
                                                                                                                      'selects '
                                                                                                                      'pods '
                                                                                                                      'of '
                                                                                                                      'the '
                                                                                                                      "picker's "
                                                                                                                      'namespace, '
                                                                                                                      'namespaceLabels '
                                                                                                                      'pods '
                                                                                                                      'of '
                                                                                                                      'the '
                                                                                                                      'namespaces '
                                                                                                                      'it '
                                                                                                                      'selects '
                                                                                                                      '(both: '
                                                                                                                      'those '
                                                                                                                      'pods '
                                                                                                                      'in '
                                                                                                                      'those '
                                                                                                                      'namespaces). '
                                                                                                                      'Other '
                                                                                                                      'traffic '
                                                                                                                      'from '
                                                                                                                      'the '
                                                                                                                      'picker '
                                                                                                                      '(the '
                                                                                                                      'API '
                                                                                                                      'server, '
                                                                                                                      'the '
                                                                                                                      "engines' "
                                                                                                                      'metrics) '
                                                                                                                      'is '
                                                                                                                      'not '
                                                                                                                      'restricted.',
                                                                                                       'required': ['gateway'],
                                                                                                       'properties': {'gateway': {'type': 'object',
                                                                                                                                  'description': 'The '
                                                                                                                                                 "gateway's "
                                                                                                                                                 'pods, '
                                                                                                                                                 'which '
                                                                                                                                                 'call '
                                                                                                                                                 'the '
                                                                                                                                                 'picker '
                                                                                                                                                 '(ext-proc, '
                                                                                                                                                 'port '
                                                                                                                                                 '9002), '
                                                                                                                                                 'e.g. '
                                                                                                                                                 '{podLabels: '
                                                                                                                                                 '{gateway.networking.k8s.io/gateway-name: '
                                                                                                                                                 'inference-gateway}}.',
                                                                                                                                  'minProperties': 1,
                                                                                                                                  'properties': {'podLabels': {'type': 'object',
                                                                                                                                                               'description': 'Labels '
                                                                                                                                                                              'the '
                                                                                                                                                                              'pods '
                                                                                                                                                                              'carry.',
                                                                                                                                                               'additionalProperties': {'type': 'string'}},
                                                                                                                                                 'namespaceLabels': {'type': 'object',
                                                                                                                                                                     'description': 'Labels '
                                                                                                                                                                                    'their '
                                                                                                                                                                                    'namespaces '
                                                                                                                                                                                    'carry '
                                                                                                                                                                                    '(kubernetes.io/metadata.name '
                                                                                                                                                                                    'names '
                                                                                                                                                                                    'one).',
                                                                                                                                                                     'additionalProperties': {'type': 'string'}}},
                                                                                                                                  'additionalProperties': False},
                                                                                                                      'scrapers': {'type': 'object',
                                                                                                                                   'description': 'The '
                                                                                                                                                  'pods '
                                                                                                                                                  'that '
                                                                                                                                                  'scrape '
                                                                                                                                                  'the '
                                                                                                                                                  "picker's "
                                                                                                                                                  'metrics '
                                                                                                                                                  '(port '
                                                                                                                                                  '9090), '
                                                                                                                                                  'e.g. '
                                                                                                                                                  "Prometheus's. "
                                                                                                                                                  'Omitted: '
                                                                                                                                                  'nothing '
                                                                                                                                                  'may '
                                                                                                                                                  'scrape '
                                                                                                                                                  'them.',
                                                                                                                                   'minProperties': 1,
                                                                                                                                   'properties': {'podLabels': {'type': 'object',
                                                                                                                                                                'description': 'Labels '
                                                                                                                                                                               'the '
                                                                                                                                                                               'pods '
                                                                                                                                                                               'carry.',
                                                                                                                                                                'additionalProperties': {'type': 'string'}},
                                                                                                                                                  'namespaceLabels': {'type': 'object',
                                                                                                                                                                      'description': 'Labels '
                                                                                                                                                                                     'their '
                                                                                                                                                                                     'namespaces '
                                                                                                                                                                                     'carry '
                                                                                                                                                                                     '(kubernetes.io/metadata.name '
                                                                                                                                                                                     'names '
                                                                                                                                                                                     'one).',
                                                                                                                                                                      'additionalProperties': {'type': 'string'}}},
                                                                                                                                   'additionalProperties': False}},
                                                                                                       'additionalProperties': False}},
                                                                      'additionalProperties': False},
                                                   'gateway': {'type': 'object',
                                                               'description': 'A Gateway spec '
                                                                              '(gateway.networking.k8s.io/v1); the '
                                                                              'router creates the Gateway (router '
                                                                              'only).'},
                                                   'httproute': {'type': 'object',
                                                                 'description': 'HTTPRoute spec (router only). Its '
                                                                                'rules are kept; a rule without '
                                                                                'backendRefs gets the pool. '
                                                                                'parentRefs default to the '
                                                                                "router's gateway.",
                                                                 'properties': {'parentRefs': {'type': 'array',
                                                                                               'items': {'type': 'object'}},
                                                                                'rules': {'type': 'array',
                                                                                          'items': {'type': 'object',
                                                                                                    'properties': {'backendRefs': {'type': 'array',
                                                                                                                                   'items': {'type': 'object',
                                                                                                                                             'required': ['name'],
                                                                                                                                             'properties': {'group': {'type': 'string'},
                                                                                                                                                            'kind': {'type': 'string'},
                                                                                                                                                            'name': {'type': 'string'},
                                                                                                                                                            'port': {'type': 'integer'}}}}}}}}},
                                                   'inferencePaths': {'type': 'array',
                                                                      'description': 'Paths the HTTPRoute matches '
                                                                                     'beyond the OpenAI serving '
                                                                                     'paths it always matches '
                                                                                     '(/v1/completions, '
                                                                                     '/v1/chat/completions, '
                                                                                     '/v1/embeddings, '
                                                                                     '/v1/responses), each '
                                                                                     'exactly, e.g. /v1/models or '
                                                                                     '/v1/audio/transcriptions '
                                                                                     '(router only). Nothing else '
                                                                                     'reaches the engines through '
                                                                                     'a Gateway: not their LoRA '
                                                                                     'adapter endpoints, '
                                                                                     '/tokenize, /metrics or '
                                                                                     '/health.',
                                                                      'items': {'type': 'string',
                                                                                'minLength': 2,
                                                                                'maxLength': 1024,
                                                                                'pattern': '^/[^\\s?#]*$'}},
                                                   'sharedGateway': {'type': 'object',
                                                                     'description': 'Join a Gateway that many '
                                                                                    'services share instead of '
                                                                                    'making one (router only): the '
                                                                                    'HTTPRoute attaches to it and '
                                                                                    'matches, on the header '
                                                                                    'X-Gateway-Model-Name, only '
                                                                                    'the model names this service '
                                                                                    'serves (modelNames), so '
                                                                                    'services on one Gateway never '
                                                                                    "take each other's requests. "
                                                                                    "The Gateway's body-based "
                                                                                    'router sets that header from '
                                                                                    "the request body's model: "
                                                                                    'install '
                                                                                    'charts/fusioninfer-bbr once '
                                                                                    'per Gateway (docs/router.md, '
                                                                                    '"Many models on one '
                                                                                    'Gateway").',
                                                                     'required': ['name'],
                                                                     'properties': {'name': {'type': 'string',
                                                                                             'description': 'The '
                                                                                                            "Gateway's "
                                                                                                            'name.',
                                                                                             'minLength': 1,
                                                                                             'maxLength': 253,
                                                                                             'pattern': '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'},
                                                                                    'namespace': {'type': 'string',
                                                                                                  'description': 'The '
                                                                                                                 "Gateway's "
                                                                                                                 'namespace, '
                                                                                                                 'if '
                                                                                                                 'not '
                                                                                                                 'the '
                                                                                                                 "service's "
                                                                                                                 '(its '
                                                                                                                 'listeners '
                                                                                                                 'must '
                                                                                                                 'allow '
                                                                                                                 'routes '
                                                                                                                 'from '
                                                                                                                 'here).',
                                                                                                  'minLength': 1,
                                                                                                  'maxLength': 63,
                                                                                                  'pattern': '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'},
                                                                                    'sectionName': {'type': 'string',
                                                                                                    'description': 'The '
                                                                                                                   "Gateway's "
                                                                                                                   'listener '
                                                                                                                   'to '
                                                                                                                   'attach '
                                                                                                                   'to; '
                                                                                                                   'default '
                                                                                                                   'every '
                                                                                                                   'listener '
                                                                                                                   'that '
                                                                                                                   'allows '
                                                                                                                   'the '
                                                                                                                   'route.',
                                                                                                    'minLength': 1,
                                                                                                    'maxLength': 253,
                                                                                                    'pattern': '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'}},
                                                                     'additionalProperties': False},
                                                   'modelNames': {'type': 'array',
                                                                  'description': 'The model names a shared Gateway '
                                                                                 'routes to this service (router '
                                                                                 'with sharedGateway only): what '
                                                                                 'clients put in the request '
                                                                                 "body's model. Default: the names "
                                                                                 "the serving roles' engines serve "
                                                                                 '(--served-model-name, else the '
                                                                                 "model) and model.adapters' "
                                                                                 'names.',
                                                                  'minItems': 1,
                                                                  'maxItems': 64,
                                                                  'items': {'type': 'string',
                                                                            'minLength': 1,
                                                                            'maxLength': 4096}},
                                                   'modelRewrites': {'type': 'array',
                                                                     'description': 'Model names the picker '
                                                                                    'rewrites, with weights, '
                                                                                    'before it routes (router '
                                                                                    'only): a request whose body '
                                                                                    'names model is served as one '
                                                                                    "of targets (an adapter's next "
                                                                                    "version, a model's new name), "
                                                                                    'chosen by weight. Rendered as '
                                                                                    'an InferenceModelRewrite, '
                                                                                    'which the llm-d-router and '
                                                                                    'gie-v1.5 pickers read '
                                                                                    '(docs/router.md, "Canary").',
                                                                     'maxItems': 64,
                                                                     'items': {'type': 'object',
                                                                               'required': ['model', 'targets'],
                                                                               'properties': {'model': {'type': 'string',
                                                                                                        'description': 'The '
                                                                                                                       'model '
                                                                                                                       'name '
                                                                                                                       'clients '
                                                                                                                       'send.',
                                                                                                        'minLength': 1,
                                                                                                        'maxLength': 4096},
                                                                                              'targets': {'type': 'array',
                                                                                                          'description': 'The '
                                                                                                                         'names '
                                                                                                                         'the '
                                                                                                                         'engines '
                                                                                                                         'serve '
                                                                                                                         'it '
                                                                                                                         'as; '
                                                                                                                         'weights '
                                                                                                                         'on '
                                                                                                                         'all '
                                                                                                                         'or '
                                                                                                                         'none '
                                                                                                                         '(then '
                                                                                                                         'they '
                                                                                                                         'share '
                                                                                                                         'evenly).',
                                                                                                          'minItems': 1,
                                                                                                          'maxItems': 10,
                                                                                                          'items': {'type': 'object',
                                                                                                                    'required': ['model'],
                                                                                                                    'properties': {'model': {'type': 'string',
                                                                                                                                             'minLength': 1,
                                                                                                                                             'maxLength': 4096},
                                                                                                                                   'weight': {'type': 'integer',
                                                                                                                                              'minimum': 1,
                                                                                                                                              'maximum': 1000000}},
                                                                                                                    'additionalProperties': False}}},
                                                                               'additionalProperties': False}},
                                                   'canaryOf': {'type': 'object',
                                                                'description': 'This service is a canary of '
                                                                               "another service's pool in the same "
                                                                               'namespace (router only): its '
                                                                               'HTTPRoute sends weight percent of '
                                                                               'the requests for its model names '
                                                                               'to its own pool and the rest to '
                                                                               'that pool (HTTPRoute backendRef '
                                                                               'weights), deciding those requests '
                                                                               'whichever route is older '
                                                                               '(docs/router.md, "Canary").',
                                                                'required': ['inferencePool', 'weight'],
                                                                'properties': {'inferencePool': {'type': 'string',
                                                                                                 'description': 'The '
                                                                                                                'stable '
                                                                                                                "service's "
                                                                                                                'InferencePool '
                                                                                                                '(<service>-<router '
                                                                                                                'role '
                                                                                                                'name>).',
                                                                                                 'minLength': 1,
                                                                                                 'maxLength': 253,
                                                                                                 'pattern': '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'},
                                                                               'weight': {'type': 'integer',
                                                                                          'description': 'The '
                                                                                                         'percentage '
                                                                                                         'of '
                                                                                                         'requests '
                                                                                                         'this '
                                                                                                         'canary '
                                                                                                         'serves, '
                                                                                                         '1 to 99.',
                                                                                          'minimum': 1,
                                                                                          'maximum': 99}},
                                                                'additionalProperties': False},
                                                   'models': {'type': 'array',
                                                              'description': 'Served models (router only): an '
                                                                             'InferenceObjective each with a v1 '
                                                                             'pool, an InferenceModel each with a '
                                                                             'v1alpha2 pool.',
                                                              'items': {'type': 'object',
                                                                        'required': ['name'],
                                                                        'properties': {'name': {'type': 'string',
                                                                                                'description': 'Object '
                                                                                                               'name '
                                                                                                               'suffix '
                                                                                                               '(<service>-<name>); '
                                                                                                               'the '
                                                                                                               'model '
                                                                                                               'name '
                                                                                                               'when '
                                                                                                               'modelName '
                                                                                                               'is '
                                                                                                               'not '
                                                                                                               'given.',
                                                                                                'minLength': 1,
                                                                                                'maxLength': 63,
                                                                                                'pattern': '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'},
                                                                                       'modelName': {'type': 'string',
                                                                                                     'description': 'The '
                                                                                                                    'model '
                                                                                                                    'clients '
                                                                                                                    'ask '
                                                                                                                    'for '
                                                                                                                    '(v1alpha2 '
                                                                                                                    'InferenceModel '
                                                                                                                    'only).',
                                                                                                     'minLength': 1,
                                                                                                     'maxLength': 256},
                                                                                       'criticality': {'type': 'string',
                                                                                                       'description': 'Critical, '
                                                                                                                      'Standard '
                                                                                                                      'or '
                                                                                                                      'Sheddable: '
                                                                                                                      'which '
                                                                                                                      'requests '
                                                                                                                      'are '
                                                                                                                      'shed '
                                                                                                                      'first '
                                                                                                                      'when '
                                                                                                                      'the '
                                                                                                                      'pool '
                                                                                                                      'is '
                                                                                                                      'saturated '
                                                                                                                      '(an '
                                                                                                                      "InferenceObjective's "
                                                                                                                      'priority '
                                                                                                                      '1, '
                                                                                                                      '0 '
                                                                                                                      'or '
                                                                                                                      '-1).',
                                                                                                       'enum': ['Critical',
                                                                                                                'Standard',
                                                                                                                'Sheddable']},
                                                                                       'targetModels': {'type': 'array',
                                                                                                        'description': 'Model '
                                                                                                                       'names '
                                                                                                                       '(e.g. '
                                                                                                                       'LoRA '
                                                                                                                       'adapter '
                                                                                                                       'versions) '
                                                                                                                       'served '
                                                                                                                       'for '
                                                                                                                       'modelName, '
                                                                                                                       'with '
                                                                                                                       'weights '
                                                                                                                       'to '
                                                                                                                       'split '
                                                                                                                       'traffic: '
                                                                                                                       'all '
                                                                                                                       'weighted '
                                                                                                                       'or '
                                                                                                                       'none '
                                                                                                                       '(v1alpha2 '
                                                                                                                       'InferenceModel '
                                                                                                                       'only).',
                                                                                                        'minItems': 1,
                                                                                                        'maxItems': 10,
                                                                                                        'items': {'type': 'object',
                                                                                                                  'required': ['name'],
                                                                                                                  'properties': {'name': {'type': 'string',
                                                                                                                                          'minLength': 1,
                                                                                                                                          'maxLength': 253},
                                                                                                                                 'weight': {'type': 'integer',
                                                                                                                                            'minimum': 1,
                                                                                                                                            'maximum': 1000000}},
                                                                                                                  'additionalProperties': False}}},
                                                                        'additionalProperties': False}}},
                                    'additionalProperties': False}},
                'model': {'type': 'object',
                          'description': "Where every serving role's weights come from, unless the role names its "
                                         'own (roles[].model). See docs/models.md.',
                          'required': ['source'],
                          'properties': {'source': {'type': 'string',
                                                    'description': 'hf://ORG/NAME, pvc://CLAIM/PATH or '
                                                                   's3://BUCKET/PREFIX.',
                                                    'pattern': '^(hf://[A-Za-z0-9][-A-Za-z0-9_.]*/[A-Za-z0-9][-A-Za-z0-9_.]*|pvc://[a-z0-9]([-a-z0-9.]*[a-z0-9])?(/[^/\\x00]+)*/?|s3://[a-z0-9][-a-z0-9.]{1,61}[a-z0-9](/[^\\x00]*)?)$',
                                                    'maxLength': 1024},
                                         'revision': {'type': 'string',
                                                      'description': 'hf://: the commit (40 hexadecimal digits) to '
                                                                     'serve: a branch would move under a running '
                                                                     'service. s3://: a name for what the prefix '
                                                                     'holds now (default "current"); a new name '
                                                                     'fetches it again, beside the old. Not for '
                                                                     'pvc://.',
                                                      'pattern': '^[A-Za-z0-9][-A-Za-z0-9_.]{0,127}$'},
                                         'credentials': {'type': 'object',
                                                         'description': "A Secret of the service's namespace "
                                                                        'holding the credentials: for hf://, key '
                                                                        'token (a Hugging Face access token); for '
                                                                        's3://, keys AWS_ACCESS_KEY_ID and '
                                                                        'AWS_SECRET_ACCESS_KEY. Read only by the '
                                                                        'fetch Job (and the engine where nothing '
                                                                        'is cached); never in values.',
                                                         'required': ['secretName'],
                                                         'properties': {'secretName': {'type': 'string',
                                                                                       'minLength': 1,
                                                                                       'maxLength': 253,
                                                                                       'pattern': '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'}},
                                                         'additionalProperties': False},
                                         'endpoint': {'type': 'string',
                                                      'description': "hf://: a hub mirror's URL (HF_ENDPOINT; "
                                                                     'default the Hugging Face hub). s3://: the '
                                                                     "S3-compatible store's URL (default AWS S3 of "
                                                                     'region).',
                                                      'pattern': '^https?://[^\\s]+$',
                                                      'maxLength': 2048},
                                         'region': {'type': 'string',
                                                    'description': "s3:// only - the bucket's region (default "
                                                                   'us-east-1).',
                                                    'pattern': '^[a-z0-9-]{1,64}$'},
                                         'loadFormat': {'type': 'string',
                                                        'description': 'runai_streamer: the engine streams the '
                                                                       'weights from the files into GPU memory as '
                                                                       "it reads them (vLLM's and SGLang's "
                                                                       '--load-format; the image needs the '
                                                                       "runai-model-streamer package, which vLLM's "
                                                                       'images have), rather than reading each '
                                                                       'file whole first.',
                                                        'enum': ['runai_streamer']},
                                         'adapters': {'type': 'array',
                                                      'description': 'LoRA adapters of this model, each fetched '
                                                                     'onto spec.modelCache beside it (hf:// or '
                                                                     's3://) and loaded by the engine at start '
                                                                     "under its name (vLLM's --lora-modules, "
                                                                     "SGLang's --lora-paths, with --enable-lora). "
                                                                     'Needs spec.modelCache.',
                                                      'maxItems': 64,
                                                      'items': {'type': 'object',
                                                                'required': ['name', 'source'],
                                                                'properties': {'name': {'type': 'string',
                                                                                        'description': 'The model '
                                                                                                       'name '
                                                                                                       'clients '
                                                                                                       'ask for to '
                                                                                                       'use the '
                                                                                                       'adapter.',
                                                                                        'minLength': 1,
                                                                                        'maxLength': 128,
                                                                                        'pattern': '^[A-Za-z0-9][-A-Za-z0-9_.]*(/[A-Za-z0-9][-A-Za-z0-9_.]*)?$'},
                                                                               'source': {'type': 'string',
                                                                                          'description': 'hf://ORG/NAME, '
                                                                                                         'pvc://CLAIM/PATH '
                                                                                                         'or '
                                                                                                         's3://BUCKET/PREFIX.',
                                                                                          'pattern': '^(hf://[A-Za-z0-9][-A-Za-z0-9_.]*/[A-Za-z0-9][-A-Za-z0-9_.]*|pvc://[a-z0-9]([-a-z0-9.]*[a-z0-9])?(/[^/\\x00]+)*/?|s3://[a-z0-9][-a-z0-9.]{1,61}[a-z0-9](/[^\\x00]*)?)$',
                                                                                          'maxLength': 1024},
                                                                               'revision': {'type': 'string',
                                                                                            'description': 'hf://: '
                                                                                                           'the '
                                                                                                           'commit '
                                                                                                           '(40 '
                                                                                                           'hexadecimal '
                                                                                                           'digits) '
                                                                                                           'to '
                                                                                                           'serve: '
                                                                                                           'a '
                                                                                                           'branch '
                                                                                                           'would '
                                                                                                           'move '
                                                                                                           'under '
                                                                                                           'a '
                                                                                                           'running '
                                                                                                           'service. '
                                                                                                           's3://: '
                                                                                                           'a name '
                                                                                                           'for '
                                                                                                           'what '
                                                                                                           'the '
                                                                                                           'prefix '
                                                                                                           'holds '
                                                                                                           'now '
                                                                                                           '(default '
                                                                                                           '"current"); '
                                                                                                           'a new '
                                                                                                           'name '
                                                                                                           'fetches '
                                                                                                           'it '
                                                                                                           'again, '
                                                                                                           'beside '
                                                                                                           'the '
                                                                                                           'old. '
                                                                                                           'Not '
                                                                                                           'for '
                                                                                                           'pvc://.',
                                                                                            'pattern': '^[A-Za-z0-9][-A-Za-z0-9_.]{0,127}$'},
                                                                               'credentials': {'type': 'object',
                                                                                               'description': 'A '
                                                                                                              'Secret '
                                                                                                              'of '
                                                                                                              'the '
                                                                                                              "service's "
                                                                                                              'namespace '
                                                                                                              'holding '
                                                                                                              'the '
                                                                                                              'credentials: '
                                                                                                              'for '
                                                                                                              'hf://, '
                                                                                                              'key '
                                                                                                              'token '
                                                                                                              '(a '
                                                                                                              'Hugging '
                                                                                                              'Face '
                                                                                                              'access '
                                                                                                              'token); '
                                                                                                              'for '
                                                                                                              's3://, '
                                                                                                              'keys '
                                                                                                              'AWS_ACCESS_KEY_ID '
                                                                                                              'and '
                                                                                                              'AWS_SECRET_ACCESS_KEY. '
                                                                                                              'Read '
                                                                                                              'only '
                                                                                                              'by '
                                                                                                              'the '
                                                                                                              'fetch '
                                                                                                              'Job '
                                                                                                              '(and '
                                                                                                              'the '
                                                                                                              'engine '
                                                                                                              'where '
                                                                                                              'nothing '
                                                                                                              'is '
                                                                                                              'cached); '
                                                                                                              'never '
                                                                                                              'in '
                                                                                                              'values.',
                                                                                               'required': ['secretName'],
                                                                                               'properties': {'secretName': {'type': 'string',
                                                                                                                             'minLength': 1,
                                                                                                                             'maxLength': 253,
                                                                                                                             'pattern': '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'}},
                                                                                               'additionalProperties': False},
                                                                               'endpoint': {'type': 'string',
                                                                                            'description': 'hf://: '
                                                                                                           'a hub '
                                                                                                           "mirror's "
                                                                                                           'URL '
                                                                                                           '(HF_ENDPOINT; '
                                                                                                           'default '
                                                                                                           'the '
                                                                                                           'Hugging '
                                                                                                           'Face '
                                                                                                           'hub). '
                                                                                                           's3://: '
                                                                                                           'the '
                                                                                                           'S3-compatible '
                                                                                                           "store's "
                                                                                                           'URL '
                                                                                                           '(default '
                                                                                                           'AWS S3 '
                                                                                                           'of '
                                                                                                           'region).',
                                                                                            'pattern': '^https?://[^\\s]+$',
                                                                                            'maxLength': 2048},
                                                                               'region': {'type': 'string',
                                                                                          'description': 's3:// '
                                                                                                         'only - '
                                                                                                         'the '
                                                                                                         "bucket's "
                                                                                                         'region '
                                                                                                         '(default '
                                                                                                         'us-east-1).',
                                                                                          'pattern': '^[a-z0-9-]{1,64}$'}},
                                                                'additionalProperties': False}}},
                          'additionalProperties': False},
                'modelCache': {'type': 'object',
                               'description': 'One volume holding the weights of hf:// and s3:// sources, fetched '
                                              'once per service and revision by a Job (<service>-fetch-<hash>) and '
                                              'mounted read-only by every serving pod, which starts only once its '
                                              "revision is complete; the engines' compile caches too, per engine "
                                              'image. Either an existing claim (claimName) or one made for the '
                                              'service (<service>-model-cache, kept on uninstall unless keep is '
                                              'false). See docs/models.md.',
                               'properties': {'claimName': {'type': 'string',
                                                            'description': 'An existing PersistentVolumeClaim of '
                                                                           'the namespace (ReadWriteMany, or '
                                                                           'ReadWriteOnce where every serving pod '
                                                                           'runs on one node). Not with size, '
                                                                           'storageClassName or keep.',
                                                            'minLength': 1,
                                                            'maxLength': 253,
                                                            'pattern': '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'},
                                              'size': {'description': 'The claim made for the service: its storage '
                                                                      'request (a quantity such as 200Gi): the '
                                                                      'weights of every revision kept, plus the '
                                                                      'compile caches. Required without claimName.',
                                                       'anyOf': [{'type': 'integer'}, {'type': 'string'}]},
                                              'storageClassName': {'type': 'string',
                                                                   'description': "The made claim's StorageClass "
                                                                                  "(default the cluster's default "
                                                                                  'class).',
                                                                   'minLength': 1,
                                                                   'maxLength': 253},
                                              'accessMode': {'type': 'string',
                                                             'description': "The made claim's access mode: "
                                                                            'ReadWriteMany (default; pods of '
                                                                            'several nodes share it) or '
                                                                            'ReadWriteOnce (every serving pod and '
                                                                            'the fetch Job on one node).',
                                                             'enum': ['ReadWriteMany', 'ReadWriteOnce'],
                                                             'default': 'ReadWriteMany'},
                                              'keep': {'type': 'boolean',
                                                       'description': 'Keep the made claim and the weights on it '
                                                                      'when the release is uninstalled (default '
                                                                      'true; helm.sh/resource-policy keep).',
                                                       'default': True},
                                              'compileCache': {'type': 'boolean',
                                                               'description': "Keep the engines' compile caches "
                                                                              "(vLLM's torch.compile cache, "
                                                                              "Triton's and TorchInductor's) on "
                                                                              'the volume, one folder per engine '
                                                                              'image, so a restarted or added '
                                                                              'replica does not compile again '
                                                                              '(default true).',
                                                               'default': True},
                                              'fetch': {'type': 'object',
                                                        'description': "The fetch Job's pod.",
                                                        'properties': {'image': {'type': 'string',
                                                                                 'description': 'The image that '
                                                                                                'fetches (default: '
                                                                                                'the serving '
                                                                                                "container's own, "
                                                                                                'which has the '
                                                                                                "hub's client, "
                                                                                                'huggingface_hub, '
                                                                                                'and boto3 for '
                                                                                                's3://). It must '
                                                                                                'have Python 3.9 '
                                                                                                'or later and the '
                                                                                                'client of its '
                                                                                                'source.',
                                                                                 'minLength': 1},
                                                                       'resources': {'type': 'object',
                                                                                     'description': 'The fetching '
                                                                                                    "container's "
                                                                                                    'resources (a '
                                                                                                    'ResourceRequirements; '
                                                                                                    'default: '
                                                                                                    'requests of '
                                                                                                    'half a core '
                                                                                                    'and 1Gi of '
                                                                                                    'memory, a '
                                                                                                    'memory limit '
                                                                                                    'of 4Gi).'},
                                                                       'backoffLimit': {'type': 'integer',
                                                                                        'description': 'Retries of '
                                                                                                       'a failed '
                                                                                                       'fetch '
                                                                                                       '(default '
                                                                                                       '6); each '
                                                                                                       'retry '
                                                                                                       'keeps the '
                                                                                                       'files '
                                                                                                       'already '
                                                                                                       'complete.',
                                                                                        'minimum': 0,
                                                                                        'maximum': 100},
                                                                       'podAnnotations': {'type': 'object',
                                                                                          'description': 'Annotations '
                                                                                                         'for the '
                                                                                                         'fetch '
                                                                                                         "Job's "
                                                                                                         'pod (a '
                                                                                                         'service '
                                                                                                         "mesh's: "
                                                                                                         'a Job '
                                                                                                         'whose '
                                                                                                         'pod '
                                                                                                         'carries '
                                                                                                         "a mesh's "
                                                                                                         'sidecar '
                                                                                                         'never '
                                                                                                         'completes '
                                                                                                         'unless '
                                                                                                         'the mesh '
                                                                                                         'is told '
                                                                                                         'to leave '
                                                                                                         'it out).',
                                                                                          'additionalProperties': {'type': 'string'}}},
                                                        'additionalProperties': False}},
                               'additionalProperties': False},
                'layout': {'type': 'string',
                           'description': 'replica (default): one LeaderWorkerSet per role replica, each '
                                          'independent; a template change restarts every replica of the role at '
                                          "once. role: one LeaderWorkerSet per role, its replicas the LWS's "
                                          'groups; a template change rolls through them (roles[].rollout) and a '
                                          'role can autoscale (roles[].autoscaling). disaggregated (prefill/decode '
                                          'services): one DisaggregatedSet whose roles roll together as one '
                                          'revision, so a prefill and a decode of different revisions never serve '
                                          'one request. Changing it on an installed service restarts every pod. '
                                          'See docs/layouts.md.',
                           'enum': ['replica', 'role', 'disaggregated'],
                           'default': 'replica'},
                'schedulingStrategy': {'type': 'object',
                                       'description': 'Pod-level scheduling policy.',
                                       'properties': {'schedulerName': {'type': 'string',
                                                                        'description': 'Scheduler for the pods. '
                                                                                       'Gang-scheduled services '
                                                                                       'default to "volcano" and '
                                                                                       'accept no other; others '
                                                                                       "keep the cluster's default "
                                                                                       'scheduler.',
                                                                        'minLength': 1},
                                                      'queue': {'type': 'string',
                                                                'description': "The Volcano queue of the service's "
                                                                               'PodGroup (its spec.queue; '
                                                                               "Volcano's default queue "
                                                                               'otherwise). Gang-scheduled '
                                                                               'services only; the pre-install '
                                                                               'check refuses a queue that does '
                                                                               'not exist or is not Open.',
                                                                'minLength': 1,
                                                                'maxLength': 253,
                                                                'pattern': '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'},
                                                      'priorityClassName': {'type': 'string',
                                                                            'description': 'The PriorityClass of '
                                                                                           'the service: its '
                                                                                           "PodGroup's priority "
                                                                                           "among Volcano's jobs, "
                                                                                           'and every serving '
                                                                                           "pod's "
                                                                                           'priorityClassName '
                                                                                           '(Kubernetes gives each '
                                                                                           'pod its priority). The '
                                                                                           'pre-install check '
                                                                                           'refuses one that does '
                                                                                           'not exist.',
                                                                            'minLength': 1,
                                                                            'maxLength': 253,
                                                                            'pattern': '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'}},
                                       'additionalProperties': False},
                'gangSchedule': {'type': 'object',
                                 'description': 'Which pods Volcano must place together. Omitted, multi-node and '
                                                'prefill/decode services are gang-scheduled at level role and '
                                                'single-node monolithic ones are not. Every replica is always '
                                                'atomic: all its pods are placed, or none.',
                                 'properties': {'enable': {'type': 'boolean',
                                                           'description': 'Gang-schedule the service (one Volcano '
                                                                          'PodGroup). Default true.',
                                                           'default': True},
                                                'level': {'type': 'string',
                                                          'description': 'group: every replica of every role '
                                                                         'together, all or nothing. role: the '
                                                                         'first minRoleReplicas replicas of each '
                                                                         'role together (the atomic minimum), '
                                                                         'further replicas each as capacity '
                                                                         'allows.',
                                                          'enum': ['group', 'role'],
                                                          'default': 'role'},
                                                'minRoleReplicas': {'type': 'object',
                                                                    'description': 'Level role: role name to the '
                                                                                   'number of its replicas in the '
                                                                                   'atomic minimum (default 1, at '
                                                                                   "most the role's replicas).",
                                                                    'additionalProperties': {'type': 'integer',
                                                                                             'minimum': 1,
                                                                                             'maximum': 2147483647}},
                                                'networkTopology': {'type': 'object',
                                                                    'description': 'The default of every serving '
                                                                                   "role's networkTopology: each "
                                                                                   "replica's pods within one "
                                                                                   'HyperNode of at most the given '
                                                                                   "tier (a role's own "
                                                                                   'networkTopology overrides it; '
                                                                                   'mode none there opts the role '
                                                                                   'out). Mode none has no use '
                                                                                   'here.',
                                                                    'properties': {'mode': {'type': 'string',
                                                                                            'description': 'hard '
                                                                                                           '(default): '
                                                                                                           'never '
                                                                                                           'beyond '
                                                                                                           'the '
                                                                                                           'tier; '
                                                                                                           'a '
                                                                                                           'replica '
                                                                                                           'that '
                                                                                                           'fits '
                                                                                                           'in no '
                                                                                                           'domain '
                                                                                                           'of it '
                                                                                                           'waits, '
                                                                                                           'whole. '
                                                                                                           'soft: '
                                                                                                           'the '
                                                                                                           'lowest '
                                                                                                           'tier '
                                                                                                           'that '
                                                                                                           'fits '
                                                                                                           'first, '
                                                                                                           'then '
                                                                                                           'any '
                                                                                                           '(no '
                                                                                                           'bound). '
                                                                                                           'none: '
                                                                                                           'no '
                                                                                                           'constraint '
                                                                                                           'for '
                                                                                                           'this '
                                                                                                           "role's "
                                                                                                           'replicas '
                                                                                                           '(a '
                                                                                                           'role '
                                                                                                           'only).',
                                                                                            'enum': ['hard',
                                                                                                     'soft',
                                                                                                     'none']},
                                                                                   'highestTierAllowed': {'type': 'integer',
                                                                                                          'description': 'Mode '
                                                                                                                         'hard '
                                                                                                                         '- '
                                                                                                                         'the '
                                                                                                                         'highest '
                                                                                                                         'tier '
                                                                                                                         'number '
                                                                                                                         '(from '
                                                                                                                         '1) '
                                                                                                                         'the '
                                                                                                                         'pods '
                                                                                                                         'may '
                                                                                                                         'span.',
                                                                                                          'minimum': 1,
                                                                                                          'maximum': 2147483647},
                                                                                   'highestTierName': {'type': 'string',
                                                                                                       'description': 'Mode '
                                                                                                                      'hard '
                                                                                                                      '- '
                                                                                                                      'the '
                                                                                                                      'highest '
                                                                                                                      'tier '
                                                                                                                      'by '
                                                                                                                      'its '
                                                                                                                      "HyperNodes' "
                                                                                                                      'tierName '
                                                                                                                      '(such '
                                                                                                                      'as '
                                                                                                                      'rack).',
                                                                                                       'minLength': 1,
                                                                                                       'maxLength': 253}},
                                                                    'additionalProperties': False},
                                                'serviceNetworkTopology': {'type': 'object',
                                                                           'description': "The PodGroup's own "
                                                                                          'network topology: every '
                                                                                          'pod of the service, '
                                                                                          'each replica of each '
                                                                                          'role, within one '
                                                                                          'HyperNode of at most '
                                                                                          'the given tier (such as '
                                                                                          'prefill and decode '
                                                                                          'within one spine for '
                                                                                          'their KV-cache '
                                                                                          'transfers). Volcano '
                                                                                          'places later replicas '
                                                                                          'under the domain it '
                                                                                          'chose first, so the '
                                                                                          'whole service must fit '
                                                                                          'in it. Mode none has no '
                                                                                          'use here.',
                                                                           'properties': {'mode': {'type': 'string',
                                                                                                   'description': 'hard '
                                                                                                                  '(default): '
                                                                                                                  'never '
                                                                                                                  'beyond '
                                                                                                                  'the '
                                                                                                                  'tier; '
                                                                                                                  'a '
                                                                                                                  'replica '
                                                                                                                  'that '
                                                                                                                  'fits '
                                                                                                                  'in '
                                                                                                                  'no '
                                                                                                                  'domain '
                                                                                                                  'of '
                                                                                                                  'it '
                                                                                                                  'waits, '
                                                                                                                  'whole. '
                                                                                                                  'soft: '
                                                                                                                  'the '
                                                                                                                  'lowest '
                                                                                                                  'tier '
                                                                                                                  'that '
                                                                                                                  'fits '
                                                                                                                  'first, '
                                                                                                                  'then '
                                                                                                                  'any '
                                                                                                                  '(no '
                                                                                                                  'bound). '
                                                                                                                  'none: '
                                                                                                                  'no '
                                                                                                                  'constraint '
                                                                                                                  'for '
                                                                                                                  'this '
                                                                                                                  "role's "
                                                                                                                  'replicas '
                                                                                                                  '(a '
                                                                                                                  'role '
                                                                                                                  'only).',
                                                                                                   'enum': ['hard',
                                                                                                            'soft',
                                                                                                            'none']},
                                                                                          'highestTierAllowed': {'type': 'integer',
                                                                                                                 'description': 'Mode '
                                                                                                                                'hard '
                                                                                                                                '- '
                                                                                                                                'the '
                                                                                                                                'highest '
                                                                                                                                'tier '
                                                                                                                                'number '
                                                                                                                                '(from '
                                                                                                                                '1) '
                                                                                                                                'the '
                                                                                                                                'pods '
                                                                                                                                'may '
                                                                                                                                'span.',
                                                                                                                 'minimum': 1,
                                                                                                                 'maximum': 2147483647},
                                                                                          'highestTierName': {'type': 'string',
                                                                                                              'description': 'Mode '
                                                                                                                             'hard '
                                                                                                                             '- '
                                                                                                                             'the '
                                                                                                                             'highest '
                                                                                                                             'tier '
                                                                                                                             'by '
                                                                                                                             'its '
                                                                                                                             "HyperNodes' "
                                                                                                                             'tierName '
                                                                                                                             '(such '
                                                                                                                             'as '
                                                                                                                             'rack).',
                                                                                                              'minLength': 1,
                                                                                                              'maxLength': 253}},
                                                                           'additionalProperties': False}},
                                 'additionalProperties': False},
                'service': {'type': 'object',
                            'description': "A Service over every serving role's serving pods, named "
                                           '<service>-serving, for clients that call the service without a Gateway '
                                           '(a monolithic service of several worker roles); the roles must serve '
                                           "on one port. As a role's service otherwise.",
                            'properties': {'type': {'type': 'string',
                                                    'description': 'ClusterIP (the default), NodePort or '
                                                                   'LoadBalancer.',
                                                    'enum': ['ClusterIP', 'NodePort', 'LoadBalancer']},
                                           'headless': {'type': 'boolean',
                                                        'description': 'No cluster IP (clusterIP None): DNS '
                                                                       "answers with the serving pods' own "
                                                                       'addresses, for clients that balance over '
                                                                       'them themselves. ClusterIP only. Default '
                                                                       'false.'},
                                           'annotations': {'type': 'object',
                                                           'description': "The Service's annotations (a load "
                                                                          "balancer's, a mesh's).",
                                                           'additionalProperties': {'type': 'string'}}},
                            'additionalProperties': False},
                'tls': {'type': 'object',
                        'description': 'TLS between the gateway, the prefill/decode sidecar and the engines, as '
                                       'KServe runs it: every serving pod mounts the Secret (kubernetes.io/tls: '
                                       'tls.crt, tls.key, and ca.crt to verify peers with) read-only, the engines '
                                       "serve HTTPS with it (vLLM's and SGLang's --ssl-certfile and --ssl-keyfile; "
                                       'vLLM reloads it when it changes), their probes ask in HTTPS, the '
                                       'prefill/decode sidecar serves and dials in TLS, the picker scrapes the '
                                       "engines' metrics in HTTPS, and Services name their ports https. The "
                                       "InferencePool API has no field for a backend's TLS: the gateway's own "
                                       'backend-TLS setting names it (docs/router.md).',
                        'properties': {'secretName': {'type': 'string',
                                                      'description': 'The Secret holding the serving certificate, '
                                                                     "in the service's namespace: required, unless "
                                                                     'certManager writes it (then default '
                                                                     '<service>-serving-tls).',
                                                      'minLength': 1,
                                                      'maxLength': 253,
                                                      'pattern': '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'},
                                       'certManager': {'type': 'object',
                                                       'description': 'A cert-manager Certificate '
                                                                      '(cert-manager.io/v1) writes the Secret, '
                                                                      'from the issuer named here, for localhost, '
                                                                      "127.0.0.1 and the service's Services, and "
                                                                      'renews it (the engines and the sidecar read '
                                                                      'a renewed certificate without a restart). '
                                                                      'The pre-install check requires its API.',
                                                       'required': ['issuerRef'],
                                                       'properties': {'issuerRef': {'type': 'object',
                                                                                    'description': 'The Issuer or '
                                                                                                   'ClusterIssuer '
                                                                                                   'that signs it.',
                                                                                    'required': ['name'],
                                                                                    'properties': {'name': {'type': 'string',
                                                                                                            'minLength': 1},
                                                                                                   'kind': {'type': 'string',
                                                                                                            'description': 'Issuer '
                                                                                                                           '(the '
                                                                                                                           'default) '
                                                                                                                           'or '
                                                                                                                           'ClusterIssuer.',
                                                                                                            'enum': ['Issuer',
                                                                                                                     'ClusterIssuer']},
                                                                                                   'group': {'type': 'string',
                                                                                                             'description': 'The '
                                                                                                                            "issuer's "
                                                                                                                            'API '
                                                                                                                            'group '
                                                                                                                            '(default '
                                                                                                                            'cert-manager.io).',
                                                                                                             'minLength': 1}},
                                                                                    'additionalProperties': False},
                                                                      'duration': {'type': 'string',
                                                                                   'description': 'How long a '
                                                                                                  'certificate is '
                                                                                                  'valid, a Go '
                                                                                                  'duration such '
                                                                                                  'as 2160h (the '
                                                                                                  "issuer's "
                                                                                                  'default).',
                                                                                   'minLength': 1},
                                                                      'renewBefore': {'type': 'string',
                                                                                      'description': 'How long '
                                                                                                     'before it '
                                                                                                     'expires it '
                                                                                                     'is renewed '
                                                                                                     "(cert-manager's "
                                                                                                     'default, a '
                                                                                                     'third of '
                                                                                                     'it).',
                                                                                      'minLength': 1}},
                                                       'additionalProperties': False},
                                       'verifyPeers': {'type': 'boolean',
                                                       'description': "The sidecar verifies the engines' "
                                                                      "certificates against the Secret's ca.crt "
                                                                      "(the prefill engine's by its pod address, "
                                                                      "the decode engine's as localhost). Default "
                                                                      'false: encrypted, not verified, since a '
                                                                      'certificate issued ahead names no pod '
                                                                      'address.'}},
                        'additionalProperties': False},
                'monitoring': {'type': 'object',
                               'description': 'Prometheus Operator monitors (monitoring.coreos.com/v1; the '
                                              'pre-install check requires the API where they are enabled). See '
                                              'docs/monitoring.md.',
                               'properties': {'podMonitor': {'type': 'object',
                                                             'description': 'One PodMonitor per serving role, '
                                                                            "scraping vLLM's /metrics on the "
                                                                            "serving port of each replica's leader "
                                                                            "(the pod that runs the engine's API "
                                                                            "server: a multi-node replica's other "
                                                                            'pods serve none), and one for a '
                                                                            "router's endpoint picker (its metrics "
                                                                            "port, 9090). The pods' service, role "
                                                                            'and component-type labels become the '
                                                                            "metrics' labels.",
                                                             'properties': {'enabled': {'type': 'boolean',
                                                                                        'description': 'Create the '
                                                                                                       'PodMonitors. '
                                                                                                       'Default '
                                                                                                       'false.',
                                                                                        'default': False},
                                                                            'interval': {'type': 'string',
                                                                                         'description': 'How often '
                                                                                                        'Prometheus '
                                                                                                        'scrapes, '
                                                                                                        'as a '
                                                                                                        'Prometheus '
                                                                                                        'duration '
                                                                                                        '(e.g. '
                                                                                                        '30s); '
                                                                                                        'default '
                                                                                                        'its '
                                                                                                        'global '
                                                                                                        'scrape '
                                                                                                        'interval.'},
                                                                            'labels': {'type': 'object',
                                                                                       'description': 'Labels of '
                                                                                                      'every '
                                                                                                      'PodMonitor, '
                                                                                                      'such as the '
                                                                                                      'one a '
                                                                                                      "Prometheus's "
                                                                                                      'podMonitorSelector '
                                                                                                      'matches '
                                                                                                      '(e.g. '
                                                                                                      'release: '
                                                                                                      'kube-prometheus-stack).',
                                                                                       'additionalProperties': {'type': 'string'}},
                                                                            'pickerAuthorization': {'type': 'object',
                                                                                                    'description': 'The '
                                                                                                                   'picker '
                                                                                                                   "endpoint's "
                                                                                                                   'authorization, '
                                                                                                                   'as '
                                                                                                                   'a '
                                                                                                                   'PodMonitor '
                                                                                                                   "endpoint's "
                                                                                                                   '(e.g. '
                                                                                                                   '{type: '
                                                                                                                   'Bearer, '
                                                                                                                   'credentials: '
                                                                                                                   '{name: '
                                                                                                                   'SECRET, '
                                                                                                                   'key: '
                                                                                                                   'token}}): '
                                                                                                                   'the '
                                                                                                                   "picker's "
                                                                                                                   'metrics '
                                                                                                                   'endpoint '
                                                                                                                   'serves '
                                                                                                                   'only '
                                                                                                                   'tokens '
                                                                                                                   'the '
                                                                                                                   'API '
                                                                                                                   'server '
                                                                                                                   'authenticates '
                                                                                                                   'and '
                                                                                                                   'allows '
                                                                                                                   'to '
                                                                                                                   'get '
                                                                                                                   '/metrics.'}},
                                                             'additionalProperties': False}},
                               'additionalProperties': False},
                'networkPolicy': {'type': 'object',
                                  'description': 'NetworkPolicies (networking.k8s.io/v1) for every pod the service '
                                                 'runs, on by default: each admits exactly the connections the '
                                                 "service needs (docs/security.md) — the Gateway's pods to the "
                                                 'pods its route sends to, the picker and Prometheus to the '
                                                 "metrics, a replica's own pods to its bootstrap ports, the "
                                                 'prefill/decode pods to each other, the frontends to their '
                                                 'serving pods, the clients to the Services and frontends — and '
                                                 "refuses the rest. They take effect only where the cluster's "
                                                 'network plugin enforces NetworkPolicies.',
                                  'properties': {'enabled': {'type': 'boolean',
                                                             'description': 'Render the policies. Default true; '
                                                                            'false renders none (not even the '
                                                                            "picker's).",
                                                             'default': True},
                                                 'gateway': {'type': 'object',
                                                             'description': "The Gateway's pods, which send "
                                                                            "requests to the pool's pods and call "
                                                                            'the picker. Default: every pod of the '
                                                                            "Gateway's namespace (the shared "
                                                                            "Gateway's, else the service's own); "
                                                                            'name them where your Gateway '
                                                                            'implementation runs its proxies '
                                                                            'elsewhere (Envoy Gateway: '
                                                                            'envoy-gateway-system).',
                                                             'minProperties': 1,
                                                             'properties': {'podLabels': {'type': 'object',
                                                                                          'description': 'Labels '
                                                                                                         'the pods '
                                                                                                         'carry.',
                                                                                          'additionalProperties': {'type': 'string'}},
                                                                            'namespaceLabels': {'type': 'object',
                                                                                                'description': 'Labels '
                                                                                                               'their '
                                                                                                               'namespaces '
                                                                                                               'carry '
                                                                                                               '(kubernetes.io/metadata.name '
                                                                                                               'names '
                                                                                                               'one).',
                                                                                                'additionalProperties': {'type': 'string'}}},
                                                             'additionalProperties': False},
                                                 'prometheus': {'type': 'object',
                                                                'description': "Prometheus's pods, which scrape "
                                                                               "the serving pods' and the picker's "
                                                                               'metrics. Default: every pod of the '
                                                                               "namespace a role's "
                                                                               'autoscaling.prometheus.serverAddress '
                                                                               'names '
                                                                               '(http://NAME.NAMESPACE[.svc…]), '
                                                                               'else none; required with '
                                                                               'spec.monitoring.podMonitor where '
                                                                               'no address names one.',
                                                                'minProperties': 1,
                                                                'properties': {'podLabels': {'type': 'object',
                                                                                             'description': 'Labels '
                                                                                                            'the '
                                                                                                            'pods '
                                                                                                            'carry.',
                                                                                             'additionalProperties': {'type': 'string'}},
                                                                               'namespaceLabels': {'type': 'object',
                                                                                                   'description': 'Labels '
                                                                                                                  'their '
                                                                                                                  'namespaces '
                                                                                                                  'carry '
                                                                                                                  '(kubernetes.io/metadata.name '
                                                                                                                  'names '
                                                                                                                  'one).',
                                                                                                   'additionalProperties': {'type': 'string'}}},
                                                                'additionalProperties': False},
                                                 'clients': {'type': 'object',
                                                             'description': 'Who may call the serving pods through '
                                                                            'spec.service and roles[].service, and '
                                                                            'the frontends; on a service without a '
                                                                            'router, who may call its serving '
                                                                            'pods. Default: every pod of the '
                                                                            "service's namespace.",
                                                             'minProperties': 1,
                                                             'properties': {'podLabels': {'type': 'object',
                                                                                          'description': 'Labels '
                                                                                                         'the pods '
                                                                                                         'carry.',
                                                                                          'additionalProperties': {'type': 'string'}},
                                                                            'namespaceLabels': {'type': 'object',
                                                                                                'description': 'Labels '
                                                                                                               'their '
                                                                                                               'namespaces '
                                                                                                               'carry '
                                                                                                               '(kubernetes.io/metadata.name '
                                                                                                               'names '
                                                                                                               'one).',
                                                                                                'additionalProperties': {'type': 'string'}}},
                                                             'additionalProperties': False},
                                                 'ingress': {'type': 'array',
                                                             'description': 'More sources admitted to every '
                                                                            'serving pod.',
                                                             'items': {'type': 'object',
                                                                       'description': 'Pods by their labels '
                                                                                      '(podLabels alone: of the '
                                                                                      "service's namespace; "
                                                                                      'namespaceLabels: of the '
                                                                                      'namespaces they select), or '
                                                                                      'addresses (cidr), and the '
                                                                                      'ports (TCP; all if '
                                                                                      'omitted).',
                                                                       'minProperties': 1,
                                                                       'properties': {'podLabels': {'type': 'object',
                                                                                                    'description': 'Labels '
                                                                                                                   'the '
                                                                                                                   'pods '
                                                                                                                   'carry.',
                                                                                                    'additionalProperties': {'type': 'string'}},
                                                                                      'namespaceLabels': {'type': 'object',
                                                                                                          'description': 'Labels '
                                                                                                                         'their '
                                                                                                                         'namespaces '
                                                                                                                         'carry '
                                                                                                                         '(kubernetes.io/metadata.name '
                                                                                                                         'names '
                                                                                                                         'one).',
                                                                                                          'additionalProperties': {'type': 'string'}},
                                                                                      'cidr': {'type': 'string',
                                                                                               'description': 'Addresses, '
                                                                                                              'as '
                                                                                                              'a '
                                                                                                              'CIDR '
                                                                                                              '(e.g. '
                                                                                                              '10.0.0.0/8), '
                                                                                                              'instead '
                                                                                                              'of '
                                                                                                              'labels.'},
                                                                                      'ports': {'type': 'array',
                                                                                                'description': 'The '
                                                                                                               'TCP '
                                                                                                               'ports; '
                                                                                                               'all '
                                                                                                               'if '
                                                                                                               'omitted.',
                                                                                                'items': {'type': 'integer',
                                                                                                          'minimum': 1,
                                                                                                          'maximum': 65535}}},
                                                                       'additionalProperties': False}},
                                                 'egress': {'type': 'object',
                                                            'description': 'Egress is not restricted unless '
                                                                           'restrict is true. Restricted, a pod '
                                                                           "may reach the cluster's DNS (kube-dns "
                                                                           "in kube-system), the service's own "
                                                                           'pods it talks to (its replica group, '
                                                                           "the prefill/decode peers, the picker's "
                                                                           "and frontends' serving pods), the API "
                                                                           'server where it calls it (the picker, '
                                                                           'the prefill/decode sidecar, the '
                                                                           'frontends) and what `to` adds: a '
                                                                           'serving pod that reads a model cache '
                                                                           'needs nothing more; one that downloads '
                                                                           'its weights, and the fetch Jobs, need '
                                                                           'the hub in `to`.',
                                                            'properties': {'restrict': {'type': 'boolean',
                                                                                        'description': 'Restrict '
                                                                                                       'egress. '
                                                                                                       'Default '
                                                                                                       'false.',
                                                                                        'default': False},
                                                                           'apiServer': {'type': 'array',
                                                                                         'description': 'The API '
                                                                                                        "server's "
                                                                                                        'addresses '
                                                                                                        '(CIDRs, '
                                                                                                        'e.g. '
                                                                                                        '172.20.0.1/32 '
                                                                                                        'and the '
                                                                                                        'control '
                                                                                                        "plane's "
                                                                                                        'own), '
                                                                                                        'required '
                                                                                                        'with '
                                                                                                        'restrict '
                                                                                                        'where a '
                                                                                                        'pod calls '
                                                                                                        'the API '
                                                                                                        'server.',
                                                                                         'items': {'type': 'string'}},
                                                                           'to': {'type': 'array',
                                                                                  'description': 'More '
                                                                                                 'destinations for '
                                                                                                 'every pod (a '
                                                                                                 'model hub, an '
                                                                                                 'object store, a '
                                                                                                 'proxy).',
                                                                                  'items': {'type': 'object',
                                                                                            'description': 'Pods '
                                                                                                           'by '
                                                                                                           'their '
                                                                                                           'labels '
                                                                                                           '(podLabels '
                                                                                                           'alone: '
                                                                                                           'of the '
                                                                                                           "service's "
                                                                                                           'namespace; '
                                                                                                           'namespaceLabels: '
                                                                                                           'of the '
                                                                                                           'namespaces '
                                                                                                           'they '
                                                                                                           'select), '
                                                                                                           'or '
                                                                                                           'addresses '
                                                                                                           '(cidr), '
                                                                                                           'and '
                                                                                                           'the '
                                                                                                           'ports '
                                                                                                           '(TCP; '
                                                                                                           'all if '
                                                                                                           'omitted).',
                                                                                            'minProperties': 1,
                                                                                            'properties': {'podLabels': {'type': 'object',
                                                                                                                         'description': 'Labels '
                                                                                                                                        'the '
                                                                                                                                        'pods '
                                                                                                                                        'carry.',
                                                                                                                         'additionalProperties': {'type': 'string'}},
                                                                                                           'namespaceLabels': {'type': 'object',
                                                                                                                               'description': 'Labels '
                                                                                                                                              'their '
                                                                                                                                              'namespaces '
                                                                                                                                              'carry '
                                                                                                                                              '(kubernetes.io/metadata.name '
                                                                                                                                              'names '
                                                                                                                                              'one).',
                                                                                                                               'additionalProperties': {'type': 'string'}},
                                                                                                           'cidr': {'type': 'string',
                                                                                                                    'description': 'Addresses, '
                                                                                                                                   'as '
                                                                                                                                   'a '
                                                                                                                                   'CIDR '
                                                                                                                                   '(e.g. '
                                                                                                                                   '10.0.0.0/8), '
                                                                                                                                   'instead '
                                                                                                                                   'of '
                                                                                                                                   'labels.'},
                                                                                                           'ports': {'type': 'array',
                                                                                                                     'description': 'The '
                                                                                                                                    'TCP '
                                                                                                                                    'ports; '
                                                                                                                                    'all '
                                                                                                                                    'if '
                                                                                                                                    'omitted.',
                                                                                                                     'items': {'type': 'integer',
                                                                                                                               'minimum': 1,
                                                                                                                               'maximum': 65535}}},
                                                                                            'additionalProperties': False}}},
                                                            'additionalProperties': False}},
                                  'additionalProperties': False}},
 'additionalProperties': False}
