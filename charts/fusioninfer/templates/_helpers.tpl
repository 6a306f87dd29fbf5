{{/* The InferenceService's name: values.name, else the release name. */}}
{{- define "fusioninfer.name" -}}
{{- default .Release.Name .Values.name -}}
{{- end -}}

{{/* Labels for every object of the release (never for pod templates: a changed label restarts pods). */}}
{{- define "fusioninfer.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Whether the post-renderer will gang-schedule the service (see docs/gang-scheduling.md). */}}
{{- define "fusioninfer.gangScheduled" -}}
{{- $gang := false -}}
{{- range .Values.roles -}}
{{- if or .multinode (has .componentType (list "prefiller" "decoder")) -}}{{- $gang = true -}}{{- end -}}
{{- end -}}
{{- with .Values.gangSchedule -}}{{- $gang = ne (toString (dig "enable" true .)) "false" -}}{{- end -}}
{{- $gang -}}
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
