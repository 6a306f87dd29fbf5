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
