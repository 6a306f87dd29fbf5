{{- define "bbr.name" -}}{{ printf "%s-bbr" .Release.Name | trunc 63 | trimSuffix "-" }}{{- end -}}
{{- define "bbr.labels" -}}
app.kubernetes.io/name: fusioninfer-bbr
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | quote }}
{{- end -}}
{{- define "bbr.selector" -}}
app.kubernetes.io/name: fusioninfer-bbr
app.kubernetes.io/instance: {{ .Release.Name | quote }}
{{- end -}}
{{- define "bbr.models.labels" -}}
app.kubernetes.io/name: fusioninfer-gateway-models
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | quote }}
{{- end -}}
{{- define "bbr.models.selector" -}}
app.kubernetes.io/name: fusioninfer-gateway-models
app.kubernetes.io/instance: {{ .Release.Name | quote }}
{{- end -}}
