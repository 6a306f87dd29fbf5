{{/* The InferenceService's name: values.name, else the release name. */}}
{{- define "fusioninfer.name" -}}
{{- default .Release.Name .Values.name -}}
{{- end -}}

{{/* Labels for every object of the release (never for pod templates: a changed label restarts pods),
each quoted: a release named 03, on or 1e3 is a number or a boolean to YAML otherwise. */}}
{{- define "fusioninfer.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | quote }}
{{- end -}}

{{/* The InferenceService's spec, as YAML: what the release declares, and what the check Job reads (as JSON). */}}
{{- define "fusioninfer.spec" -}}
roles:
  {{- toYaml .Values.roles | nindent 2 }}
{{- with .Values.layout }}
layout: {{ . | toJson }}
{{- end }}
{{- with .Values.schedulingStrategy }}
schedulingStrategy:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.gangSchedule }}
gangSchedule:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.monitoring }}
monitoring:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.service }}
service:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tls }}
tls:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.networkPolicy }}
networkPolicy:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.model }}
model:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.modelCache }}
modelCache:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* Whether the post-renderer will gang-schedule the service: what Helm needs at render time (the Volcano
check below, the hooks' RBAC), decided as fusion_helm/base/needs.py gang_minimum decides it
(tests/chart/test_chart_decisions.py holds the two to the same answers): with gangSchedule, as it says;
without, when a serving role is multi-node (nodeCount 2 or more) or prefill/decode (prefiller, decoder).
Never when the atomic minimum is a single pod of single-pod replicas. */}}
{{- define "fusioninfer.gangScheduled" -}}
{{- $serving := list -}}
{{- range .Values.roles -}}{{- if not (has .componentType (list "router" "frontend")) -}}{{- $serving = append $serving . -}}{{- end -}}{{- end -}}
{{- $multinode := false -}}
{{- $gang := false -}}
{{- range $serving -}}
{{- if ge (int (dig "multinode" "nodeCount" 1 .)) 2 -}}{{- $multinode = true -}}{{- end -}}
{{- if has .componentType (list "prefiller" "decoder") -}}{{- $gang = true -}}{{- end -}}
{{- end -}}
{{- $gang = or $gang $multinode -}}
{{- $level := "role" -}}
{{- $minimum := dict -}}
{{- with .Values.gangSchedule -}}
{{- $gang = ne (toString (dig "enable" true .)) "false" -}}
{{- $level = dig "level" "role" . -}}
{{- $minimum = dig "minRoleReplicas" dict . -}}
{{- end -}}
{{- if and $gang (not $multinode) -}}
{{- $pods := 0 -}}
{{- range $serving -}}
{{- /* an autoscaled role plans for its autoscaler's minimum, as the post-renderer's gang does */ -}}
{{- $replicas := int (ternary (dig "autoscaling" "minReplicas" 1 .) (dig "replicas" 1 .) (hasKey . "autoscaling")) -}}
{{- $pods = add $pods (ternary $replicas (min (int (dig .name 1 $minimum)) $replicas) (eq $level "group")) -}}
{{- end -}}
{{- if le (int $pods) 1 -}}{{- $gang = false -}}{{- end -}}
{{- end -}}
{{- $gang -}}
{{- end -}}

{{/* The InferenceService CRD comes from its own chart, installed once per cluster (docs/lifecycle.md):
without it, say so and how, rather than Helm's "no matches for kind". Only where the API is not served
and helm can look at the cluster (install, upgrade, --dry-run=server; `helm template` cannot, and
renders). Whether a served CRD is older than the chart's is the check Job's to say. */}}
{{/* The oldest Helm the documented commands run on: --take-ownership (the CRD chart) came in 3.17. */}}
{{- define "fusioninfer.checkHelm" -}}
{{- if not (semverCompare ">=3.17.0-0" .Capabilities.HelmVersion.Version) }}
{{- fail (printf "this chart needs Helm 3.17 or later (or Helm 4); this helm is %s" .Capabilities.HelmVersion.Version) }}
{{- end }}
{{- end -}}

{{- define "fusioninfer.checkCRD" -}}
{{- if not (.Capabilities.APIVersions.Has "fusioninfer.io/v1alpha1") -}}
{{- if and (lookup "v1" "Namespace" "" "kube-system") (not (lookup "apiextensions.k8s.io/v1" "CustomResourceDefinition" "" "inferenceservices.fusioninfer.io")) -}}
{{- fail "the InferenceService CRD (inferenceservices.fusioninfer.io) is not installed: install it once per cluster, before this chart: helm upgrade --install fusioninfer-crds charts/fusioninfer-crds --take-ownership (Helm 4: and --server-side=true --force-conflicts; docs/lifecycle.md)" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The PodGroup needs Volcano's subGroupPolicy (v1.14 and later). An older PodGroup CRD would have
the API server drop the field without a word, and replicas would no longer be placed whole: refuse
instead. Only where helm can look at the cluster (install, upgrade, --dry-run=server). */}}
{{- define "fusioninfer.checkVolcano" -}}
{{- if eq (include "fusioninfer.gangScheduled" .) "true" -}}
{{- with lookup "apiextensions.k8s.io/v1" "CustomResourceDefinition" "" "podgroups.scheduling.volcano.sh" -}}
{{- range .spec.versions -}}
{{- if and (eq .name "v1beta1") (not (dig "schema" "openAPIV3Schema" "properties" "spec" "properties" "subGroupPolicy" "" .)) -}}
{{- fail "the cluster's Volcano PodGroup CRD (scheduling.volcano.sh/v1beta1) has no spec.subGroupPolicy: gang scheduling needs Volcano v1.14 or later; upgrade Volcano, or set gangSchedule.enable=false" -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Refuse an upgrade that removes a role (a rename removes the old name) or changes its
componentType, unless allowRoleRemoval lists it: all of that role's replicas would go or restart.
Looks at the InferenceService in the cluster, so only where helm can (upgrade, --dry-run=server:
helm-diff's `helm template --is-upgrade --dry-run=server` too). */}}
{{- define "fusioninfer.checkRoleChanges" -}}
{{- $allowed := .Values.allowRoleRemoval | default list -}}
{{- $name := include "fusioninfer.name" . -}}
{{- $wanted := dict -}}
{{- range .Values.roles -}}{{- $_ := set $wanted .name .componentType -}}{{- end -}}
{{- /* Without the API there is no earlier InferenceService, and Helm 4's lookup fails on a kind it has
not discovered. An upgrade's release had the API; Helm 3's `helm template` does not discover it, even
where it may look up. */ -}}
{{- if or (.Capabilities.APIVersions.Has "fusioninfer.io/v1alpha1/InferenceService") .Release.IsUpgrade -}}
{{- with lookup "fusioninfer.io/v1alpha1" "InferenceService" .Release.Namespace $name -}}
{{- $layout := default "replica" .spec.layout -}}
{{- $pods := 0 -}}
{{- range .spec.roles -}}
{{- if not (has .componentType (list "router" "frontend")) -}}
{{- $pods = add $pods (mul (default (dig "autoscaling" "minReplicas" 1 .) .replicas) (dig "multinode" "nodeCount" 1 .)) -}}
{{- end -}}
{{- end -}}
{{- if and (ne $layout (default "replica" $.Values.layout)) (not $.Values.allowLayoutChange) -}}
{{- fail (printf "this upgrade changes InferenceService %s from layout %s to %s, which replaces every LeaderWorkerSet and restarts its %d pod(s); to allow it, set allowLayoutChange=true" $name $layout (default "replica" $.Values.layout) (int $pods)) -}}
{{- end -}}
{{- range .spec.roles -}}
{{- $replicas := int (default (dig "autoscaling" "minReplicas" 1 .) .replicas) -}}
{{- $nodes := int (default 1 (dig "multinode" "nodeCount" 1 .)) -}}
{{- $loss := printf "its %d replica(s), %d pod(s)" $replicas (mul $replicas $nodes) -}}
{{- if has .name $allowed -}}
{{- else if not (hasKey $wanted .name) -}}
{{- fail (printf "this upgrade removes role %s of InferenceService %s and deletes %s; to allow it, set allowRoleRemoval={%s}" .name $name $loss .name) -}}
{{- else if ne (get $wanted .name) .componentType -}}
{{- fail (printf "this upgrade changes role %s of InferenceService %s from %s to %s and restarts %s; to allow it, set allowRoleRemoval={%s}" .name $name .componentType (get $wanted .name) $loss .name) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Where the service is placed, as fusion_helm/base/needs.py placement decides it (JSON;
tests/chart/test_chart_decisions.py holds the two to the same answers): the PodGroup's queue (a gang-scheduled
service's), the PriorityClass, and the tiers the PodGroup's hard network topologies name (each serving
role's own networkTopology, else gangSchedule.networkTopology, for each role with a subGroupPolicy — all
but a role of no replicas at level group in the replica layout; and gangSchedule.serviceNetworkTopology),
each as text. All cluster-scoped: with any of them, the hooks get a ClusterRole to read exactly those,
which the check Job reads. */}}
{{- define "fusioninfer.placement" -}}
{{- $strategy := .Values.schedulingStrategy | default dict -}}
{{- $gang := .Values.gangSchedule | default dict -}}
{{- $out := dict "tiers" list -}}
{{- with $strategy.priorityClassName -}}{{- $_ := set $out "priorityClass" . -}}{{- end -}}
{{- if eq (include "fusioninfer.gangScheduled" .) "true" -}}
{{- with $strategy.queue -}}{{- $_ := set $out "queue" . -}}{{- end -}}
{{- $topologies := list -}}
{{- range .Values.roles -}}
{{- $placed := or .autoscaling (not (hasKey . "replicas")) (gt (int .replicas) 0) (ne ($gang.level | default "role") "group") (has (toString $.Values.layout) (list "role" "disaggregated")) -}}
{{- if and (not (has .componentType (list "router" "frontend"))) $placed -}}{{- $topologies = append $topologies (.networkTopology | default $gang.networkTopology) -}}{{- end -}}
{{- end -}}
{{- $topologies = append $topologies $gang.serviceNetworkTopology -}}
{{- $tiers := list -}}
{{- range $topologies -}}
{{- if and . (eq (.mode | default "hard") "hard") -}}
{{- $tiers = append $tiers (toString (coalesce .highestTierName .highestTierAllowed)) -}}
{{- end -}}
{{- end -}}
{{- $_ := set $out "tiers" ($tiers | uniq | sortAlpha) -}}
{{- end -}}
{{- $out | toJson -}}
{{- end -}}

{{/* The claims the service's weights are read from, sorted: the check reads exactly these (it may get them:
templates/hooks.yaml). Decided as fusion_helm/base/needs.py weight_claims decides it (tests/chart/test_chart_decisions.py
holds the two to the same answers). */}}
{{- define "fusioninfer.weightClaims" -}}
{{- $claims := list -}}
{{- with (.Values.modelCache | default dict).claimName -}}{{- $claims = append $claims (toString .) -}}{{- end -}}
{{- $default := .Values.model -}}
{{- range .Values.roles -}}
{{- if not (has .componentType (list "router" "frontend")) -}}
{{- $uri := toString ((ternary .model $default (hasKey . "model")) | default dict).source -}}
{{- if hasPrefix "pvc://" $uri -}}{{- $claims = append $claims (index (splitList "/" (trimPrefix "pvc://" $uri)) 0) -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- $claims | uniq | sortAlpha | toJson -}}
{{- end -}}

{{- /* Whether a serving role's autoscaler queries Prometheus, whose ScaledObject's health the status hook reads:
the Go twin of fusion_helm/base/needs.py queries_prometheus. */ -}}
{{- define "fusioninfer.queriesPrometheus" -}}
{{- range .Values.roles -}}
{{- if and (not (has (toString .componentType) (list "router" "frontend"))) (dig "autoscaling" "prometheus" nil .) -}}true{{- end -}}
{{- end -}}
{{- end -}}

{{- /* (the pool API, the stable pool) each canary router splits from, which the check looks up: the Go twin of
fusion_helm/base/needs.py canary_pools. */ -}}
{{- define "fusioninfer.canaryPools" -}}
{{- $pools := list -}}
{{- range .Values.roles -}}
{{- if and (eq (toString .componentType) "router") (dig "canaryOf" "inferencePool" "" .) -}}
{{- $pools = append $pools (list (.poolAPIVersion | default "inference.networking.k8s.io/v1") .canaryOf.inferencePool) -}}
{{- end -}}
{{- end -}}
{{- $pools | toJson -}}
{{- end -}}
