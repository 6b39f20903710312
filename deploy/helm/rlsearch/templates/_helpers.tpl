{{/* Name prefix of every object: the release name, or <release>-rlsearch when it lacks "rlsearch". */}}
{{- define "rlsearch.fullname" -}}
{{- if contains "rlsearch" .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-rlsearch" .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "rlsearch.labels" -}}
app.kubernetes.io/name: rlsearch
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "rlsearch.selector" -}}
app.kubernetes.io/name: rlsearch
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "rlsearch.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* The router's --shards URL: the headless Service over every shard pod (each answers with its shard). */}}
{{- define "rlsearch.shardsURL" -}}
http://{{ include "rlsearch.fullname" . }}-shards.{{ .Release.Namespace }}.svc.cluster.local:{{ .Values.port }}
{{- end -}}

{{/* Probes on /healthz: ready only once the server listens, which is after its index is open. */}}
{{- define "rlsearch.probes" -}}
readinessProbe:
  httpGet: {path: /healthz, port: http}
  periodSeconds: 5
  timeoutSeconds: 3
  failureThreshold: 2
livenessProbe:
  httpGet: {path: /healthz, port: http}
  periodSeconds: 10
  timeoutSeconds: 5
  failureThreshold: 6
{{- end -}}
